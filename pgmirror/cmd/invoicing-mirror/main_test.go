package main

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// env is a getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

var fullEnv = map[string]string{
	"INVOICING_BASE_URL":       "http://127.0.0.1:1/api/v1/external",
	"INVOICING_API_KEY":        "sk_test_key_that_must_not_show",
	"INVOICING_WEBHOOK_SECRET": "whsec_that_must_not_show_0123456789abcdef0123456789abcdef012345",
	"DATABASE_URL":             "postgres://mirror:db-password-that-must-not-show@127.0.0.1:1/mirror?connect_timeout=2",
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		args []string
		drop string
		want string
	}{
		"no API key":         {drop: "INVOICING_API_KEY", want: "set INVOICING_API_KEY"},
		"no database":        {drop: "DATABASE_URL", want: "set DATABASE_URL"},
		"no webhook secret":  {drop: "INVOICING_WEBHOOK_SECRET", want: "set INVOICING_WEBHOOK_SECRET"},
		"an unknown flag":    {args: []string{"--nope"}, want: "invoicing-mirror: unknown flag --nope\n"},
		"an argument":        {args: []string{"extra"}, want: `unexpected argument "extra"`},
		"a bad log level":    {args: []string{"--log-level", "loud"}, want: "invalid value"},
		"a bad reconciling":  {args: []string{"--reconcile-interval", "soon"}, want: "invalid value"},
		"help is no failure": {args: []string{"--help"}, want: "Configuration comes from the environment"},
	} {
		t.Run(name, func(t *testing.T) {
			vars := maps.Clone(fullEnv)
			delete(vars, c.drop)
			var out bytes.Buffer
			code := run(context.Background(), c.args, env(vars), &out, &out)
			if name == "help is no failure" {
				assert.Equal(t, exitOK, code)
			} else {
				assert.Equal(t, exitUsage, code)
			}
			assert.Contains(t, out.String(), c.want)
		})
	}
}

// A flag mistake is explained on three lines, the flag's usage line
// between the mistake and the pointer to --help, and not with the whole
// help.
func TestFlagMistakesShowThatFlagsUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lisen", ":9090"}, "invoicing-mirror: unknown flag --lisen (did you mean --listen?)\n" +
			"  --listen ADDR  serve the webhook endpoint and the health checks on ADDR (port 0 picks a free port) (default :8080)\n"},
		{[]string{"-reconcile-intervall=5m"}, "invoicing-mirror: unknown flag --reconcile-intervall (did you mean --reconcile-interval?)\n" +
			"  --reconcile-interval DURATION  re-list everything every DURATION (default 1h0m0s)\n"},
		{[]string{"--reconcile-interval", "abc"}, `invoicing-mirror: invalid value "abc" for --reconcile-interval: not a duration (such as 30s, 5m or 1h30m)` + "\n" +
			"  --reconcile-interval DURATION  re-list everything every DURATION (default 1h0m0s)\n"},
		{[]string{"--prefetch", "many"}, `invoicing-mirror: invalid value "many" for --prefetch: not a whole number` + "\n" +
			"  --prefetch int  list pages fetched ahead (1 to 64) (default 8)\n"},
		{[]string{"--once=maybe"}, `invoicing-mirror: invalid value "maybe" for --once: not true or false` + "\n" +
			"  --once  backfill (or, when already backfilled, reconcile once) and exit\n"},
		{[]string{"--listen"}, "invoicing-mirror: --listen needs a value\n" +
			"  --listen ADDR  serve the webhook endpoint and the health checks on ADDR (port 0 picks a free port) (default :8080)\n"},
		{[]string{"--xyzzy"}, "invoicing-mirror: unknown flag --xyzzy\n"},
	} {
		var out bytes.Buffer
		code := run(context.Background(), c.args, env(fullEnv), &out, &out)
		assert.Equal(t, exitUsage, code, "%q", c.args)
		assert.Equal(t, c.want+"Run 'invoicing-mirror --help' for every flag.\n", out.String(), "%q", c.args)
	}
}

// --help prints the whole help, and exits 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	assert.Equal(t, exitOK, run(context.Background(), []string{"--help"}, nil, &out, &out))
	assert.True(t, strings.HasPrefix(out.String(), "Usage: invoicing-mirror [flags]\n"), out.String())
	for _, f := range []string{"coalesce", "fetch-lease", "listen", "log-level", "metrics", "once", "path", "prefetch", "reconcile-interval", "schema", "timeout"} {
		assert.Contains(t, out.String(), "\n  -"+f, "the help lists --%s", f)
	}
}

// --once needs no webhook secret.
func TestOnceNeedsNoWebhookSecret(t *testing.T) {
	t.Parallel()
	vars := maps.Clone(fullEnv)
	delete(vars, "INVOICING_WEBHOOK_SECRET")
	var out bytes.Buffer
	code := run(context.Background(), []string{"--once"}, env(vars), &out, &out)
	assert.Equal(t, exitError, code, "it gets as far as the API, which does not answer")
	assert.NotContains(t, out.String(), "set INVOICING_WEBHOOK_SECRET")
}

// Failures that involve the secrets' holders (an API and a database that
// do not answer, a DATABASE_URL that does not parse) print none of them.
// --once exits 1 at once when the API cannot be reached; serving, the
// command waits for it, with one line, until it is stopped.
func TestFailuresPrintNoSecret(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		args  []string
		dbURL string
		code  int
		want  string
	}{
		"once, API unreachable":     {[]string{"--once"}, fullEnv["DATABASE_URL"], exitError, `msg="invoicing-mirror: stopped" error="pgmirror: the API at http://127.0.0.1:1/api/v1/external is unreachable: `},
		"serve, API unreachable":    {[]string{"--listen", "127.0.0.1:0"}, fullEnv["DATABASE_URL"], exitOK, `msg="pgmirror: the API is not answering; retrying with backoff until it does"`},
		"once, database URL broken": {[]string{"--once"}, "postgres://mirror:db-password-that-must-not-show@[127.0.0.1/mirror", exitError, "DATABASE_URL is not a PostgreSQL URL"},
	} {
		t.Run(name, func(t *testing.T) {
			vars := maps.Clone(fullEnv)
			vars["DATABASE_URL"] = c.dbURL
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var out bytes.Buffer
			assert.Equal(t, c.code, run(ctx, c.args, env(vars), &out, &out), "%s", out.String())
			assert.Contains(t, out.String(), c.want)
			if c.dbURL == fullEnv["DATABASE_URL"] {
				assert.Equal(t, 1, strings.Count(out.String(), "connection refused"), "one line says it, whatever the retries: %s", out.String())
			}
			for _, secret := range []string{"sk_test_key_that_must_not_show", "whsec_that_must_not_show", "db-password-that-must-not-show"} {
				assert.NotContains(t, out.String(), secret)
			}
		})
	}
}
