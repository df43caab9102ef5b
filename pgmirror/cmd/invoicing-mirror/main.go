// Command invoicing-mirror keeps a PostgreSQL schema equal to a business's
// data on the Invoicing Service: it migrates the schema, backfills every
// record, serves the webhook endpoint that keeps the tables current, and
// reconciles periodically. Run as many replicas as you like against one
// database. See the package github.com/invoicing-api/invoicing-go/pgmirror.
//
//	INVOICING_BASE_URL=... INVOICING_API_KEY=... INVOICING_WEBHOOK_SECRET=... \
//	DATABASE_URL=postgres://... invoicing-mirror --listen :8080
//
// With --once it backfills (or, once backfilled, reconciles) and exits;
// "invoicing-mirror status" tells the state of a mirror, and exits 0 when it
// is healthy, 1 when it is degraded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const usage = `Usage: invoicing-mirror [flags]
       invoicing-mirror status [flags]       (see invoicing-mirror status --help)
       invoicing-mirror changes [flags]      (see invoicing-mirror changes --help)
       invoicing-mirror businesses COMMAND   (see invoicing-mirror businesses --help)
       invoicing-mirror resync [flags]       (see invoicing-mirror resync --help)
       invoicing-mirror verify [flags]       (see invoicing-mirror verify --help)
       invoicing-mirror doctor [flags]       (see invoicing-mirror doctor --help)
       invoicing-mirror deliveries COMMAND   (see invoicing-mirror deliveries --help)

Keeps a PostgreSQL schema equal to the business's data on the Invoicing
Service: invoices and their lines, quotes and their lines, items, clients,
suppliers, bills and their lines, accounts, tax codes, bank accounts and
bank transactions. It migrates the schema, backfills every record (resuming
a stopped backfill), serves the webhook endpoint that keeps the tables
current, and re-lists everything every --reconcile-interval to correct the
changes that raise no event. Any number of replicas may run against one
database. It stops cleanly on SIGINT or SIGTERM.

It first checks the API key and base URL with one request, before it creates
anything in the database. While the API or the database is away it waits
and retries with backoff, logging one line when it goes and one when it is
back (--once instead exits 1 when the API cannot be reached, and when it
has not finished within --timeout). On the --listen address, GET /healthz
answers 200 while the process runs and GET /readyz 200 once the backfill is
complete (503 before). With --metrics, Prometheus metrics are served at
/metrics on their own address.

Configuration comes from the environment (never printed):
  INVOICING_BASE_URL        the API's base URL, including /api/v1/external
  INVOICING_API_KEY         the API key
  INVOICING_WEBHOOK_SECRET  the webhook endpoint's signing secret (not needed with --once)
  DATABASE_URL              the PostgreSQL database, postgres://user:password@host:port/db
  INVOICING_MIRROR_KEYS     set to serve many businesses: the keys that seal their API
                            keys and secrets (see invoicing-mirror businesses --help).
                            INVOICING_API_KEY and INVOICING_WEBHOOK_SECRET are then not
                            used, and each business's webhook endpoint is --path/NAME.

With --once it ends with a line per business: copied, or not and why
(paused, refused, its backfill not complete).

Exit status:
  0  done (with --once: every business completely copied, or reconciled)
  1  a failure stopped it: the API or the database unreachable or
     refusing the connection, a failed migration, --timeout passed, the key
     of INVOICING_API_KEY refused or most of a table's records gone
  2  a usage mistake
  3  with --once: a business not completely copied (each named, and why)

