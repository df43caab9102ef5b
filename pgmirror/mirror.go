package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// A Mirror keeps a PostgreSQL schema equal to the business's data on the
// service. Every replica of a receiver opens its own; they share the
// database. Its methods are safe for concurrent use.
type Mirror struct {
	cfg      Config
	store    *store.Store  // every statement, on the main pool (everything but the Handler)
	inserts  *pgxpool.Pool // the Handler's
	log      *slog.Logger
	db       *dependency      // PostgreSQL, as the loops see it
	tenants  *tenants         // the businesses it serves
	counters *stats           // what this process wrote, for the metrics
	metrics  *Metrics         // nil without Config.Metrics
	inbox    *pginbox.Metrics // the Handler's and the Workers' figures
	migrated atomic.Bool      // Migrate succeeded: the Handler may store deliveries
}

// Open connects to the database at databaseURL (a postgres:// URL or a
// key=value string, as pgx reads them) and returns a Mirror working in
// cfg.Schema. See New.
func Open(ctx context.Context, databaseURL string, cfg Config) (*Mirror, error) {
	pc, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: reading the database URL: %w", err) // pgx leaves the password out
	}
	return New(ctx, pc, cfg)
}

// New returns a Mirror with two pools of its own, built from copies of pc:
// their connections have the search_path set to cfg.Schema (so that
// pginbox's inbox table lives there too); the Handler's has
// cfg.HandlerPoolSize connections at most, the other cfg.PoolSize plus one
// per walker (cfg.Walkers), for the advisory lock each walk holds. It
// connects lazily; call Migrate before anything else, and Close when done.
func New(ctx context.Context, pc *pgxpool.Config, cfg Config) (*Mirror, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	open := func(size int32) (*pgxpool.Pool, error) {
		c := pc.Copy()
		c.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{cfg.Schema}.Sanitize()
		c.MaxConns = size
		pool, err := pgxpool.NewWithConfig(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("pgmirror: %w", err)
		}
		return pool, nil
	}
	// A walk holds a connection for its advisory lock as long as it runs:
	// one more per walker, so that walks never take the connections their
	// own work needs.
	pool, err := open(cfg.PoolSize + int32(cfg.Walkers))
	if err != nil {
		return nil, err
	}
	inserts, err := open(cfg.HandlerPoolSize)
	if err != nil {
		pool.Close()
		return nil, err
	}
	m := &Mirror{cfg: cfg, store: store.New(pool, cfg.Schema), inserts: inserts, log: cfg.Logger, inbox: pginbox.NewMetrics(inserts),
		db: newDependency("PostgreSQL", cfg.Logger), counters: newStats(), tenants: newTenants()}
	if cfg.Keys == nil { // a fleet of one: the business of the Client's own key
		t := m.newTenant(cfg.Business, cfg.Budget, cfg.Selection)
		t.stops = true
		m.tenants.set([]*tenant{t})
	}
	if cfg.Metrics != nil {
		if err := cfg.Metrics.attach(m); err != nil {
			m.Close()
			return nil, err
		}
		m.metrics = cfg.Metrics
	}
	return m, nil
}

// Close closes the Mirror's pools, once a notification of the change feed
// under way is sent. Stop Run (end its context) and the
// server of the Handler first.
func (m *Mirror) Close() {
	for _, t := range m.tenants.all() {
		t.end()
	}
	m.metrics.detach(m)
	m.store.WaitNotified()
	m.inserts.Close()
	m.store.Pool().Close()
}

// InboxMetrics returns the Prometheus collector of the mirror's webhook
// inbox (see pginbox.Metrics, invoicing_pginbox_...): the deliveries its
// Handler and Workers counted by outcome, those in flight, the Workers'
// database errors, and the inbox's depth and oldest pending age read at
// scrape time. Register it beside Config.Metrics.
func (m *Mirror) InboxMetrics() *pginbox.Metrics { return m.inbox }

// Pool returns the Mirror's main pool (not the Handler's), whose
// connections work in the mirror's schema.
func (m *Mirror) Pool() *pgxpool.Pool { return m.store.Pool() }

// Schema returns the name of the mirror's schema.
func (m *Mirror) Schema() string { return m.cfg.Schema }

