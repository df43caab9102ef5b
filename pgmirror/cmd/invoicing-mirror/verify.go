package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const verifyUsage = `Usage: invoicing-mirror verify [--business NAME] [--resource RESOURCE]... [--json] [flags]

Compares the copy with the service, without writing anything to the
mirror's data: for each business (every one, or NAME), it lists each
resource (every one, or those named) within the business's request budget,
as a walk does, and compares each record's JSON with its row. A record that
differs is checked again at the end (a Get where the service has one), so
that a change in flight (an event's fetch pending) is not counted. It prints
each record that differs, missing (the service shows it, the mirror does
not), extra (the mirror shows it, the service does not) or stale (with the
members that differ), then each resource's figures. It reads the service as
the mirror does: INVOICING_BASE_URL and INVOICING_API_KEY, or with
INVOICING_MIRROR_KEYS the keys of the businesses added; the schema must be
migrated by a replica of this version.

Exit status:
  0  the copy equals the service
  1  a failure: the service or the database unreachable, --timeout passed
  2  a usage mistake, no mirror of this version in --schema, or --business
     naming a business the mirror does not serve or has no complete copy of
  3  records differ (each printed), or a business has no complete copy yet

Flags:
`

// verify is the verify subcommand.
func verify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	business := fs.String("business", "", "only the business `NAME` (without INVOICING_MIRROR_KEYS: the name of INVOICING_API_KEY's business, default "+pgmirror.DefaultBusiness+")")
	asJSON := fs.Bool("json", false, "print one JSON object")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after `DURATION` (exit 1)")
	budget := fs.Float64("budget", pgmirror.DefaultBudget, "without INVOICING_MIRROR_KEYS: the business's requests per second, as the replicas' --budget")
	var resources []string
	fs.Func("resource", "only `RESOURCE` (repeatable; every resource when none)", func(s string) error {
		resources = append(resources, s)
		return nil
	})
	if code, ok := parseFlags(fs, args, "invoicing-mirror verify", verifyUsage, stderr); !ok {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "invoicing-mirror verify: %s\n", oneLine(err))
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cfg, err := clientConfig(getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	cfg.Schema, cfg.Logger, cfg.Budget = *schema, slog.New(slog.DiscardHandler), *budget
	filter := *business
	if cfg.Keys == nil && filter != "" {
		cfg.Business = filter // the name of the one business's rows
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		return fail(exitUsage, errors.New("DATABASE_URL is not a PostgreSQL URL or connection string"))
	}
	m, err := pgmirror.New(ctx, pc, cfg)
	if err != nil {
		return fail(exitUsage, err)
	}
	defer m.Close()
	v, err := m.Verify(ctx, filter, resources...)
	switch {
	case errors.Is(err, pgmirror.ErrNotMigrated), errors.Is(err, pgmirror.ErrNoSuchBusiness), errors.Is(err, pgmirror.ErrNotReady):
		return fail(exitUsage, err)
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(exitError, fmt.Errorf("not done within --timeout %v", *timeout))
	case err != nil:
		return fail(exitError, err)
	}
	if *asJSON {
		printVerificationJSON(stdout, v)
	} else {
		printVerification(stdout, v)
	}
	if !v.Equal() {
		return exitIncomplete
	}
	return exitOK
}

// clientConfig is the Config of a mirror reading the service as the
// environment says: one business (INVOICING_API_KEY) or the businesses of
// the database (INVOICING_MIRROR_KEYS).
func clientConfig(getenv func(string) string) (pgmirror.Config, error) {
	var cfg pgmirror.Config
	for _, name := range []string{invoicing.EnvBaseURL, "DATABASE_URL"} {
		if getenv(name) == "" {
			return cfg, fmt.Errorf("set %s (see --help)", name)
		}
	}
	apiKey := getenv(invoicing.EnvAPIKey)
	if v := getenv(pgmirror.EnvKeys); v != "" {
		keys, err := pgmirror.ParseKeyring(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", pgmirror.EnvKeys, err)
		}
		cfg.Keys, apiKey = keys, noClientKey
	} else if apiKey == "" {
		return cfg, fmt.Errorf("set %s, or %s for the businesses of the database (see --help)", invoicing.EnvAPIKey, pgmirror.EnvKeys)
	}
	client, err := invoicing.NewClient(getenv(invoicing.EnvBaseURL), apiKey)
	cfg.Client = client
	return cfg, err
}

// printVerification writes each difference, then each resource's figures
// and the verdict.
func printVerification(w io.Writer, v *pgmirror.Verification) {
	for _, d := range v.Differences {
		line := fmt.Sprintf("%s %s %s: %s", d.Business, d.Resource, d.ID, d.Kind)
		if len(d.Members) > 0 {
			line += " (" + strings.Join(d.Members, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, b := range v.NotReady {
		fmt.Fprintf(w, "%s: not verified: its first complete copy is not done (its backfill walks it)\n", b)
	}
	if len(v.Differences)+len(v.NotReady) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUSINESS\tRESOURCE\tLISTED\tDIFFERENT\tIN FLIGHT")
	listed := 0
	for _, r := range v.Resources {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", r.Business, r.Resource, r.Listed, r.Differences, r.InFlight)
		listed += r.Listed
	}
	tw.Flush()
	verdict := "equal"
	if !v.Equal() {
		verdict = fmt.Sprintf("%d record(s) differ, %d business(es) not verified", len(v.Differences), len(v.NotReady))
	}
	fmt.Fprintf(w, "\n%s: %d records listed, %d requests, %v\n", verdict, listed, v.Requests, v.Took.Round(time.Millisecond))
}

// printVerificationJSON writes v as one JSON object.
func printVerificationJSON(w io.Writer, v *pgmirror.Verification) {
	type difference struct {
		Business string   `json:"business"`
		Resource string   `json:"resource"`
		ID       string   `json:"id"`
		Kind     string   `json:"kind"`
		Members  []string `json:"members,omitempty"`
	}
	type resource struct {
		Business    string `json:"business"`
		Resource    string `json:"resource"`
		Listed      int    `json:"listed"`
		Differences int    `json:"differences"`
		InFlight    int    `json:"in_flight"`
	}
	out := struct {
		Equal       bool         `json:"equal"`
		NotReady    []string     `json:"not_ready"`
		Differences []difference `json:"differences"`
		Resources   []resource   `json:"resources"`
		Requests    int          `json:"requests"`
		Seconds     float64      `json:"seconds"`
	}{Equal: v.Equal(), NotReady: append([]string{}, v.NotReady...), Differences: []difference{}, Resources: []resource{}, Requests: v.Requests, Seconds: v.Took.Seconds()}
	for _, d := range v.Differences {
		out.Differences = append(out.Differences, difference{d.Business, d.Resource, d.ID, d.Kind, d.Members})
	}
	for _, r := range v.Resources {
		out.Resources = append(out.Resources, resource{r.Business, r.Resource, r.Listed, r.Differences, r.InFlight})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