Flags:
`

// Exit statuses.
const (
	exitOK         = 0
	exitError      = 1
	exitUsage      = 2
	exitIncomplete = 3
)

// noClientKey is the Client's own API key with INVOICING_MIRROR_KEYS: a
// placeholder, since every call carries its business's key.
const noClientKey = "unused-each-business-has-its-key"

// defaultOnceTimeout is --timeout's default.
const defaultOnceTimeout = 10 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	once              bool
	timeout           time.Duration
	listen, path      string
	metrics           string
	schema            string
	business          string
	budget            float64
	budgetTotal       float64
	walkers           int
	partitions        int
	reconcileInterval time.Duration
	prefetch          int
	coalesce          time.Duration
	fetchLease        time.Duration
	allowMassDeletion bool
	selection         pgmirror.Selection
	historyRetention  time.Duration
	disableHistory    bool
	logLevel          slog.Level
	inboxMaxPending   int
	inboxMaxLag       time.Duration
}

// run is the command, with its arguments, environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "status" {
		return status(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "changes" {
		return changes(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "businesses" {
		return businesses(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "resync" {
		return resync(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "verify" {
		return verify(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "doctor" {
		return doctor(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "deliveries" {
		return deliveries(ctx, args[1:], getenv, stdout, stderr)
	}
	var o options
	fs := flag.NewFlagSet("invoicing-mirror", flag.ContinueOnError)
	// Package flag prints nothing itself: a mistake is explained below,
	// with the usage of the one flag concerned rather than the whole help.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&o.once, "once", false, "backfill (or, when already backfilled, reconcile once) and exit")
	fs.DurationVar(&o.timeout, "timeout", defaultOnceTimeout, "with --once, exit 1 if not done after `DURATION` (the next run goes on from where it stopped)")
	fs.StringVar(&o.listen, "listen", ":8080", "serve the webhook endpoint and the health checks on `ADDR` (port 0 picks a free port)")
	fs.StringVar(&o.path, "path", "/webhooks", "the webhook endpoint's `PATH`")
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics at /metrics on `ADDR`, such as 127.0.0.1:9090 (none when empty)")
	fs.StringVar(&o.schema, "schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	fs.StringVar(&o.business, "business", pgmirror.DefaultBusiness, "the `NAME` of the business of INVOICING_API_KEY in the tables "+
		"(with INVOICING_MIRROR_KEYS: the name the rows of a mirror made before businesses take)")
	fs.Float64Var(&o.budget, "budget", pgmirror.DefaultBudget, "the ceiling of the business's requests per second to the service, over every replica "+
		"(without INVOICING_MIRROR_KEYS; 0: none, the rate adapts below it: it drops on a 429 and creeps back up)")
	fs.Float64Var(&o.budgetTotal, "budget-total", 0, "bound the requests per second of every business together, over every replica (0: none)")
	fs.IntVar(&o.walkers, "walkers", pgmirror.DefaultWalkers, "backfill or reconcile up to `N` businesses at once on this replica")
	fs.IntVar(&o.partitions, "partitions", 0, "hash-partition every table by business into `N` partitions, in place at startup (0: leave the tables as they are)")
	fs.DurationVar(&o.reconcileInterval, "reconcile-interval", pgmirror.DefaultReconcileInterval, "re-list everything every `DURATION`")
	fs.IntVar(&o.prefetch, "prefetch", pgmirror.DefaultPrefetch, "list pages fetched ahead (1 to 64)")
	fs.DurationVar(&o.coalesce, "coalesce", pgmirror.DefaultCoalesceWindow, "wait `DURATION` after an event before fetching its record, so a burst is one fetch")
	fs.DurationVar(&o.fetchLease, "fetch-lease", pgmirror.DefaultFetchLease, "a record being fetched is taken over by another replica after `DURATION` if its replica died")
	fs.BoolVar(&o.allowMassDeletion, "allow-mass-deletion", false, "let reconciliations mark deleted most of a table's rows at once (see pgmirror.Config.AllowMassDeletion)")
	sel := addSelectionFlags(fs, "", false)
	fs.DurationVar(&o.historyRetention, "history-retention", 0, "keep the versions of the records that ended in the last `DURATION` (0: keep them all)")
	fs.BoolVar(&o.disableHistory, "disable-history", false, "keep no version a write replaces (the _as_of functions know only the current versions)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log `LEVEL`: debug, info, warn or error")
	fs.IntVar(&o.inboxMaxPending, "inbox-max-pending", pgmirror.DefaultInboxMaxPending, "answer deliveries 503 with Retry-After while `N` are due in the inbox (negative: no limit)")
	fs.DurationVar(&o.inboxMaxLag, "inbox-max-lag", pgmirror.DefaultInboxMaxLag, "answer deliveries 503 with Retry-After while the oldest due one has waited `DURATION` (negative: no limit)")
	if code, ok := parseFlags(fs, args, "invoicing-mirror", usage, stderr); !ok {
		return code
	}
	var err error
	if o.selection, err = sel.selection(); err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror: %s\n", err)
		return exitUsage
	}
	env := []string{invoicing.EnvBaseURL, "DATABASE_URL"}
	if getenv(pgmirror.EnvKeys) == "" { // one business, that of the API key
		env = append(env, invoicing.EnvAPIKey)
		if !o.once {
			env = append(env, "INVOICING_WEBHOOK_SECRET")
		}
	}
	for _, name := range env {
		if getenv(name) == "" {
			fmt.Fprintf(stderr, "invoicing-mirror: set %s (see --help)\n", name)
			return exitUsage
		}
	}

	if o.timeout <= 0 {
		fmt.Fprintln(stderr, "invoicing-mirror: --timeout must be positive")
		return exitUsage
	}

	log := newLogger(stderr, o.logLevel)
	if err := mirror(ctx, o, getenv, log, stderr); errors.Is(err, errIncomplete) {
		return exitIncomplete
	} else if err != nil {
		log.Error("invoicing-mirror: stopped", "error", err)
		return exitError
	}
	return exitOK
}

// mirror runs the mirror until ctx ends (or, with --once, until the copy is
// current).
func mirror(ctx context.Context, o options, getenv func(string) string, log *slog.Logger, stderr io.Writer) error {
	var metrics *pgmirror.Metrics
	var clientOpts []invoicing.Option
	if o.metrics != "" {
		metrics = pgmirror.NewMetrics()
		clientOpts = append(clientOpts, invoicing.WithMiddleware(metrics.Middleware))
	}
	var keys *pgmirror.Keyring
	apiKey := getenv(invoicing.EnvAPIKey)
	if v := getenv(pgmirror.EnvKeys); v != "" {
		var err error
		if keys, err = pgmirror.ParseKeyring(v); err != nil {
			return fmt.Errorf("%s: %w", pgmirror.EnvKeys, err)
		}
		apiKey = noClientKey // every call carries its business's key
	}
	client, err := invoicing.NewClient(getenv(invoicing.EnvBaseURL), apiKey, clientOpts...)
	if err != nil {
		return err
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		return errors.New("DATABASE_URL is not a PostgreSQL URL or connection string") // pgx's error would quote it
	}
	progress := newProgress(stderr)
	m, err := pgmirror.New(ctx, pc, pgmirror.Config{
		Client: client, Schema: o.schema, Logger: log, Metrics: metrics, Keys: keys, Business: o.business, Budget: o.budget, BudgetTotal: o.budgetTotal, Walkers: o.walkers, Partitions: o.partitions,
		Prefetch: o.prefetch, CoalesceWindow: o.coalesce, ReconcileInterval: o.reconcileInterval, FetchLease: o.fetchLease,
		AllowMassDeletion: o.allowMassDeletion, HistoryRetention: o.historyRetention,
		Selection: o.selection, DisableHistory: o.disableHistory, OnProgress: progress.update, InboxMaxPending: o.inboxMaxPending, InboxMaxLag: o.inboxMaxLag,
		OnReconciled: func(resource string, corrected int) {
			if corrected > 0 {
				log.Info("invoicing-mirror: reconciliation corrected rows", "resource", resource, "rows", corrected)
			}
		},
	})
	if err != nil {
		return err
	}
	defer m.Close()
	log.Info("invoicing-mirror: starting", "database", describe(pc), "schema", o.schema, "once", o.once, "businesses", keys != nil)
	if metrics != nil {
		stop, err := serveMetrics(o.metrics, log, metrics, m.InboxMetrics())
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.once {
		return once(ctx, m, keys != nil, o.timeout, progress, log, stderr)
	}
	return serve(ctx, m, o, getenv, log)
}

// serve serves the webhook endpoint and the health checks, and runs the
// mirror, until ctx ends or either fails.
func serve(ctx context.Context, m *pgmirror.Mirror, o options, getenv func(string) string, log *slog.Logger) error {
	var verifier *webhooks.Verifier // nil: the businesses' own, at path/{business}
	if getenv(pgmirror.EnvKeys) == "" {
		var err error
		if verifier, err = webhooks.NewVerifier(getenv("INVOICING_WEBHOOK_SECRET")); err != nil {
			return fmt.Errorf("INVOICING_WEBHOOK_SECRET: %w", err)
		}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: routes(m, verifier, o.path), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("invoicing-mirror: webhook endpoint listening", "addr", ln.Addr().String(), "path", o.path, "per_business", verifier == nil)

	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }() // checks the API, waits for the database, migrates
	select {
	case err = <-ran: // ctx ended, or a failure Run cannot mend
		ran = nil
	case err = <-served:
	case <-ctx.Done():
	}
	log.Info("invoicing-mirror: stopping")
	// Deliveries being stored are finished; new ones are refused, and the
	// service retries them with another replica or later.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = serr
	}
	if ran != nil {
		if ctx.Err() == nil { // the server failed: stop the rest too
			return err
		}
		if rerr := <-ran; err == nil {
			err = rerr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("invoicing-mirror: stopped")
	return err
}

// errIncomplete is once's error when a business was not completely
// copied: each is named on a line of its own.
var errIncomplete = errors.New("a business was not completely copied")

// once brings the copy up to date and returns: it checks the API key and
// base URL (before it creates anything), migrates, then backfills what was
// never backfilled (resuming a stopped backfill) or, when everything was,
// re-lists everything once; all within timeout. It then writes a line per
// business, and returns errIncomplete when one was not completely copied.
func once(ctx context.Context, m *pgmirror.Mirror, multi bool, timeout time.Duration, progress *progress, log *slog.Logger, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	failed, err := onceSteps(ctx, m, multi, progress, log)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("not done within --timeout %v; what was written is kept, and the next run goes on from there", timeout)
	}
	if err != nil {
		return err // the run itself failed: nothing to say per business
	}
	st, err := m.Status(ctx, "")
	if err != nil {
		return err
	}
	incomplete := false
	for _, b := range st.Businesses {
		if b.Removed {
			continue
		}
		line := "copied"
		switch {
		case failed[b.Name] != nil:
			line = "not reconciled: " + oneLine(failed[b.Name])
		case b.Paused:
			line = fmt.Sprintf("not copied: paused until %s: %s", stamp(b.PausedUntil), b.PauseReason)
		case b.ReadyAt.IsZero():
			line = fmt.Sprintf("not copied: %d of %d resources backfilled", b.Backfilled, b.Resources)
		}
		if line != "copied" {
			incomplete = true
		}
		fmt.Fprintf(out, "invoicing-mirror: business %s: %s (%d rows)\n", b.Name, line, b.Rows)
	}
	if incomplete {
		return errIncomplete
	}
	return nil
}

// onceSteps runs --once's steps, and returns the businesses whose
// reconciliation failed, by name (a backfill's failures are in the
// status), and an error that stopped the run.
func onceSteps(ctx context.Context, m *pgmirror.Mirror, multi bool, progress *progress, log *slog.Logger) (map[string]error, error) {
	if !multi { // with businesses, they are known once migrated
		if err := m.CheckAPI(ctx); err != nil { // before anything is created
			return nil, err
		}
	}
	if err := m.Migrate(ctx); err != nil {
		return nil, err
	}
	done, err := m.BackfillDone(ctx)
	if err != nil {
		return nil, err
	}
	if !done {
		if err := m.Backfill(ctx); err != nil {
			return nil, err
		}
		progress.finish()
		log.Info("invoicing-mirror: backfill complete")
		return nil, nil
	}
	log.Info("invoicing-mirror: already backfilled; reconciling once")
	if !multi {
		_, err := m.Reconcile(ctx)
		return nil, err
	}
	st, err := m.Status(ctx, "")
	if err != nil {
		return nil, err
	}
	failed := map[string]error{}
	for _, b := range st.Businesses {
		if b.Removed {
			continue
		}
		if _, err := m.ReconcileBusiness(ctx, b.Name); err != nil {
			failed[b.Name] = err
		}
	}
	return failed, m.Prune(ctx)
}

// describe names the database without its password.
func describe(pc *pgxpool.Config) string {
	c := pc.ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}
