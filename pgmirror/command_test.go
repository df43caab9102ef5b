package pgmirror_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// invoicing-mirror --once backfills with a progress line and exits 0; run
// again on a backfilled mirror it reconciles once. Its output holds none of
// the secrets it was given: the API key, the webhook secret, the database
// password (PostgreSQL's trust authentication accepts any).
func TestTheCommandBackfillsOnceAndPrintsNoSecret(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 2500, quotes: 200, clients: 20}, rand.New(rand.NewPCG(21, 22)))
	schema := newSchemaName()
	const dbPassword = "db-password-that-must-not-show"
	databaseURL := strings.Replace(server.URL, "postgres@", "postgres:"+dbPassword+"@", 1)
	secret := "whsec_that_must_not_show_" + strings.Repeat("0", 40)
	once := func() string {
		cmd := exec.Command(mirrorBinary(t), "--once", "--schema", schema, "--budget", "10000")
		cmd.Env = append(os.Environ(), "INVOICING_BASE_URL="+srv.URL, "INVOICING_API_KEY="+srv.FullKey,
			"INVOICING_WEBHOOK_SECRET="+secret, "DATABASE_URL="+databaseURL)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, s := range []string{srv.FullKey, secret, dbPassword} {
			assert.NotContains(t, string(out), s)
		}
		return string(out)
	}

	out := once()
	assert.Regexp(t, `backfill: \d+ records, \d+/s; .*invoices 2500/2500`, out, "the last progress line")
	assert.Contains(t, out, `msg="invoicing-mirror: backfill complete"`)
	requireMirrorEqual(t, srv, schema)

	srv.AddClient(newContact("Added since"))
	out = once()
	assert.Contains(t, out, `msg="invoicing-mirror: already backfilled; reconciling once"`)
	assert.Contains(t, out, `msg="invoicing-mirror: reconciliation corrected rows" resource=clients rows=1`)
	requireMirrorEqual(t, srv, schema)
}
