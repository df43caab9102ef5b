package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const changesUsage = `Usage: invoicing-mirror changes [--after N] [--follow] [flags]

Prints the mirror's change feed, from the database at DATABASE_URL (never
printed), as JSON lines in order: one change per line, with its seq, at,
resource, id, cause (event, backfill or reconciliation), op (insert, update
or delete) and old and new (the members that changed, as they were and as
they are; the whole record for an insert or a delete). It exits 0 after the
last change, or with --follow waits for new ones until interrupted. To
resume, give the last seq handled to --after. It needs no API key, and no
replica needs to run.

Exit status: 0 done (or interrupted with --follow); 1 the database failed
while reading, or the changes after --after were deleted by retention; 2 a
usage mistake, or the database unreachable.

Flags:
`

// changes is the changes subcommand.
func changes(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror changes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	after := fs.Int64("after", 0, "print the changes after the seq `N` (0: from the first)")
	follow := fs.Bool("follow", false, "after the last change, wait for new ones until interrupted")
	if code, ok := parseFlags(fs, args, "invoicing-mirror changes", changesUsage, stderr); !ok {
		return code
	}
	if *after < 0 {
		fmt.Fprintln(stderr, "invoicing-mirror changes: --after must not be negative")
		return exitUsage
	}
	if getenv("DATABASE_URL") == "" {
		fmt.Fprintln(stderr, "invoicing-mirror changes: set DATABASE_URL (see --help)")
		return exitUsage
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		fmt.Fprintln(stderr, "invoicing-mirror changes: DATABASE_URL is not a PostgreSQL URL or connection string")
		return exitUsage
	}
	pc.MaxConns = 1
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror changes: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return exitUsage
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		if ctx.Err() != nil {
			return exitOK
		}
		fmt.Fprintf(stderr, "invoicing-mirror changes: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return exitUsage
	}

	read := pgmirror.Changes
	if *follow {
		read = pgmirror.FollowChanges
	}
	enc := json.NewEncoder(stdout)
	for c, err := range read(ctx, db, *schema, *after) {
		if err != nil {
			if *follow && ctx.Err() != nil {
				return exitOK
			}
			fmt.Fprintf(stderr, "invoicing-mirror changes: %s\n", strings.Join(strings.Fields(err.Error()), " "))
			return exitError
		}
		if err := enc.Encode(c); err != nil {
			fmt.Fprintf(stderr, "invoicing-mirror changes: writing: %v\n", err)
			return exitError
		}
	}
	return exitOK
}
