package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// A Mirror keeps a PostgreSQL schema equal to the business's data on the
// service. Every replica of a receiver opens its own; they share the
// database. Its methods are safe for concurrent use.
type Mirror struct {
	cfg      Config
	pool     *pgxpool.Pool // everything but the Handler
	inserts  *pgxpool.Pool // the Handler's
	log      *slog.Logger
	db       *dependency      // PostgreSQL, as the loops see it
	tenants  *tenants         // the businesses it serves
	counters *stats           // what this process wrote, for the metrics
	metrics  *Metrics         // nil without Config.Metrics
	inbox    *pginbox.Metrics // the Handler's and the Workers' figures
	migrated atomic.Bool      // Migrate succeeded: the Handler may store deliveries
	pruned   atomic.Int64     // when this replica last applied the retentions (Unix nanoseconds)
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
	m := &Mirror{cfg: cfg, pool: pool, inserts: inserts, log: cfg.Logger, inbox: pginbox.NewMetrics(inserts),
		db: newDependency("PostgreSQL", cfg.Logger), counters: newStats(), tenants: newTenants()}
	if cfg.Keys == nil {
		t := m.newTenant(cfg.Business, cfg.Budget)
		t.static = true
		t.api = newDependency("the API", cfg.Logger) // its lines, as before businesses, name none
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

// Close closes the Mirror's pools. Stop Run (end its context) and the
// server of the Handler first.
func (m *Mirror) Close() {
	for _, t := range m.tenantList() {
		t.end()
	}
	m.metrics.detach(m)
	m.inserts.Close()
	m.pool.Close()
}

// InboxMetrics returns the Prometheus collector of the mirror's webhook
// inbox (see pginbox.Metrics, invoicing_pginbox_...): the deliveries its
// Handler and Workers counted by outcome, those in flight, the Workers'
// database errors, and the inbox's depth and oldest pending age read at
// scrape time. Register it beside Config.Metrics.
func (m *Mirror) InboxMetrics() *pginbox.Metrics { return m.inbox }

// Pool returns the Mirror's main pool (not the Handler's), whose
// connections work in the mirror's schema.
func (m *Mirror) Pool() *pgxpool.Pool { return m.pool }

// Schema returns the name of the mirror's schema.
func (m *Mirror) Schema() string { return m.cfg.Schema }

// lockKey names an advisory lock of this schema's mirror; SQL hashes it
// with hashtextextended into a bigint key.
func (m *Mirror) lockKey(purpose string) string { return lockKeyOf(m.cfg.Schema, purpose) }

// lockKeyOf is the lock key of purpose in schema's mirror.
func lockKeyOf(schema, purpose string) string { return "pgmirror:" + schema + ":" + purpose }

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

// inboxOptions are the options of the Handlers' pginbox handler.
func (m *Mirror) inboxOptions() []pginbox.HandlerOption {
	return []pginbox.HandlerOption{pginbox.WithMetrics(m.inbox), pginbox.WithLogger(m.databaseErrorsTo(func(ctx context.Context, err error) {
		m.db.failed(ctx, err)
	}))}
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
		store.ServeHTTP(sw, r)
		if sw.status == http.StatusOK { // stored, or found stored: the database answered
			m.db.ok(r.Context())
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
// key and base URL with one request (CheckAPI) and waits for the database,
// both with backoff and one log line while they are away, then migrates.
// When the backfill is already complete, it then checks, before anything
// is written, that the service still shows the tables' records (as a
// reconciliation does first, see ErrMassDeletion): events would otherwise
// merge another business's records behind a changed API key until the
// first reconciliation. It then starts the Workers (stored deliveries to
// fetch requests) and the fetchers, backfills whatever was never
// backfilled (resuming a stopped backfill; then it logs "pgmirror:
// backfill complete"), and runs the reconciler every ReconcileInterval. It returns nil once ctx ends and the
// work in progress (a batch, a fetch, a delivery) is finished; it returns an
// error at once for a key or base URL the service refuses (before any
// schema is created), a database that refuses the connection itself (a
// wrong password, no such database), a failed migration, a backfill
// failure that retrying cannot mend, and, at startup or in a
// reconciliation, most of a table's records gone from the service
// (ErrMassDeletion, see RunReconciler; never with Config.AllowMassDeletion). Every
// replica runs Run; they share the work through the database.
func (m *Mirror) Run(ctx context.Context) error {
	if err := m.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { m.RunWorkers(ctx) })
	wg.Go(func() { m.RunFetchers(ctx) })
	if m.cfg.Keys != nil {
		wg.Go(func() { m.watchBusinesses(ctx) })
	}

	start := time.Now()
	err := m.Backfill(ctx)
	if err == nil && ctx.Err() == nil {
		m.log.InfoContext(ctx, "pgmirror: backfill complete", "took", time.Since(start).Round(time.Millisecond).String())
		err = m.RunReconciler(ctx)
	}
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// RunWorkers turns the deliveries the Handler stored into requests to fetch
// the records their events name, until ctx ends (Config.Workers at a time,
// on any number of replicas: pginbox claims each delivery with SKIP
// LOCKED). Each delivery is marked processed in the transaction that records
// its requests, so none is lost or handled twice. Run runs it.
//
// When the database fails, the Workers are stopped (their deliveries in
// progress are rolled back, to be claimed again) and one loop waits for the
// database with backoff; then they start again. A failure while the
// database answers (a statement that fails) is logged, and the Workers
// start again after a backoff.
func (m *Mirror) RunWorkers(ctx context.Context) {
	restarts := 0 // restarts in a row after a failure while the database answered
	for ctx.Err() == nil {
		wctx, stop := context.WithCancel(ctx)
		var mu sync.Mutex
		var failure error // the first database failure the Workers logged
		w := &pginbox.Worker{
			Pool:         m.pool,
			Metrics:      m.inbox,
			ProcessTx:    m.enqueue,
			Concurrency:  m.cfg.Workers,
			PollInterval: m.cfg.PollInterval,
			// Recording a delivery's fetches is one insert: a failure is the
			// database's, worth trying again soon.
			Backoff: func(failures int) time.Duration { return min(time.Second<<min(failures-1, 6), time.Minute) },
			Logger: m.databaseErrorsTo(func(_ context.Context, err error) {
				mu.Lock()
				if failure == nil {
					failure = err
				}
				mu.Unlock()
				stop()
			}),
		}
		started := time.Now()
		err := w.Run(wctx)
		stop()
		if err != nil { // misconfigured: starting again would not mend it
			m.log.ErrorContext(ctx, "pgmirror: webhook workers", "error", err.Error())
			return
		}
		if ctx.Err() != nil {
			return
		}
		if perr := m.ping(ctx); unreachable(perr) {
			restarts = 0
			m.db.failed(ctx, perr)
			if m.waitFor(ctx, m.db, m.ping, func(error) bool { return false }) != nil {
				return
			}
			continue
		}
		if time.Since(started) > maxDependencyBackoff {
			restarts = 0
		}
		restarts++
		wait := retryWait(restarts)
		m.log.ErrorContext(ctx, "pgmirror: webhook workers failed; starting them again", "retry_in", wait.String(), "error", oneLine(failure))
		sleep(ctx, wait)
	}
}

// start checks the API, waits for the database, migrates, and guards a
// backfilled mirror against another business (see guardStart); with
// Config.Keys, it loads the businesses instead of checking the API.
func (m *Mirror) start(ctx context.Context) error {
	static := m.static()
	if static != nil {
		if err := m.waitFor(ctx, static.api, m.CheckAPI, permanent); err != nil {
			return err
		}
	}
	if err := m.waitFor(ctx, m.db, m.ping, func(err error) bool { return !unreachable(err) }); err != nil {
		return fmt.Errorf("pgmirror: connecting to the database: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return err
	}
	if static == nil {
		return nil // Migrate loaded the businesses
	}
	return static.guardStart(ctx)
}

// guardStart runs guardTables when the backfill is complete (a backfill
// in progress adds to its own tables, and the first reconciliation guards
// them): it returns its ErrMassDeletion, waits with backoff while the
// database or the service is away, and logs any other failure and goes
// on, leaving the check to the next reconciliation.
func (m *tenant) guardStart(ctx context.Context) error {
	var away *dependency // the dependency the last attempt failed on
	for n := 1; ; n++ {
		done, err := m.backfillDone(ctx)
		if err == nil && done {
			err = m.guardTables(ctx)
		}
		if away != nil && m.dependencyOf(err) != away {
			away.ok(ctx)
		}
		dep := m.dependencyOf(err)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrMassDeletion):
			return err
		case dep == nil:
			m.log.WarnContext(ctx, "pgmirror: could not check at startup that the service still shows the mirror's records; "+
				"the first reconciliation will", "error", oneLine(err))
			return nil
		}
		away = dep
		dep.failed(ctx, err)
		if !dep.sleep(ctx, retryWait(n)) {
			return ctx.Err()
		}
	}
}

// waitFor calls try until it succeeds, reporting each outcome to dep and
// waiting longer after each failure (retryWait). It returns try's error
// at once when fatal says that waiting cannot mend it, and ctx's error
// once ctx ends.
func (m *Mirror) waitFor(ctx context.Context, dep *dependency, try func(context.Context) error, fatal func(error) bool) error {
	for n := 1; ; n++ {
		err := try(ctx)
		switch {
		case err == nil:
			dep.ok(ctx)
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case fatal(err):
			return err
		}
		dep.failed(ctx, err)
		if !dep.sleep(ctx, retryWait(n)) {
			return ctx.Err()
		}
	}
}

// pingTimeout bounds one look at the database, which may hang.
const pingTimeout = 10 * time.Second

// ping checks that the database answers.
func (m *Mirror) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return m.pool.Ping(ctx)
}

// CheckAPI makes one request to the service, a one-record list, for each
// business the mirror serves, to check the Client's base URL and the
// business's API key, and returns nil when the service answers them. Its
// error says whether the service refused a request (a wrong key or base
// URL: permanent, see the *invoicing.Error it wraps) or could not be
// reached. Run calls it before it creates any schema, without Config.Keys;
// call it before Migrate to leave nothing behind on a wrong key.
func (m *Mirror) CheckAPI(ctx context.Context) error {
	var errs []error
	for _, t := range m.tenantList() {
		if err := t.checkAPI(ctx); err != nil {
			if !t.static {
				err = fmt.Errorf("business %s: %w", t.name, err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkAPI is CheckAPI for the business.
func (m *tenant) checkAPI(ctx context.Context) error {
	// Its key only: the budget lives in the schema, which may not exist yet.
	_, err := allResources[0].total(ctx, m.cfg.Client, m.key...)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case permanent(err):
		return fmt.Errorf("pgmirror: the API at %s refused the mirror's first request (check the base URL and the API key): %w",
			m.cfg.Client.BaseURL(), err)
	}
	return fmt.Errorf("pgmirror: the API at %s is unreachable: %w", m.cfg.Client.BaseURL(), err)
}

// BackfillDone reports whether the backfill of every resource of every
// business the mirror serves is complete.
func (m *Mirror) BackfillDone(ctx context.Context) (bool, error) {
	for _, t := range m.tenantList() {
		if done, err := t.backfillDone(ctx); err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

// RunReconciler runs the businesses' walks until ctx ends: their
// reconciliations every ReconcileInterval, and the backfill of a business
// added meanwhile (see runWalks). Every replica may run it: a business's
// interval is counted from the end of its last reconciliation by any of
// them (recorded in mirror_reconcile), one replica reconciles a business at
// a time (an advisory lock), and none before its backfill is complete; the
// first reconciliations of businesses backfilled together are spread over
// the interval. It looks for walks due every tenth of the interval (at
// least every 100 ms, at most every second). While the database or the
// service is away it waits longer after each failure (a second, doubling,
// at most about 30 seconds), and the dependency logs one line when it goes
// and one when it is back, not one per failure; the reconciliation it cut
// short is due again at once. Another failed reconciliation is logged, and
// the next one is due an interval later. For the business of
// Config.Client, a reconciliation that found most of a table's records
// gone (ErrMassDeletion) makes RunReconciler return its error, for the
// mirror to stop until the operator looks; a business of the database is
// paused instead (see Status). It returns nil when ctx ends.
func (m *Mirror) RunReconciler(ctx context.Context) error {
	return m.runWalks(ctx, false)
}

// databaseErrorsTo returns a logger for pginbox (its Workers and Handler
// log the database's failures at Error, and nothing else there): its Error
// records go to failed instead of the log; the others go to the mirror's
// log.
func (m *Mirror) databaseErrorsTo(failed func(context.Context, error)) *slog.Logger {
	return slog.New(&errorsTo{Handler: m.log.Handler(), failed: failed})
}

// errorsTo is the slog.Handler of databaseErrorsTo.
type errorsTo struct {
	slog.Handler
	failed func(context.Context, error)
}

func (h *errorsTo) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

func (h *errorsTo) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return h.Handler.Handle(ctx, r)
	}
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			msg = a.Value.String()
			return false
		}
		return true
	})
	h.failed(ctx, errors.New(msg))
	return nil
}

func (h *errorsTo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &errorsTo{Handler: h.Handler.WithAttrs(attrs), failed: h.failed}
}

func (h *errorsTo) WithGroup(name string) slog.Handler {
	return &errorsTo{Handler: h.Handler.WithGroup(name), failed: h.failed}
}
