package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/internal/cliflag"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const statusUsage = `Usage: invoicing-mirror status [flags]

Prints the state of the mirror in the database at DATABASE_URL (never
printed): per resource its phase (backfilling, backfilled or reconciling),
rows, when its backfill completed, the last reconciliation and the rows it
corrected, the records events named that wait to be fetched, and the event
lag's 99th percentile over the last hour (from a delivery's receipt to the
row's commit); then the webhook inbox and the verdict. It needs no API key,
and no replica needs to run.

Exit status, for a health probe:
  0  healthy
  1  degraded, with each reason printed: a backfill not complete; no
     reconciliation finished within two --reconcile-interval; a delivery or a
     record waiting longer than --max-lag; the event lag's 99th percentile
     above --max-lag
  2  a usage mistake, the database unreachable, or no mirror of this version
     in --schema

Flags:
`

// status is the status subcommand.
func status(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	maxLag := fs.Duration("max-lag", 5*time.Minute, "degraded when a delivery or a record waits, or the lag's p99 is, longer than `DURATION`")
	interval := fs.Duration("reconcile-interval", pgmirror.DefaultReconcileInterval, "the replicas' --reconcile-interval: degraded when none finished in twice `DURATION`")
	timeout := fs.Duration("timeout", 30*time.Second, "give up reading after `DURATION` (exit 2)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, statusUsage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "invoicing-mirror status: %s\nRun 'invoicing-mirror status --help' for every flag.\n", cliflag.Explain(fs, err))
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "invoicing-mirror status: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *maxLag <= 0 || *interval <= 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "invoicing-mirror status: --max-lag, --reconcile-interval and --timeout must be positive")
		return exitUsage
	}
	if getenv("DATABASE_URL") == "" {
		fmt.Fprintln(stderr, "invoicing-mirror status: set DATABASE_URL (see --help)")
		return exitUsage
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		fmt.Fprintln(stderr, "invoicing-mirror status: DATABASE_URL is not a PostgreSQL URL or connection string")
		return exitUsage
	}
	pc.MaxConns = 1
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror status: %s\n", oneLine(err))
		return exitUsage
	}
	defer db.Close()
	st, err := pgmirror.ReadStatus(ctx, db, *schema)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror status: %s\n", oneLine(err))
		return exitUsage
	}
	printStatus(stdout, st)
	problems := st.Problems(*maxLag, *interval)
	if len(problems) == 0 {
		fmt.Fprintln(stdout, "healthy")
		return exitOK
	}
	fmt.Fprintln(stdout, "degraded:")
	for _, p := range problems {
		fmt.Fprintln(stdout, "  - "+p)
	}
	return exitError
}

// printStatus writes st as a table, a line per resource, then the inbox,
// the reconciliation and the lag.
func printStatus(w io.Writer, st *pgmirror.Status) {
	fmt.Fprintf(w, "mirror %s at %s\n\n", st.Schema, stamp(st.At))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
		fmt.Fprintf(w, "reconciliation: running since %s\n", stamp(st.ReconcileStarted))
	case st.ReconcileFinished.IsZero():
		fmt.Fprintln(w, "reconciliation: none yet")
	case st.ReconcileStarted.IsZero(): // the backfill's end counts as the last
		fmt.Fprintf(w, "reconciliation: none yet; the first is due a --reconcile-interval after %s\n", stamp(st.ReconcileFinished))
	default:
		fmt.Fprintf(w, "reconciliation: last from %s to %s\n", stamp(st.ReconcileStarted), stamp(st.ReconcileFinished))
	}
	fmt.Fprintf(w, "event lag over the last hour: p99 %s over %d records\n", age(st.LagP99), st.Lagged)
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
