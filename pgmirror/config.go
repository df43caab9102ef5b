package pgmirror

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Defaults of Config's fields.
const (
	DefaultSchema            = "invoicing_mirror"
	DefaultPoolSize          = 16
	DefaultHandlerPoolSize   = 4
	DefaultPrefetch          = 8
	DefaultBatchSize         = 500
	DefaultCoalesceWindow    = 250 * time.Millisecond
	DefaultWorkers           = 4
	DefaultFetchers          = 16
	DefaultPollInterval      = 100 * time.Millisecond
	DefaultFetchLease        = 2 * time.Minute
	DefaultReconcileInterval = time.Hour
	// DefaultInboxRetention keeps processed deliveries a week: far past the
	// service's last retry (about 27 hours after the first attempt), so a
	// late retry is still recognised as a copy.
	DefaultInboxRetention = 7 * 24 * time.Hour
	// DefaultClosingPasses bounds the walks a backfill makes after its first
	// when its table holds fewer records than the service counts.
	DefaultClosingPasses = 3
	// DefaultChangeRetention keeps the change feed's rows 30 days.
	DefaultChangeRetention = 30 * 24 * time.Hour
	// DefaultBusiness names the business of Config.Client when
	// Config.Business is empty.
	DefaultBusiness = "default"
	// DefaultWalkers is how many businesses a replica backfills or
	// reconciles at once.
	DefaultWalkers = 4
	// MaxWalkers bounds Config.Walkers: each walker holds a connection.
	MaxWalkers = 64
	// MaxPartitions bounds Config.Partitions.
	MaxPartitions = 1024
)

