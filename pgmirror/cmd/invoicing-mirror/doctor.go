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
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const doctorUsage = `Usage: invoicing-mirror doctor [flags]

Checks what a first run needs, with the environment and flags a replica
would have, changing nothing: the database reachable and writable (in a
transaction rolled back) and its schema's version; INVOICING_MIRROR_KEYS
present and opening every business's sealed key and secrets; each
business's API key answering one request; the webhook secret(s) present;
the clock's skew from the database's and from the service's (the webhooks'
signatures are checked against it); the --listen address free. It prints
each check, passed or failed, and for each failure the fix.

Exit status: 0 every check passed; 1 a check failed; 2 a usage mistake.

Flags:
`

// maxSkew is the clock skew doctor accepts: a fifth of the webhooks'
// 5-minute tolerance.
const maxSkew = time.Minute

// doctor is the doctor subcommand.
func doctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("invoicing-mirror doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	listen := fs.String("listen", ":8080", "the replicas' --listen `ADDR`, to check that it is free")
	timeout := fs.Duration("timeout", 30*time.Second, "give up a check after `DURATION`")
	if code, ok := parseFlags(fs, args, "invoicing-mirror doctor", doctorUsage, stderr); !ok {
		return code
	}
	d := &checkup{out: stdout}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db := d.database(ctx, getenv, *schema)
	if db != nil {
		defer db.Close()
	}
	d.businesses(ctx, getenv, db, *schema)
	d.clock(ctx, getenv, db)
	d.port(*listen)
	if d.failed > 0 {
		fmt.Fprintf(stdout, "\n%d check(s) failed\n", d.failed)
		return exitError
	}
	fmt.Fprintln(stdout, "\nevery check passed")
	return exitOK
}

// checkup prints the checks, counting the failures.
type checkup struct {
	out    io.Writer
	failed int
}

func (d *checkup) pass(what string) { fmt.Fprintf(d.out, "ok    %s\n", what) }

func (d *checkup) fail(what, why, fix string) {
	d.failed++
	fmt.Fprintf(d.out, "FAIL  %s: %s\n      fix: %s\n", what, why, fix)
}

