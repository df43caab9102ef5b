package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// ReadStatus tells each resource's phase and rows, the pending work and the
// event lag of the records events named, from the tables alone.
func TestReadStatusTellsPhasesRowsAndLag(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	schema := newSchemaName()
	db := adminPool(t, schema)

	_, err := pgmirror.ReadStatus(context.Background(), db, schema)
	assert.ErrorIs(t, err, pgmirror.ErrNotMigrated, "no schema yet")

	m := openMirror(t, testConfig(sdkClient(srv), schema))
	st, err := pgmirror.ReadStatus(context.Background(), db, schema)
	require.NoError(t, err)
	require.Len(t, st.Resources, len(pgmirror.Resources()))
	for _, r := range st.Resources {
		assert.Equal(t, pgmirror.PhaseBackfilling, r.Phase, r.Name)
	}
	assert.NotEmpty(t, st.Problems(time.Minute, time.Hour))

	hookUp(t, srv, clock, m)
	run(t, m)
	waitBackfilled(t, db, 30*time.Second)
	c := srv.Client()
	for range 3 {
		createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1)
	}
	waitDrained(t, db, 30*time.Second)
	var rows int64
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM invoices`).Scan(&rows))

	st, err = pgmirror.ReadStatus(context.Background(), db, schema)
	require.NoError(t, err)
	inv := st.Resources[0]
	for _, r := range st.Resources {
		if r.Name == pgmirror.Invoices {
			inv = r
		}
		assert.Equal(t, pgmirror.PhaseBackfilled, r.Phase, r.Name)
		assert.False(t, r.BackfillCompleted.IsZero(), r.Name)
	}
	assert.Equal(t, rows, inv.Rows)
	assert.GreaterOrEqual(t, inv.Lagged, int64(3), "each invoice's event; the payments' too")
	assert.Greater(t, inv.LagP99, 20*time.Millisecond, "at least the coalescing window")
	assert.Less(t, inv.LagP99, 10*time.Second)
	assert.Equal(t, inv.Lagged, st.Lagged)
	assert.Zero(t, st.InboxPending)
	assert.Empty(t, st.Problems(time.Minute, time.Hour))
}

// invoicing-mirror status exits 0 for a healthy mirror, 1 for a degraded
// one with each reason, and 2 when it cannot tell: no mirror in the
// schema, or a database it cannot reach (whose password it never prints).
func TestTheStatusCommandIsAHealthProbe(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 40, clients: 5}, rand.New(rand.NewPCG(51, 52)))
	schema := newSchemaName()
	env := commandEnv(srv.URL, srv.FullKey, "", server.URL)
	status := func(args ...string) (string, int) {
		t.Helper()
		return runCommand(t, env, append([]string{"status", "--schema", schema}, args...)...)
	}

	out, code := status()
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, "has no mirror_migrations table")

	out, code = runCommand(t, env, "--once", "--schema", schema)
	require.Equal(t, 0, code, "%s", out)
	out, code = status()
	assert.Equal(t, 0, code, "%s", out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^invoices +backfilled +40 +0 +20\d\d-`), out)
	assert.Contains(t, out, "\nreconciliation: none yet; the first is due a --reconcile-interval after 20")
	assert.Contains(t, out, "\nhealthy\n")

	db := adminPool(t, schema)
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_pending_fetch (business, resource, id, due_at, requested_at)
		VALUES ('default', 'quotes', 'a-quote', now() + interval '1 hour', now() - interval '10 minutes')`)
	require.NoError(t, err)
	_, err = db.Exec(context.Background(), `UPDATE mirror_backfill SET completed_at = NULL WHERE resource = 'bills'`)
	require.NoError(t, err)
	out, code = status()
	assert.Equal(t, 1, code, "%s", out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^bills +backfilling `), out)
	assert.Contains(t, out, "degraded:\n  - the backfill is not complete: bills\n  - 1 quotes wait to be fetched, the oldest for 10m0s (more than 5m0s)\n")
	out, code = status("--max-lag", "1h")
	assert.Equal(t, 1, code, "%s", out)
	assert.NotContains(t, out, "wait to be fetched")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	const password = "db-password-that-must-not-show"
	for i, v := range env {
		if strings.HasPrefix(v, "DATABASE_URL=") {
			env[i] = "DATABASE_URL=postgres://mirror:" + password + "@" + addr + "/mirror"
		}
	}
	out, code = status("--timeout", "3s")
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, "invoicing-mirror status: ")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %s", out)
	assert.NotContains(t, out, password)
}