// Config configures a Mirror. Zero fields take their default.
type Config struct {
	// Client reads the service: build it with invoicing.NewClient (which
	// reads INVOICING_BASE_URL and INVOICING_API_KEY when given ""). Its
	// retry policy applies to every request; the mirror adds its own
	// backoff on top, so a 429 or a 5xx never ends a run. Required.
	//
	// Without Keys the mirror serves one business, Business, with the
	// Client's own API key. With Keys it serves the businesses recorded in
	// the database (see Businesses), each call made with its business's key
	// (invoicing.WithAPIKey): the Client then only gives the base URL, the
	// transport, the retry policy and the middleware, and its own key is
	// never used.
	Client *invoicing.Client
	// Business names the business of Client's key, in every row the mirror
	// writes for it (DefaultBusiness). It also names the business that the
	// rows of a mirror made before businesses existed (schema version 4 and
	// below) belong to when Migrate upgrades it, with or without Keys.
	// Letters, digits, '_', '-' and '.', at most 64.
	Business string
	// Budget is the ceiling of Business's requests per second to the
	// service, summed over every replica; 0 (DefaultBudget) for none. The
	// rate adapts below it: it starts at the ceiling (MaxAdaptive without
	// one), drops on a 429 or a Retry-After to AdaptiveBackoff of the rate
	// it was sending at, and creeps back up while the service answers
	// (AdaptiveCreep). A business added with Businesses.Add has its own.
	Budget float64
	// BudgetTotal, when positive, bounds the requests per second of every
	// business of the mirror together, summed over every replica (an
	// application's limit across its tenants); 0: none.
	BudgetTotal float64
	// Keys, when set, makes the mirror serve the businesses recorded in the
	// database (Businesses) rather than Business alone: it opens the API
	// keys and webhook secrets they are stored sealed with. Parse it from
	// the environment with ParseKeyring (EnvKeys). Serve
	// Mirror.BusinessHandler rather than Handler.
	Keys *Keyring
	// WebhookOptions are options of every business's Verifier, with
	// Config.Keys (BusinessHandler): webhooks.WithTolerance, say. Their
	// secrets come from the business (Businesses.Add).
	WebhookOptions []webhooks.Option
	// Walkers is how many businesses this replica backfills or reconciles
	// at once (DefaultWalkers, at most MaxWalkers): a business's walk is
	// one at a time, and the businesses take turns. The main pool has one
	// connection more per walker (each walk holds an advisory lock on its
	// own connection), on top of PoolSize.
	Walkers int
	// Partitions, when positive, has Migrate hash-partition by business,
	// into that many partitions (PostgreSQL's PARTITION BY HASH), every
	// table of the schema that has a business column: the records, their
	// lines, the mirror's own state, the change feed and the inbox. An
	// unpartitioned mirror is partitioned in place, its rows, keys,
	// indexes, grants and views kept, in Migrate's transaction (the tables
	// are locked, and their rows copied, meanwhile: stop the replicas, or
	// expect them to wait). 0 leaves the tables as they are; a number other
	// than the one a partitioned mirror has is refused. At most
	// MaxPartitions. Every statement of the event, backfill and
	// reconciliation paths reads and writes one business's partition (see
	// the README's "Ready to distribute").
	Partitions int
	// Schema is the PostgreSQL schema holding the mirror's tables and
	// pginbox's inbox table (DefaultSchema). Letters, digits and
	// underscores, not starting with a digit.
	Schema string
	// Logger receives the mirror's logs: progress and corrections at Info,
	// retried failures at Warn, failures that need a person at Error. Nil
	// logs nothing. No log line holds a secret or a record's content.
	Logger *slog.Logger
	// PoolSize is the number of connections of the mirror's pool
	// (DefaultPoolSize), which the Workers, the fetchers, the backfill and
	// the reconciler share: a Worker holds one while it records a
	// delivery's fetches, a fetcher while it claims and while it writes
	// (not while it waits on the service), the backfill and the reconciler
	// two each while they run.
	PoolSize int32
	// HandlerPoolSize is the number of connections of the Handler's pool
	// (DefaultHandlerPoolSize): a pool of its own, as pginbox advises, so
	// that storing a delivery never waits for a connection the rest holds;
	// one per delivery stored at once. The database's max_connections must
	// cover the replicas times PoolSize plus Walkers plus HandlerPoolSize.
	HandlerPoolSize int32
	// Prefetch is the number of list pages the backfill and the reconciler
	// fetch ahead (invoicing.WithPrefetch; DefaultPrefetch).
	Prefetch int
	// BatchSize is the number of records the backfill and the reconciler
	// write per transaction (DefaultBatchSize). With Prefetch it bounds
	// their memory: at most Prefetch+1 pages and one batch.
	BatchSize int
	// CoalesceWindow is how long a record named by an event waits before it
	// is fetched, so that a burst of events for it causes one fetch
	// (DefaultCoalesceWindow). Negative: fetch at once.
	CoalesceWindow time.Duration
	// Workers is the number of webhook deliveries processed at once
	// (pginbox.Worker.Concurrency; DefaultWorkers).
	Workers int
	// Fetchers is the number of records fetched at once after events
	// (DefaultFetchers). A fetcher waits on the service most of the time
	// and holds a database connection only to claim and to write: at 20 ms
	// a request, 16 keep up with a few hundred events a second.
	Fetchers int
	// PollInterval is how long an idle Worker or fetcher waits before it
	// looks for work again (DefaultPollInterval).
	PollInterval time.Duration
	// FetchLease is how long a fetcher holds a record to fetch before
	// another may take it over, should the first have died
	// (DefaultFetchLease). A fetch is cut off at half of it.
	FetchLease time.Duration
	// ReconcileInterval is the time between reconciliations, counted from
	// the end of the last one by any replica (DefaultReconcileInterval).
	ReconcileInterval time.Duration
	// InboxRetention is how long processed webhook deliveries stay in the
	// inbox table; every replica deletes older ones every minute (and
	// Reconcile once)
	// (DefaultInboxRetention). Negative: keep them all. Deliveries parked as
	// failed are kept for inspection.
	InboxRetention time.Duration
	// InboxMaxPending is the number of webhook deliveries due in the inbox
	// (stored, not yet turned into fetches) at which the webhook endpoint
	// answers 503 with Retry-After instead of storing more, until the
	// Workers catch up; the service retries the deliveries it refused
	// (pginbox.WithBackpressure). 0: DefaultInboxMaxPending; negative: no
	// limit.
	InboxMaxPending int
	// InboxMaxLag is how long the oldest due delivery may have waited for
	// a Worker before the webhook endpoint answers 503 with Retry-After, as
	// for InboxMaxPending. 0: DefaultInboxMaxLag; negative: no limit.
	InboxMaxLag time.Duration
	// ClosingPasses bounds the extra walks of a backfill whose table holds
	// fewer records than the service counts (DefaultClosingPasses).
	// Negative: none.
	ClosingPasses int
	// OnReconciled, when set, is called after a reconciliation walked a
	// resource, with the number of rows it inserted or corrected: a hook
	// for a metric. It must not block.
	OnReconciled func(resource string, corrected int)
	// OnProgress, when set, is called after each batch the backfill writes.
	// It must not block.
	OnProgress func(Progress)

	// The data path.

	// ChangeRetention is how long the change feed (mirror_changes, see
	// Mirror.Changes) keeps a change; every replica deletes older ones
	// every minute (and Reconcile once)
	// (DefaultChangeRetention). Negative: keep them all.
	ChangeRetention time.Duration
	// DisableChangeFeed, when true, writes no change to mirror_changes (and
	// sends no NOTIFY): for a mirror nobody reads changes from, which saves
	// the feed's cost on every write (see the package's figures).
	DisableChangeFeed bool
	// Selection is what the mirror keeps of the records of the business of
	// Config.Client: the resources it mirrors and the members it never
	// stores (see Selection). The zero Selection keeps everything. Hashing
	// members needs a keyring: with Keys, each business's Selection,
	// hashes included, is given to Businesses.Add instead, and this one
	// must be zero.
	Selection Selection
	// HistoryRetention is how long the history keeps a version after it
	// stopped being the current one (see History in the package
	// documentation); every replica deletes older ones every minute (and
	// Reconcile once). 0 or negative: keep them all (the default).
	HistoryRetention time.Duration
	// DisableHistory, when true, keeps no version a write replaces: the
	// history tables stay empty, and the _as_of functions know only the
	// current versions.
	DisableHistory bool
	// Clock, when set, is the mirror's clock for the instants it stamps
	// itself in the history: when a version of a record without updated_at
	// nor created_at began (when the mirror wrote it), and when a record
	// was marked deleted (mirror_deleted_at). Nil: time.Now.
	Clock func() time.Time
	// AllowMassDeletion lets a reconciliation mark deleted more than half
	// of a table's rows (of a table of at least MassDeletionMinRows) at
	// once. Without it such a reconciliation marks nothing and fails with
	// ErrMassDeletion, since it usually means a different business behind
	// the API key; set it, for one run, when the deletions are real.
	AllowMassDeletion bool

	// Operations.

	// Metrics, when set, receives the mirror's Prometheus metrics (see
	// Metrics): build it with NewMetrics, give its Middleware to the Client
	// and register it. One Metrics serves one Mirror. Nil: none.
	Metrics *Metrics
}