// database checks that DATABASE_URL reaches a database where the mirror can
// write, and says the schema's version; it returns a pool on it, or nil.
func (d *checkup) database(ctx context.Context, getenv func(string) string, schema string) *pgxpool.Pool {
	const what = "the database (DATABASE_URL)"
	if getenv("DATABASE_URL") == "" {
		d.fail(what, "DATABASE_URL is not set", "export DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DATABASE")
		return nil
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		d.fail(what, "not a PostgreSQL URL or connection string", "use postgres://USER:PASSWORD@HOST:5432/DATABASE")
		return nil
	}
	pc.MaxConns = 2
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err == nil {
		err = db.Ping(ctx)
	}
	if err != nil {
		d.fail(what, oneLine(err), "start PostgreSQL, or correct the host, port, user, password and database of DATABASE_URL")
		if db != nil {
			db.Close()
		}
		return nil
	}
	d.pass(what + ": reachable, " + describe(pc))
	// Writable: a transaction that creates, writes and is rolled back; and
	// the rights the migrations need.
	var canCreate bool
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE pgmirror_doctor (x int) ON COMMIT DROP`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pgmirror_doctor VALUES (1)`); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)
			THEN has_schema_privilege($1, 'CREATE') ELSE has_database_privilege(current_database(), 'CREATE') END`, schema).Scan(&canCreate); err != nil {
			return err
		}
		return errors.New("rolled back")
	})
	switch {
	case err != nil && err.Error() != "rolled back":
		d.fail("the database is writable", oneLine(err), "connect as a user that can write (not a read replica)")
	case !canCreate:
		d.fail("the database is writable", "the user cannot create tables in schema "+schema,
			"GRANT CREATE ON SCHEMA "+schema+" (or ON DATABASE, to create it) TO the user of DATABASE_URL")
	default:
		d.pass("the database is writable, and schema " + schema + " can be created or migrated")
	}
	st, err := pgmirror.ReadStatus(ctx, db, schema)
	switch {
	case errors.Is(err, pgmirror.ErrNotMigrated) && strings.Contains(err.Error(), "has no mirror_migrations"):
		d.pass("schema " + schema + ": none yet (a replica creates it)")
	case errors.Is(err, pgmirror.ErrNotMigrated) && strings.Contains(err.Error(), "newer than"):
		d.fail("schema "+schema, oneLine(err), "run this version's replicas on another --schema, or upgrade invoicing-mirror")
	case errors.Is(err, pgmirror.ErrNotMigrated):
		d.pass("schema " + schema + ": " + oneLine(err))
	case err != nil:
		d.fail("schema "+schema, oneLine(err), "check that the database answers; see the error")
	default:
		d.pass(fmt.Sprintf("schema %s: at version %d, %d business(es)", schema, pgmirror.SchemaVersion(), len(st.Businesses)))
	}
	return db
}

// businesses checks the keys and secrets of every business, and that the
// service answers each business's key.
func (d *checkup) businesses(ctx context.Context, getenv func(string) string, db *pgxpool.Pool, schema string) {
	base := getenv(invoicing.EnvBaseURL)
	if base == "" {
		d.fail("the API ("+invoicing.EnvBaseURL+")", "not set", "export "+invoicing.EnvBaseURL+"=https://HOST/api/v1/external")
		return
	}
	if getenv(pgmirror.EnvKeys) == "" {
		d.secret(getenv("INVOICING_WEBHOOK_SECRET"))
	}
	cfg, err := clientConfig(getenv)
	if err != nil {
		d.fail("the API keys", oneLine(err), "set INVOICING_API_KEY for one business, or INVOICING_MIRROR_KEYS for the businesses added "+
			"('invoicing-mirror businesses keygen k1' makes a key)")
		return
	}
	if db == nil {
		return // the businesses and their keys are in the database
	}
	cfg.Schema, cfg.Logger = schema, slog.New(slog.DiscardHandler)
	m, err := pgmirror.New(ctx, db.Config(), cfg)
	if err != nil {
		d.fail("the API", oneLine(err), "check "+invoicing.EnvBaseURL)
		return
	}
	defer m.Close()
	if cfg.Keys == nil {
		if err := m.CheckAPI(ctx); err != nil {
			d.fail("the API key (INVOICING_API_KEY)", oneLine(err), apiFix(err))
		} else {
			d.pass("the API at " + base + " answers the API key")
		}
		return
	}
	checked, err := m.CheckBusinesses(ctx)
	if errors.Is(err, pgmirror.ErrNotMigrated) {
		d.pass("no business added yet (the schema does not exist): 'invoicing-mirror businesses add NAME' adds one")
		return
	} else if err != nil {
		d.fail("the businesses", oneLine(err), "check that the database answers")
		return
	}
	if len(checked) == 0 {
		d.fail("the businesses", "none is added", "INVOICING_API_KEY=... INVOICING_WEBHOOK_SECRET=... invoicing-mirror businesses add NAME")
	}
	names := make([]string, 0, len(checked))
	for name := range checked {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		what := "business " + name
		switch err := checked[name]; {
		case err == nil:
			d.pass(what + ": its key and secrets open, and the API answers its key")
		case strings.Contains(err.Error(), "sealed") || strings.Contains(err.Error(), "secret"):
			d.fail(what, oneLine(err), "put the key it was sealed with in INVOICING_MIRROR_KEYS ('invoicing-mirror businesses list' "+
				"names it), or add the business again with its API key and secret")
		default:
			d.fail(what, oneLine(err), apiFix(err))
		}
	}
}

// secret checks the webhook secret of a mirror of one business.
func (d *checkup) secret(secret string) {
	const what = "the webhook secret (INVOICING_WEBHOOK_SECRET)"
	if secret == "" {
		d.fail(what, "not set", "export INVOICING_WEBHOOK_SECRET to the signing secret the service shows for the webhook endpoint")
		return
	}
	if _, err := webhooks.NewVerifier(secret); err != nil {
		d.fail(what, oneLine(err), "copy the endpoint's signing secret again, without spaces")
		return
	}
	d.pass(what + ": set")
}

// apiFix is the fix for the service's refusal, or for not reaching it.
func apiFix(err error) string {
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden) {
		return "the service refuses the key: create a key with the read scopes in Settings, Integrations, API Keys, and set it " +
			"(INVOICING_API_KEY, or 'invoicing-mirror businesses add NAME' again)"
	}
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return "check " + invoicing.EnvBaseURL + ": it ends in /api/v1/external"
	}
	return "check " + invoicing.EnvBaseURL + " and the network to it"
}

// clock checks this machine's clock against the database's and the
// service's (the Date of any answer, a 401 included).
func (d *checkup) clock(ctx context.Context, getenv func(string) string, db *pgxpool.Pool) {
	check := func(what string, theirs time.Time, sent time.Time) {
		skew := theirs.Sub(sent.Add(time.Since(sent) / 2)).Round(time.Second)
		if skew < 0 {
			skew = -skew
		}
		if skew > maxSkew {
			d.fail("the clock", fmt.Sprintf("%v apart from %s's", skew, what), "synchronise this machine's clock (NTP)")
			return
		}
		d.pass(fmt.Sprintf("the clock: within %v of %s's", max(skew, time.Second), what))
	}
	if db != nil {
		sent := time.Now()
		var now time.Time
		if err := db.QueryRow(ctx, `SELECT now()`).Scan(&now); err == nil {
			check("the database", now, sent)
		}
	}
	if base := getenv(invoicing.EnvBaseURL); base != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/clients?page_size=1", nil)
		if err != nil {
			return
		}
		sent := time.Now()
		resp, err := http.DefaultClient.Do(req) // no key: the answer's Date is all it reads
		if err != nil {
			return // CheckAPI said why
		}
		resp.Body.Close()
		if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			check("the service", date, sent)
		}
	}
}

// port checks that the replicas' listen address is free.
func (d *checkup) port(addr string) {
	what := "the --listen address " + addr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		d.fail(what, oneLine(err), "stop what listens there, or give the replicas another --listen")
		return
	}
	ln.Close()
	d.pass(what + ": free")
}
