package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const resyncUsage = `Usage: invoicing-mirror resync --business NAME [--resource RESOURCE]... [flags]

Asks for a fresh walk of a business now (or of the resources named,
repeatable: invoices, quotes, ...): the first replica running (or the next
one started) whose walks are free makes it within a second or so, as a
reconciliation does (writing what differs, marking deleted what the service
no longer lists), without a restart. 'invoicing-mirror status' shows it
pending (resync asked) and running (phase reconciling). It needs only
DATABASE_URL, not the API key.

Exit status: 0 asked for; 1 the database failed, or the business has no
complete copy yet (its backfill walks it); 2 a usage mistake.

Flags:
`

// resync is the resync subcommand.
func resync(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror resync", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	business := fs.String("business", "", "the business `NAME` (required)")
	var resources []string
	fs.Func("resource", "walk only `RESOURCE` (repeatable; every resource when none)", func(s string) error {
		resources = append(resources, s)
		return nil
	})
	if code, ok := parseFlags(fs, args, "invoicing-mirror resync", resyncUsage, stderr); !ok {
		return code
	}
	switch {
	case *business == "":
		fmt.Fprintln(stderr, "invoicing-mirror resync: --business is required")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, code := openDatabase(ctx, "resync", getenv, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	if err := pgmirror.NewBusinesses(db, *schema, nil).Resync(ctx, *business, resources...); err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror resync: %s\n", oneLine(err))
		if strings.Contains(err.Error(), "no resource") {
			return exitUsage
		}
		return exitError
	}
	what := "every resource"
	if len(resources) > 0 {
		what = strings.Join(resources, ", ")
	}
	fmt.Fprintf(stdout, "resync of business %s asked for (%s): a running replica makes it within seconds; 'invoicing-mirror status --business %s' shows it\n",
		*business, what, *business)
	return exitOK
}