// Handler returns the webhook endpoint of the business of Config.Client
// (without Config.Keys; see BusinessHandler otherwise): a pginbox.Handler,
// on a pool of its own, that verifies each delivery with v and stores it in the inbox
// table before it answers 200 (500 when the database does not store it in
// pginbox.DefaultHandlerTimeout), so that no acknowledged delivery is lost.
// Serve it from the first second, before and during the backfill; Run's
// Workers turn the stored deliveries into fetches. Until Migrate (or Run)
// has migrated the schema on this Mirror it answers 503, and the service
// retries. While the database fails, the deliveries it refuses are not
// logged one by one: the mirror logs one line when the database fails and
// one when it answers again. A delivery stored after an outage tells the
// mirror's loops waiting for the database that it is back.
func (m *Mirror) Handler(v *webhooks.Verifier) http.Handler {
	return m.storing(pginbox.Handler(m.inserts, v, m.inboxOptions()...))
}

// BusinessHandler returns the webhook endpoint of a mirror serving the
// businesses of the database (Config.Keys): one endpoint for all of them,
// to mount on a pattern with a {business} wildcard, such as
// "POST /webhooks/{business}", each business's webhooks in the service
// pointing at its own URL. A delivery is verified only with the secrets of
// the business its URL names (see Businesses.Add; every secret listed is
// accepted, for rotation) and stored in the inbox with it; a URL naming no
// business the mirror serves (removed, or never added) is answered 404.
// Otherwise it answers as Handler does. Businesses added or removed on any
// replica take effect within a second or so (a NOTIFY), at most a minute.
func (m *Mirror) BusinessHandler() http.Handler {
	return m.storing(pginbox.BusinessHandler(m.inserts, m.verifierOf, m.inboxOptions()...))
}

// inboxOptions are the options of the Handlers' pginbox handler: its
// refusals go to the log, its database failures to the supervisor's
// decision (they enter the mirror here).
func (m *Mirror) inboxOptions() []pginbox.HandlerOption {
	return []pginbox.HandlerOption{pginbox.WithMetrics(m.inbox), pginbox.WithLogger(m.log), m.backpressure(), pginbox.WithStoredBody(m.storedBody),
		pginbox.WithErrorHandler(func(ctx context.Context, err error) {
			m.failed(ctx, nil, "storing a delivery", &store.Error{Op: "storing a delivery", Err: err}, 1)
		})}
}

// storedBody is what the inbox keeps of a delivery: the body as received,
// or, for a business whose Selection names anything, what its inboxBody
// keeps.
func (m *Mirror) storedBody(ctx context.Context, d *webhooks.Delivery) ([]byte, error) {
	name := d.Business
	if name == "" { // Handler's: the business of Config.Client
		name = m.cfg.Business
	}
	t := m.tenants.named(name)
	if t == nil { // refused before, as unknown; kept as received otherwise
		return d.Body, nil
	}
	a, err := t.selection(ctx)
	if err != nil || a.sel == nil {
		return d.Body, err
	}
	return a.sel.inboxBody(d)
}

// storing answers 503 until the Mirror migrated, and tells the database's
// dependency when store stored a delivery.
func (m *Mirror) storing(store http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m.migrated.Load() {
			http.Error(w, "the mirror is starting", http.StatusServiceUnavailable)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		began := time.Now()
		store.ServeHTTP(sw, r)
		if sw.status == http.StatusOK { // stored, or found stored: the database answered
			m.db.ok(r.Context(), began)
		}
	})
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Run keeps the mirror current until ctx ends. It first checks the API
// key and base URL of Config.Client with one request (CheckAPI) and waits
// for the database, both with backoff and one log line while they are
// away, then migrates. When the backfill of Config.Client's business is
// already complete, it then checks, before anything is written, that the
// service still shows the tables' records (as a reconciliation does first,
// see ErrMassDeletion): events would otherwise merge another business's
// records behind a changed API key until the first reconciliation. It then
// runs the Workers (stored deliveries to fetch requests, RunWorkers), the
// fetchers (RunFetchers), the walks (backfills, resuming those stopped,
// then reconciliations every ReconcileInterval: RunReconciler; it logs
// "pgmirror: backfill complete" once every business is backfilled) and,
// with Config.Keys, the watch of the businesses. It returns nil once ctx
// ends and the work in progress (a batch, a fetch, a delivery) is
// finished; it returns an error at once for a key or base URL the service
// refuses (before any schema is created), a database that refuses the
// connection itself (a wrong password, no such database), a failed
// migration, and, for the business of Config.Client, a key the service
// refuses later or most of a table's records gone from the service
// (ErrMassDeletion, at startup or in a reconciliation; never with
// Config.AllowMassDeletion). A business of the database that fails so is
// paused instead (see Status). Every replica runs Run; they share the work
// through the database.
func (m *Mirror) Run(ctx context.Context) error {
	if err := m.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	sup := m.supervise(ctx)
	m.runWorkers(sup)
	m.runFetchers(sup)
	m.runWalks(sup, true)
	if m.cfg.Keys != nil {
		sup.loop("watching the businesses", nil, m.watchBusinesses)
	}
	return sup.wait()
}

