package pgmirror_test

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// invoicing-mirror doctor passes what a first run needs, and for each
// thing missing or wrong prints the check that failed and its fix, and
// exits 1: a refused key, no webhook secret, a listen address taken, a
// database it cannot reach; with many businesses, one whose values were
// sealed with a key the keyring lacks, and one whose key is refused. It
// prints no secret.
func TestDoctorPassesAFirstRunAndTellsEachFix(t *testing.T) {
	t.Parallel()
	srv := invoicingtest.NewTestServer(t)
	schema := newSchemaName()
	secret := strings.Repeat("5f", 32)
	env := commandEnv(srv.URL, srv.FullKey, secret, postgresOf(schema).URL)
	out, code := runCommand(t, env, "doctor", "--schema", schema, "--listen", "127.0.0.1:0")
	assert.Equal(t, 0, code, "%s", out)
	for _, s := range []string{"ok    the database (DATABASE_URL): reachable", "ok    the database is writable",
		"ok    schema " + schema + ": none yet", "ok    the API at " + srv.URL + " answers the API key",
		"ok    the webhook secret (INVOICING_WEBHOOK_SECRET): set", "ok    the clock: within", "every check passed"} {
		assert.Contains(t, out, s)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	bad := commandEnv(srv.URL, "sk_test_refused_key_that_must_not_show", "", "postgres://mirror:pw-that-must-not-show@127.0.0.1:1/mirror")
	out, code = runCommand(t, bad, "doctor", "--schema", schema, "--listen", taken.Addr().String(), "--timeout", "5s")
	assert.Equal(t, 1, code, "%s", out)
	for _, s := range []string{"FAIL  the database (DATABASE_URL):", "fix: start PostgreSQL",
		"FAIL  the webhook secret (INVOICING_WEBHOOK_SECRET): not set", "FAIL  the --listen address " + taken.Addr().String(),
		"fix: stop what listens there", "check(s) failed"} {
		assert.Contains(t, out, s)
	}
	assert.NotContains(t, out, "must-not-show")
	out, code = runCommand(t, append(bad[:len(bad)-1], "DATABASE_URL="+postgresOf(schema).URL), "doctor", "--schema", schema,
		"--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "FAIL  the API key (INVOICING_API_KEY):")
	assert.Contains(t, out, "fix: the service refuses the key")
	assert.NotContains(t, out, "must-not-show")

	// Many businesses: acme answers; globex's values were sealed with k0,
	// which the keyring no longer holds.
	k0, k1 := newKeyText(t, "k0"), newKeyText(t, "k1")
	db := adminPool(t, schema)
	for name, keys := range map[string]string{"acme": k1, "globex": k0} {
		require.NoError(t, pgmirror.MigrateSchema(t.Context(), db, schema, ""))
		require.NoError(t, pgmirror.NewBusinesses(db, schema, mustKeyring(t, keys)).Add(t.Context(),
			pgmirror.BusinessConfig{Name: name, APIKey: srv.FullKey, WebhookSecrets: []string{secret}}))
	}
	multi := append(commandEnv(srv.URL, "", "", postgresOf(schema).URL), pgmirror.EnvKeys+"="+k1)
	out, code = runCommand(t, multi, "doctor", "--schema", schema, "--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "ok    business acme: its key and secrets open, and the API answers its key")
	assert.Contains(t, out, "FAIL  business globex:")
	assert.Contains(t, out, "fix: put the key it was sealed with in INVOICING_MIRROR_KEYS")
	assert.NotContains(t, out, strings.TrimPrefix(k1, "k1:"))
}
