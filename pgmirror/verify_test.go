package pgmirror_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// verify compares the copy with the service and writes nothing: equal
// after the backfill; then a row deleted (missing), a row the service does
// not have (extra), a row tampered with (stale, naming the member) and a
// change that raised no event (stale until a reconciliation) are each
// found, the command printing them and exiting 3; after a reconciliation
// (and the tampering undone) it is equal again. It measures a verification
// of 5,000 invoices (1,000 with -short) and its requests.
func TestVerifyFindsEachDifferenceAndWritesNothing(t *testing.T) {
	t.Parallel()
	invoices := 5000
	if testing.Short() {
		invoices = 1000
	}
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: invoices, clients: 20}, rand.New(rand.NewPCG(61, 62)))
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	m := openMirror(t, cfg)
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))
	db := adminPool(t, schema)

	v, err := m.Verify(ctx, "", pgmirror.Invoices)
	require.NoError(t, err)
	assert.True(t, v.Equal(), "%+v", v.Differences)
	require.Len(t, v.Resources, 1)
	assert.Equal(t, invoices, v.Resources[0].Listed)
	assert.Equal(t, (invoices+99)/100, v.Requests, "a request a page")
	t.Logf("a verification of %d invoices took %v and %d requests", invoices, v.Took.Round(time.Millisecond), v.Requests)

	// The differences.
	missing, tampered, quiet := ids["invoices"][0], ids["invoices"][1], ids["invoices"][2]
	for _, sql := range []string{
		`DELETE FROM invoices WHERE id = '` + missing + `'`,
		`INSERT INTO invoices (business, id, raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at)
			VALUES ('default', '0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b', '{"id": "0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b"}', now(), 0, now(), now())`,
		`UPDATE invoices SET raw = jsonb_set(raw, '{notes}', '"tampered"') WHERE id = '` + tampered + `'`,
	} {
		_, err := db.Exec(ctx, sql)
		require.NoError(t, err)
	}
	require.NoError(t, srv.UpdateInvoice(quiet, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})) // no event reaches this mirror
	changes := count(t, db, `SELECT count(*) FROM mirror_changes`)
	var before string
	require.NoError(t, db.QueryRow(ctx, `SELECT md5(string_agg(raw::text, '' ORDER BY id)) FROM invoices`).Scan(&before))

	v, err = m.Verify(ctx, pgmirror.DefaultBusiness)
	require.NoError(t, err)
	got := map[string]pgmirror.Difference{}
	for _, d := range v.Differences {
		got[d.ID] = d
	}
	assert.Len(t, v.Differences, 4, "%+v", v.Differences)
	assert.Equal(t, pgmirror.DiffMissing, got[missing].Kind)
	assert.Equal(t, pgmirror.DiffExtra, got["0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b"].Kind)
	assert.Equal(t, pgmirror.Difference{Business: pgmirror.DefaultBusiness, Resource: pgmirror.Invoices, ID: tampered,
		Kind: pgmirror.DiffStale, Members: []string{"notes"}}, got[tampered])
	assert.Equal(t, pgmirror.DiffStale, got[quiet].Kind)
	assert.Contains(t, got[quiet].Members, "status")
	assert.Len(t, v.Resources, len(pgmirror.Resources()))
	var after string
	require.NoError(t, db.QueryRow(ctx, `SELECT md5(string_agg(raw::text, '' ORDER BY id)) FROM invoices`).Scan(&after))
	assert.Equal(t, before, after, "verify writes nothing")
	assert.Equal(t, changes, count(t, db, `SELECT count(*) FROM mirror_changes`))

	env := commandEnv(srv.URL, srv.FullKey, "", postgresOf(schema).URL)
	out, code := runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--resource", "invoices")
	assert.Equal(t, 3, code, "%s", out)
	assert.Contains(t, out, "default invoices "+tampered+": stale (notes)")
	assert.Contains(t, out, "default invoices 0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b: extra")
	assert.Contains(t, out, "4 record(s) differ, 0 business(es) not verified")
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--json", "--resource", "clients")
	assert.Equal(t, 0, code, "%s", out)
	var js struct {
		Equal     bool
		Resources []struct{ Listed int }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js), out)
	assert.True(t, js.Equal)
	require.Len(t, js.Resources, 1)
	assert.Equal(t, 20+2, js.Resources[0].Listed, "the seed's clients and the fake's own")

	// A reconciliation corrects what it can (it does not delete the extra
	// row: it marks it deleted), and the copy is equal again.
	_, err = m.Reconcile(ctx)
	require.NoError(t, err)
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema)
	assert.Equal(t, 0, code, "%s", out)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(out[strings.LastIndex(out, "\n\n"):]), "equal: "), "%s", out)
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--business", "nobody")
	assert.Equal(t, 2, code, "no complete copy of business nobody: %s", out)
	assert.Contains(t, out, "no complete copy yet")
}