// RunWorkers turns the deliveries the Handler stored into requests to fetch
// the records their events name, until ctx ends (Config.Workers at a time,
// on any number of replicas: pginbox claims each delivery with SKIP
// LOCKED). Each delivery is marked processed in the transaction that records
// its requests, so none is lost or handled twice. While the database fails
// they wait with backoff, the mirror logging one line when it goes and one
// when it is back. Run runs it.
func (m *Mirror) RunWorkers(ctx context.Context) {
	sup := m.supervise(ctx)
	m.runWorkers(sup)
	_ = sup.wait() // a loop of the Workers never stops the mirror
}

func (m *Mirror) runWorkers(sup *supervisor) {
	w := m.inboxWorker()
	for range m.cfg.Workers {
		sup.loop("processing the webhook inbox", nil, workStep(w, m.cfg.PollInterval))
	}
}

// RunFetchers fetches the records that events asked for, once their
// coalescing window has passed, until ctx ends, Config.Fetchers at a time,
// and returns once the fetches in progress are written. Any number of
// replicas may run it: each request is leased by one fetcher (SKIP LOCKED),
// and a lease whose fetcher died expires after FetchLease. A request that
// comes in while its record is being fetched makes the record be fetched
// again. A record whose fetch fails is tried again after a backoff (at most
// 5 minutes); the service's failures (a network error, a 5xx, a 429 storm)
// pause its business (see failed), and the database's make the fetchers
// wait; both are logged once when they start and once when they end. It
// returns once ctx ends, or once the service refuses the key of the
// business of Config.Client (Run then returns that error). Run runs it.
func (m *Mirror) RunFetchers(ctx context.Context) {
	sup := m.supervise(ctx)
	m.runFetchers(sup)
	_ = sup.wait() // Run reports a failure that stops the mirror
}

func (m *Mirror) runFetchers(sup *supervisor) {
	sup.loop("claiming records to fetch", nil, m.fetchStep(sup))
}

// RunReconciler runs the businesses' walks until ctx ends: the backfill of
// each business not backfilled yet (see Backfill), then its
// reconciliations every ReconcileInterval, and the backfill of a business
// added meanwhile; and, every minute, it deletes what is past its
// retention (Config.InboxRetention, Config.ChangeRetention). Every replica
// may run it: a business's interval is counted from the end of its last
// reconciliation by any of them (recorded in mirror_reconcile), one replica
// reconciles a business at a time (an advisory lock), and none before its
// backfill is complete; the first reconciliations of businesses backfilled
// together are spread over the interval. It looks for walks due every tenth
// of the interval (at least every 100 ms, at most every second). While the
// database or the service is away it waits longer after each failure (a
// second, doubling, at most about 30 seconds, or what a Retry-After asks),
// and the dependency logs one line when it goes and one when it is back,
// not one per failure; the business whose calls fail is paused meanwhile
// (every replica skips it), and the walk it cut short is due again once
// the pause ends. Another failed walk is logged. For the business of
// Config.Client, a refused key or a reconciliation that found most of a
// table's records gone (ErrMassDeletion) makes RunReconciler return its
// error, for the mirror to stop until the operator looks; a business of
// the database is paused instead (see Status). It returns nil when ctx
// ends.
func (m *Mirror) RunReconciler(ctx context.Context) error {
	sup := m.supervise(ctx)
	m.runWalks(sup, false)
	return sup.wait()
}