// Progress is the state of the backfill of one resource.
type Progress struct {
	// Business is the name of the business being backfilled.
	Business string
	// Resource is the resource's name, such as "invoices".
	Resource string
	// Pass is 1 for the first walk, more for closing passes.
	Pass int
	// Listed is how many records the backfill's walks have written so far
	// (a page read again, after a stop or in a closing pass, counts again).
	Listed int
	// Total is the number of records the service counted when the pass
	// began.
	Total int
}

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// withDefaults checks cfg and returns a copy with the defaults filled in.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Client == nil {
		return cfg, errors.New("pgmirror: Config.Client is nil")
	}
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	setDefault(&cfg.Business, DefaultBusiness)
	if err := checkBusinessName(cfg.Business); err != nil {
		return cfg, err
	}
	setDefault(&cfg.Walkers, DefaultWalkers)
	if cfg.Walkers > MaxWalkers {
		return cfg, fmt.Errorf("pgmirror: Config.Walkers %d is above %d", cfg.Walkers, MaxWalkers)
	}
	if err := cfg.Selection.check(); err != nil {
		return cfg, err
	}
	if cfg.Keys != nil && !cfg.Selection.IsZero() {
		return cfg, errors.New("pgmirror: Config.Selection is the business of Config.Client's; with Config.Keys, give each business's to Businesses.Add")
	}
	if cfg.Keys == nil && len(cfg.Selection.Hash) > 0 {
		return cfg, errors.New("pgmirror: hashing members needs a keyring: serve the business from the database (Config.Keys, invoicing-mirror businesses add --hash)")
	}
	if cfg.Partitions < 0 || cfg.Partitions > MaxPartitions {
		return cfg, fmt.Errorf("pgmirror: Partitions %d: between 0 and %d", cfg.Partitions, MaxPartitions)
	}
	if !schemaName.MatchString(cfg.Schema) {
		return cfg, fmt.Errorf("pgmirror: schema name %q: use letters, digits and underscores (at most 63), not starting with a digit", cfg.Schema)
	}
	if cfg.PoolSize < 0 || cfg.HandlerPoolSize < 0 || cfg.Prefetch < 0 || cfg.BatchSize < 0 || cfg.Workers < 0 || cfg.Fetchers < 0 ||
		cfg.PollInterval < 0 || cfg.FetchLease < 0 || cfg.ReconcileInterval < 0 || cfg.Budget < 0 || cfg.BudgetTotal < 0 || cfg.Walkers < 0 {
		return cfg, errors.New("pgmirror: negative Config field")
	}
	if cfg.Prefetch > invoicing.MaxPrefetch {
		return cfg, fmt.Errorf("pgmirror: Config.Prefetch %d is above %d", cfg.Prefetch, invoicing.MaxPrefetch)
	}
	setDefault(&cfg.PoolSize, DefaultPoolSize)
	setDefault(&cfg.HandlerPoolSize, DefaultHandlerPoolSize)
	setDefault(&cfg.Prefetch, DefaultPrefetch)
	setDefault(&cfg.BatchSize, DefaultBatchSize)
	setDefault(&cfg.CoalesceWindow, DefaultCoalesceWindow)
	if cfg.CoalesceWindow < 0 {
		cfg.CoalesceWindow = 0
	}
	setDefault(&cfg.Workers, DefaultWorkers)
	setDefault(&cfg.Fetchers, DefaultFetchers)
	setDefault(&cfg.PollInterval, DefaultPollInterval)
	setDefault(&cfg.FetchLease, DefaultFetchLease)
	setDefault(&cfg.ReconcileInterval, DefaultReconcileInterval)
	setDefault(&cfg.InboxRetention, DefaultInboxRetention)
	setDefault(&cfg.ClosingPasses, DefaultClosingPasses)
	setDefault(&cfg.ChangeRetention, DefaultChangeRetention)
	if cfg.ClosingPasses < 0 {
		cfg.ClosingPasses = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return cfg, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}
