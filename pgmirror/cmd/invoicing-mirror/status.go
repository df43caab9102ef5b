package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const statusUsage = `Usage: invoicing-mirror status [--business NAME] [--json] [flags]

Prints the state of the mirror in the database at DATABASE_URL (never
printed), from its tables alone: it needs no API key, and no replica needs
to run. First a line per business (the view mirror_status in SQL): its
phase (backfilling until its first complete copy, ready, reconciling,
paused, removed), rows, backfill (resources complete of 10, records listed
of the service's count), its last reconciliation (start and end; a start
after the end is one running, or cut short), the records waiting to be
fetched, the event lag's 99th percentile over the last hour (from a
delivery's receipt to the row's commit), and why and until when it is
paused. Then a line per resource, summed over the businesses (only NAME's
with --business), the webhook inbox, and the verdict. With --json, the
same as one JSON object (durations in seconds, times in RFC 3339).

Exit status, for a health probe:
  0  healthy
  1  degraded, with each reason printed: a backfill not complete; a
     business without a reconciliation finished within two
     --reconcile-interval; a delivery or a record waiting longer than
     --max-lag; the event lag's 99th percentile above --max-lag; a
     business paused
  2  a usage mistake, the database unreachable or not answering within
     --timeout, no mirror of this version in --schema, or --business naming
     a business the mirror does not hold

Flags:
`

// statusTimeout is --timeout's default: short, for a health probe of a
// database that hangs.
const statusTimeout = 5 * time.Second

// status is the status subcommand.
func status(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	business := fs.String("business", "", "only the business `NAME`")
	asJSON := fs.Bool("json", false, "print one JSON object")
	maxLag := fs.Duration("max-lag", 5*time.Minute, "degraded when a delivery or a record waits, or the lag's p99 is, longer than `DURATION`")
	interval := fs.Duration("reconcile-interval", pgmirror.DefaultReconcileInterval, "the replicas' --reconcile-interval: degraded when none finished in twice `DURATION`")
	timeout := fs.Duration("timeout", statusTimeout, "give up reading after `DURATION` (exit 2)")
	if code, ok := parseFlags(fs, args, "invoicing-mirror status", statusUsage, stderr); !ok {
		return code
	}
	if *maxLag <= 0 || *interval <= 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "invoicing-mirror status: --max-lag, --reconcile-interval and --timeout must be positive")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, code := openDatabase(ctx, "status", getenv, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	st, err := pgmirror.ReadBusinessStatus(ctx, db, *schema, *business)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror status: %s\n", oneLine(err))
		return exitUsage
	}
	if *business != "" && len(st.Businesses) == 0 {
		fmt.Fprintf(stderr, "invoicing-mirror status: the mirror holds no business %q\n", *business)
		return exitUsage
	}
	problems := st.Problems(*maxLag, *interval)
	if *asJSON {
		printStatusJSON(stdout, st, problems)
	} else {
		printStatus(stdout, st, problems)
	}
	if len(problems) > 0 {
		return exitError
	}
	return exitOK
}

// openDatabase opens a pool of one connection on DATABASE_URL for the
// subcommand named cmd, or prints why not and returns the exit status.
func openDatabase(ctx context.Context, cmd string, getenv func(string) string, stderr io.Writer) (*pgxpool.Pool, int) {
	if getenv("DATABASE_URL") == "" {
		fmt.Fprintf(stderr, "invoicing-mirror %s: set DATABASE_URL (see --help)\n", cmd)
		return nil, exitUsage
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror %s: DATABASE_URL is not a PostgreSQL URL or connection string\n", cmd)
		return nil, exitUsage
	}
	pc.MaxConns = 1
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror %s: %s\n", cmd, oneLine(err))
		return nil, exitUsage
	}
	return db, exitOK
}