// runWalks starts the walks' loop, announcing the backfill's end or not,
// and the pruning's.
func (m *Mirror) runWalks(sup *supervisor, announce bool) {
	walks, wake := m.walkStep(sup, false, announce)
	sup.loop("walks", wake, walks)
	sup.loop("pruning", nil, m.pruneStep)
}

// start checks the API of the businesses known before the database
// (Config.Client's), waits for the database, migrates (with Config.Keys,
// loading the businesses), and guards a backfilled business of
// Config.Client against another business behind its key (see Run).
func (m *Mirror) start(ctx context.Context) error {
	var alone []*tenant // the businesses that stop the mirror: Config.Client's
	for _, t := range m.tenants.all() {
		if t.stops {
			alone = append(alone, t)
		}
	}
	for _, t := range alone {
		if err := m.retry(ctx, t, "checking the API", t.checkAPI); err != nil {
			return err
		}
	}
	if err := m.retry(ctx, nil, "connecting to the database", m.ping); err != nil {
		return fmt.Errorf("pgmirror: connecting to the database: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return err
	}
	for _, t := range alone {
		if err := m.retry(ctx, t, "checking that the service still shows the mirror's records", t.guardStart); err != nil {
			return err
		}
	}
	return nil
}

// retry calls fn until it succeeds, deciding each failure as every loop
// does (see failed): it returns the failure that must stop the mirror, or
// ctx's error once ctx ends.
func (m *Mirror) retry(ctx context.Context, t *tenant, what string, fn func(context.Context) error) error {
	for n := 1; ; n++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		wait, stop := m.failed(ctx, t, what, err, n)
		if stop != nil {
			return stop
		}
		if !m.db.sleep(ctx, wait, nil) {
			return ctx.Err()
		}
	}
}

// ping checks that the database answers within pingTimeout. A database
// that refuses the connection itself (a wrong password, no such database)
// must stop the mirror: waiting does not mend it.
func (m *Mirror) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	began := time.Now()
	err := m.store.Ping(ctx)
	if dbErr := (*store.Error)(nil); errors.As(err, &dbErr) && !dbErr.Away() {
		return stopWith(err)
	}
	if err == nil {
		m.db.ok(ctx, began)
	}
	return err
}

// guardStart runs guardTables when the backfill of the business is
// complete (a backfill in progress adds to its own tables, and the first
// reconciliation guards them).
func (t *tenant) guardStart(ctx context.Context) error {
	done, err := t.backfilled(ctx)
	if err != nil || !done {
		return err
	}
	return t.guardTables(ctx)
}

