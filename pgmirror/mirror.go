package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
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
	cfg     Config
	pool    *pgxpool.Pool // everything but the Handler
	inserts *pgxpool.Pool // the Handler's
	log     *slog.Logger
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
// cfg.HandlerPoolSize connections at most, the other cfg.PoolSize. It
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
	pool, err := open(cfg.PoolSize)
	if err != nil {
		return nil, err
	}
	inserts, err := open(cfg.HandlerPoolSize)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &Mirror{cfg: cfg, pool: pool, inserts: inserts, log: cfg.Logger}, nil
}

// Close closes the Mirror's pools. Stop Run (end its context) and the
// server of the Handler first.
func (m *Mirror) Close() {
	m.inserts.Close()
	m.pool.Close()
}

// Pool returns the Mirror's main pool (not the Handler's), whose
// connections work in the mirror's schema.
func (m *Mirror) Pool() *pgxpool.Pool { return m.pool }

// Schema returns the name of the mirror's schema.
func (m *Mirror) Schema() string { return m.cfg.Schema }

// schemaIdent is the schema's name quoted for SQL.
func (m *Mirror) schemaIdent() string { return pgx.Identifier{m.cfg.Schema}.Sanitize() }

// lockKey names an advisory lock of this schema's mirror; SQL hashes it
// with hashtextextended into a bigint key.
func (m *Mirror) lockKey(purpose string) string { return "pgmirror:" + m.cfg.Schema + ":" + purpose }

// Handler returns the webhook endpoint: a pginbox.Handler, on a pool of
// its own, that verifies each delivery with v and stores it in the inbox
// table before it answers 200 (500 when the database does not store it in
// pginbox.DefaultHandlerTimeout), so that no acknowledged delivery is lost. Serve it from the first second,
// before and during the backfill; Run's Workers turn the stored deliveries
// into fetches.
func (m *Mirror) Handler(v *webhooks.Verifier) http.Handler {
	return pginbox.Handler(m.inserts, v, pginbox.WithLogger(m.log))
}

// Run keeps the mirror current until ctx ends: it migrates, starts the
// Workers (stored deliveries to fetch requests) and the fetchers, backfills
// whatever was never backfilled (resuming a stopped backfill), then runs the
// reconciler every ReconcileInterval. It returns nil once ctx ends and the
// work in progress (a batch, a fetch, a delivery) is finished; it returns an
// error at once for a failed migration and for a backfill failure that
// retrying cannot mend (such as a refused API key). Every replica runs Run;
// they share the work through the database.
func (m *Mirror) Run(ctx context.Context) error {
	if err := m.Migrate(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { m.RunWorkers(ctx) })
	wg.Go(func() { m.RunFetchers(ctx) })

	err := m.Backfill(ctx)
	if err == nil {
		m.RunReconciler(ctx)
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
func (m *Mirror) RunWorkers(ctx context.Context) {
	w := &pginbox.Worker{
		Pool:         m.pool,
		ProcessTx:    m.enqueue,
		Concurrency:  m.cfg.Workers,
		PollInterval: m.cfg.PollInterval,
		// Recording a delivery's fetches is one insert: a failure is the
		// database's, worth trying again soon.
		Backoff: func(failures int) time.Duration { return min(time.Second<<min(failures-1, 6), time.Minute) },
		Logger:  m.log,
	}
	if err := w.Run(ctx); err != nil {
		m.log.ErrorContext(ctx, "pgmirror: webhook workers", "error", err.Error())
	}
}