// printStatus writes st as two tables, a line per business and a line per
// resource, then the inbox, the totals and the verdict.
func printStatus(w io.Writer, st *pgmirror.Status, problems []string) {
	fmt.Fprintf(w, "mirror %s at %s\n\n", st.Schema, stamp(st.At))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUSINESS\tPHASE\tROWS\tBACKFILL\tRECONCILED\tPENDING\tLAG P99\tPAUSED")
	for _, b := range st.Businesses {
		paused := "-"
		if b.Paused {
			paused = "until " + stamp(b.PausedUntil) + ": " + b.PauseReason
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d, %d/%d records\t%s\t%d\t%s\t%s\n", b.Name, b.Phase, b.Rows, b.Backfilled, b.Resources,
			b.BackfillListed, b.BackfillTotal, reconciled(b), b.PendingFetches, age(b.LagP99), paused)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tPHASE\tROWS\tDELETED\tBACKFILLED\tRECONCILED\tCORRECTED\tPENDING\tOLDEST\tLAG P99")
	for _, r := range st.Resources {
		corrected := "-"
		if !r.Reconciled.IsZero() {
			corrected = strconv.Itoa(r.Corrected)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Name, r.Phase, r.Rows, r.Deleted,
			stamp(r.BackfillCompleted), stamp(r.Reconciled), corrected, r.PendingFetches, age(r.OldestPending), age(r.LagP99))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ninbox: %d deliveries pending, the oldest for %s\n", st.InboxPending, age(st.InboxOldest))
	switch {
	case st.Reconciling:
		fmt.Fprintln(w, "reconciliation: running")
	case st.ReconcileFinished.IsZero():
		fmt.Fprintln(w, "reconciliation: none yet")
	case st.ReconcileStarted.IsZero(): // the backfills' ends count as the last
		fmt.Fprintf(w, "reconciliation: none yet; the first is due a --reconcile-interval after %s\n", stamp(st.ReconcileFinished))
	default:
		fmt.Fprintf(w, "reconciliation: the oldest last one ended %s\n", stamp(st.ReconcileFinished))
	}
	fmt.Fprintf(w, "event lag over the last hour: p99 %s over %d records\n", age(st.LagP99), st.Lagged)
	if len(problems) == 0 {
		fmt.Fprintln(w, "healthy")
		return
	}
	fmt.Fprintln(w, "degraded:")
	for _, p := range problems {
		fmt.Fprintln(w, "  - "+p)
	}
}

// reconciled is a business's last reconciliation for the table: its start
// and end, a start after the end (one running, or cut short), or the
// backfill's end before any.
func reconciled(b pgmirror.BusinessStatus) string {
	switch {
	case b.ReconcileStarted.IsZero() && b.ReconcileFinished.IsZero():
		return "never"
	case b.ReconcileStarted.IsZero():
		return "none; due an interval after " + stamp(b.ReconcileFinished)
	case b.ReconcileStarted.After(b.ReconcileFinished):
		return "running since " + stamp(b.ReconcileStarted) + " (the last ended " + stamp(b.ReconcileFinished) + ")"
	}
	return stamp(b.ReconcileStarted) + " to " + stamp(b.ReconcileFinished)
}

// statusJSON is the --json output.
type statusJSON struct {
	Schema     string         `json:"schema"`
	At         time.Time      `json:"at"`
	Healthy    bool           `json:"healthy"`
	Problems   []string       `json:"problems"`
	Businesses []businessJSON `json:"businesses"`
	Resources  []resourceJSON `json:"resources"`
	Inbox      struct {
		Pending       int64   `json:"pending"`
		OldestSeconds float64 `json:"oldest_seconds"`
	} `json:"inbox"`
	Lagged        int64   `json:"lagged"`
	LagP99Seconds float64 `json:"lag_p99_seconds"`
}

type businessJSON struct {
	Name                 string         `json:"name"`
	Phase                string         `json:"phase"`
	Rows                 int64          `json:"rows"`
	Deleted              int64          `json:"deleted"`
	Resources            int            `json:"resources"`
	BackfilledResources  int            `json:"backfilled_resources"`
	BackfillListed       int64          `json:"backfill_listed"`
	BackfillTotal        int64          `json:"backfill_total"`
	ReadyAt              *time.Time     `json:"ready_at"`
	ReconcileStartedAt   *time.Time     `json:"reconcile_started_at"`
	ReconcileFinishedAt  *time.Time     `json:"reconcile_finished_at"`
	ReconcileCorrected   map[string]int `json:"reconcile_corrected"`
	ResyncAt             *time.Time     `json:"resync_at"`
	PendingFetches       int64          `json:"pending_fetches"`
	OldestPendingSeconds float64        `json:"oldest_pending_seconds"`
	Lagged               int64          `json:"lagged"`
	LagP99Seconds        float64        `json:"lag_p99_seconds"`
	PausedUntil          *time.Time     `json:"paused_until"`
	PauseReason          string         `json:"pause_reason,omitempty"`
	Removed              bool           `json:"removed"`
}

type resourceJSON struct {
	Name                 string     `json:"name"`
	Phase                string     `json:"phase"`
	Rows                 int64      `json:"rows"`
	Deleted              int64      `json:"deleted"`
	BackfillCompletedAt  *time.Time `json:"backfill_completed_at"`
	ReconciledAt         *time.Time `json:"reconciled_at"`
	Corrected            int        `json:"corrected"`
	PendingFetches       int64      `json:"pending_fetches"`
	OldestPendingSeconds float64    `json:"oldest_pending_seconds"`
	LagP99Seconds        float64    `json:"lag_p99_seconds"`
}

// printStatusJSON writes st and its problems as one JSON object.
func printStatusJSON(w io.Writer, st *pgmirror.Status, problems []string) {
	out := statusJSON{Schema: st.Schema, At: st.At.UTC(), Healthy: len(problems) == 0, Problems: problems,
		Lagged: st.Lagged, LagP99Seconds: st.LagP99.Seconds(), Businesses: []businessJSON{}, Resources: []resourceJSON{}}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	out.Inbox.Pending, out.Inbox.OldestSeconds = st.InboxPending, st.InboxOldest.Seconds()
	for _, b := range st.Businesses {
		out.Businesses = append(out.Businesses, businessJSON{Name: b.Name, Phase: b.Phase, Rows: b.Rows, Deleted: b.Deleted,
			Resources: b.Resources, BackfilledResources: b.Backfilled, BackfillListed: b.BackfillListed, BackfillTotal: b.BackfillTotal, ReadyAt: when(b.ReadyAt),
			ReconcileStartedAt: when(b.ReconcileStarted), ReconcileFinishedAt: when(b.ReconcileFinished), ReconcileCorrected: b.Corrected,
			ResyncAt: when(b.ResyncAt), PendingFetches: b.PendingFetches, OldestPendingSeconds: b.OldestPending.Seconds(),
			Lagged: b.Lagged, LagP99Seconds: b.LagP99.Seconds(), PausedUntil: when(b.PausedUntil), PauseReason: b.PauseReason,
			Removed: b.Removed})
	}
	for _, r := range st.Resources {
		out.Resources = append(out.Resources, resourceJSON{Name: r.Name, Phase: r.Phase, Rows: r.Rows, Deleted: r.Deleted,
			BackfillCompletedAt: when(r.BackfillCompleted), ReconciledAt: when(r.Reconciled), Corrected: r.Corrected,
			PendingFetches: r.PendingFetches, OldestPendingSeconds: r.OldestPending.Seconds(), LagP99Seconds: r.LagP99.Seconds()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// when is t in UTC, or nil for the zero time.
func when(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// stamp is t in UTC to the second, or "never".
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// age is d rounded for reading, or "-" for 0.
func age(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
