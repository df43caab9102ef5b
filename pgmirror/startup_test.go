package pgmirror_test

import (
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// schemaExists reports whether the package's PostgreSQL has schema.
func schemaExists(t testing.TB, schema string) bool {
	t.Helper()
	db := checkerPool(t, "public")
	return count(t, db, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, schema) == 1
}

// A wrong API key or base URL is found by the first request, before
// anything is created in the database: invoicing-mirror exits 1, in
// --once mode and in serve mode alike, says what to check, and leaves no
// schema behind.
func TestAWrongKeyOrBaseURLLeavesNoSchema(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	secret := strings.Repeat("5e", 32)
	for name, c := range map[string]struct {
		baseURL, key string
		want         string
	}{
		"a wrong key":      {srv.URL, "sk_test_wrong_key_that_must_not_show", "401"},
		"a wrong base URL": {strings.TrimSuffix(srv.URL, "/api/v1/external") + "/api/v2/external", srv.FullKey, "404"},
	} {
		for _, mode := range [][]string{{"--once"}, {"--listen", "127.0.0.1:0"}} {
			t.Run(name+" "+mode[0], func(t *testing.T) {
				schema := newSchemaName()
				start := time.Now()
				out, code := runCommand(t, commandEnv(c.baseURL, c.key, secret, server.URL), append(mode, "--schema", schema)...)
				assert.Equal(t, 1, code, "%s", out)
				assert.Less(t, time.Since(start), 10*time.Second, "no retrying a refusal")
				assert.Contains(t, out, "refused the mirror's first request (check the base URL and the API key)")
				assert.Contains(t, out, c.want)
				assert.NotContains(t, out, "sk_test_wrong_key_that_must_not_show")
				assert.NotContains(t, out, srv.FullKey)
				assert.Equal(t, 1, strings.Count(strings.TrimSpace(out), "level=ERROR"), "%s", out)
				assert.False(t, schemaExists(t, schema), "schema %s was created", schema)
			})
		}
	}
}

// --once does not wait for an API it cannot reach: it exits 1 at once,
// without creating the schema.
func TestOnceExitsWhenTheAPIIsUnreachable(t *testing.T) {
	t.Parallel()
	// A port that closes every connection at once, held for the test: a
	// port merely closed could be taken meanwhile by another test's server.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a port nobody listens on answers
			}
			conn.Close()
		}
	}()
	addr := ln.Addr().String()

	schema := newSchemaName()
	start := time.Now()
	out, code := runCommand(t, commandEnv("http://"+addr+"/api/v1/external", "sk_test_key", "", server.URL), "--once", "--schema", schema)
	took := time.Since(start)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="pgmirror: the API at http://`+addr+`/api/v1/external is unreachable: `)
	assert.False(t, schemaExists(t, schema))
	t.Logf("--once against an unreachable API exited %d after %v", code, took.Round(time.Millisecond))
}

// --once stops at its --timeout, exits 1 and says so; what it wrote is
// kept, and the next run goes on from there.
func TestOnceStopsAtItsTimeout(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 300, clients: 5}, rand.New(rand.NewPCG(31, 32)))
	// Every invoice list fails: the backfill retries until the deadline.
	srv.InjectFault(invoicingtest.Fault{Status: 503, Path: "/invoices", Count: 1_000_000})
	schema := newSchemaName()
	env := commandEnv(srv.URL, srv.FullKey, "", server.URL)

	start := time.Now()
	out, code := runCommand(t, env, "--once", "--timeout", "3s", "--schema", schema)
	took := time.Since(start)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="not done within --timeout 3s; what was written is kept, and the next run goes on from there"`)
	assert.Less(t, took, 10*time.Second, "it stops at the deadline, after the batch in progress")
	t.Logf("--once --timeout 3s against a failing API exited %d after %v", code, took.Round(time.Millisecond))

	srv.ClearFaults()
	out, code = runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 0, code, "%s", out)
	requireMirrorEqual(t, srv, schema)
}

// Serving, invoicing-mirror waits for a database that is not there yet,
// with one line, answering /healthz (and /readyz 503) meanwhile, and
// starts when it comes; --once exits 1 at once, on one line without the
// password.
func TestStartupWaitsForTheDatabase(t *testing.T) {
	t.Parallel()
	pg, err := testservers.StartPostgres()
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	require.NoError(t, pg.Kill())
	srv, _ := newFake(t)
	const password = "db-password-that-must-not-show"
	databaseURL := strings.Replace(pg.URL, "postgres@", "postgres:"+password+"@", 1)
	require.Contains(t, databaseURL, password)
	env := commandEnv(srv.URL, srv.FullKey, strings.Repeat("8b", 32), databaseURL)
	schema := newSchemaName()

	out, code := runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="pgmirror: `)
	assert.Contains(t, out, "connect: connection refused")
	assert.Equal(t, 2, strings.Count(strings.TrimSpace(out), "\n")+1, "starting, stopped: %s", out)
	assert.NotContains(t, out, password)
	t.Logf("--once without its database:\n%s", out)

	p := startServing(t, env, "--listen", "127.0.0.1:0", "--schema", schema)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return countContaining(p.since(time.Time{}), `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`) == 1,
			"the line saying the database is away"
	})
	status, _, err := get(p.base + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	status, _, err = get(p.base + "/readyz")
	require.NoError(t, err)
	assert.Equal(t, 503, status)

	require.NoError(t, pg.Start())
	waitStatus(t, p.base+"/readyz", 200, time.Minute)
	lines := p.since(time.Time{})
	assert.Equal(t, 1, countContaining(lines, `msg="pgmirror: PostgreSQL is not answering`))
	assert.Equal(t, 1, countContaining(lines, `msg="pgmirror: PostgreSQL answers again"`))
	for _, l := range lines {
		assert.NotContains(t, l, password)
	}
	p.stop(t)
}