// CheckAPI makes one request to the service, a one-record list, for each
// business the mirror serves, to check the Client's base URL and the
// business's API key, and returns nil when the service answers them. Its
// error says whether the service refused a request (a wrong key or base
// URL: permanent, see the *invoicing.Error it wraps) or could not be
// reached. Run calls it before it creates any schema, without Config.Keys;
// call it before Migrate to leave nothing behind on a wrong key.
func (m *Mirror) CheckAPI(ctx context.Context) error {
	ts := m.tenants.all()
	var errs []error
	for _, t := range ts {
		if err := t.checkAPI(ctx); err != nil {
			if len(ts) > 1 {
				err = fmt.Errorf("business %s: %w", t.name, err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CheckBusinesses checks, without migrating or writing anything, each
// business the mirror would serve: that its sealed API key and webhook
// secrets open with Config.Keys (a business whose values do not open is
// not served), and that the service answers one request with its key (as
// CheckAPI). It returns each business's failure by name (nil: ready to
// serve). The schema must be at SchemaVersion (ErrNotMigrated otherwise).
func (m *Mirror) CheckBusinesses(ctx context.Context) (map[string]error, error) {
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	out := map[string]error{}
	m.tenants.loadMu.Lock()
	for name, err := range m.tenants.unopened {
		out[name] = err
	}
	m.tenants.loadMu.Unlock()
	for _, t := range m.tenants.all() {
		out[t.name] = t.checkAPI(ctx)
	}
	return out, nil
}

// checkAPI is CheckAPI for the business.
func (t *tenant) checkAPI(ctx context.Context) error {
	c := t.m.cfg.Client
	// Its key only: the budget lives in the schema, which may not exist yet.
	_, err := allResources[0].total(ctx, c, t.key...)
	switch {
	case err == nil:
		t.api.ok(ctx, time.Time{})
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case apiFailed(err, apiTransient):
		return fmt.Errorf("pgmirror: the API at %s is unreachable: %w", c.BaseURL(), err)
	}
	return fmt.Errorf("pgmirror: the API at %s refused the mirror's first request (check the base URL and the API key): %w",
		c.BaseURL(), err)
}

// BackfillDone reports whether the backfill of every resource of every
// business the mirror serves is complete.
func (m *Mirror) BackfillDone(ctx context.Context) (bool, error) {
	for _, t := range m.tenants.all() {
		if done, err := t.backfilled(ctx); err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

// Ready reports whether business has had its first complete copy (every
// resource backfilled once: announced by the log line "pgmirror: business
// ready" and a NOTIFY on pgmirror_ready_SCHEMA with its name). A business
// stays ready: a later backfill of a resource added, or a resync, does not
// make it unready. business "" asks for every business served
// (BackfillDone). It returns ErrNoSuchBusiness for a business the mirror
// neither serves nor holds a complete copy of.
func (m *Mirror) Ready(ctx context.Context, business string) (bool, error) {
	if business == "" {
		return m.BackfillDone(ctx)
	}
	ready, err := m.store.Ready(ctx, business)
	if err == nil && !ready && m.tenants.named(business) == nil {
		err = fmt.Errorf("%w: %s", ErrNoSuchBusiness, business)
	}
	return ready, err
}

// load makes the Mirror ready to read a migrated schema without migrating
// it: it checks that the schema is at SchemaVersion and, with Config.Keys,
// loads the businesses (once).
func (m *Mirror) load(ctx context.Context) error {
	if m.migrated.Load() {
		return nil
	}
	if err := m.store.CheckVersion(ctx); err != nil {
		return err
	}
	if m.cfg.Keys != nil {
		return m.loadBusinesses(ctx)
	}
	return nil
}

// Migrate creates the schema (Config.Schema) and brings its tables to
// SchemaVersion, then creates pginbox's inbox table in it, all in one
// transaction (see MigrateSchema); with Config.Keys it then loads the
// businesses to serve, else it applies Config.Selection to the business of
// Config.Client (rewriting what the mirror holds of it when it changed:
// see Selection). The Handlers store deliveries once it succeeded.
func (m *Mirror) Migrate(ctx context.Context) error {
	if err := m.store.Migrate(ctx, m.cfg.Business, m.cfg.Partitions, m.log); err != nil {
		return err
	}
	if m.cfg.Keys != nil {
		if err := m.loadBusinesses(ctx); err != nil {
			return err
		}
	} else if _, err := m.tenants.all()[0].selection(ctx); err != nil {
		return err
	}
	m.migrated.Store(true)
	return nil
}

// MigrateSchema creates schema in db and brings its tables to
// SchemaVersion, then creates pginbox's inbox table in it, all in one
// transaction: what Mirror.Migrate does, for a program that runs no Mirror
// (invoicing-mirror businesses). business names the business that the rows
// of a mirror made before businesses (version 4 and below) belong to
// (Config.Business; DefaultBusiness when ""). It is idempotent and safe when
// several replicas run it at once: a transaction-scoped advisory lock, per
// schema, makes them take turns, and each migration is recorded in
// mirror_migrations so that it runs once. Migrations never drop a mirrored
// record's table, column or row (they may replace keys and indexes). A
// database migrated by a newer version of this package (a higher version
// than SchemaVersion) is refused with an error rather than used.
func MigrateSchema(ctx context.Context, db *pgxpool.Pool, schema, business string) error {
	if !schemaName.MatchString(schema) {
		return fmt.Errorf("pgmirror: schema name %q: use letters, digits and underscores (at most 63), not starting with a digit", schema)
	}
	if business == "" {
		business = DefaultBusiness
	}
	if err := checkBusinessName(business); err != nil {
		return err
	}
	return store.New(db, schema).Migrate(ctx, business, 0, slog.New(slog.DiscardHandler))
}

// SchemaVersion is the version of the schema this package creates: the
// number of its migrations.
func SchemaVersion() int { return store.Version() }

// stopError is a failure that retrying cannot mend: it stops the mirror.
type stopError struct{ error }

func (e *stopError) Unwrap() error { return e.error }

// stopWith marks err as a failure that must stop the mirror.
func stopWith(err error) error { return &stopError{err} }
