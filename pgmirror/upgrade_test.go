package pgmirror_test

import (
	"context"
	"fmt"
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

// mirrorTables are the tables of a mirror's schema that hold data, as a
// version 4 schema has them.
var mirrorTables = []string{
	"invoices", "invoice_lines", "quotes", "quote_lines", "items", "clients", "suppliers", "bills", "bill_lines",
	"accounts", "tax_codes", "bank_accounts", "bank_transactions",
	"mirror_backfill", "mirror_pending_fetch", "mirror_reconcile", "mirror_changes", "mirror_event_lag", "mirror_confirmed",
}

// A mirror made before businesses (schema version 4) upgrades in place: its
// rows, lines, backfill state, change feed and queues all become the rows
// of the business the migration names, nothing lost; the upgraded mirror
// is exact, needs no new backfill, and keeps going on events.
func TestASingleBusinessMirrorUpgradesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 60}, rand.New(rand.NewPCG(25, 1)))

	// A mirror of today, whose rows become those of a version 4 schema.
	current := newSchemaName()
	copied(t, testConfig(sdkClient(srv), current))

	old := newSchemaName()
	db := adminPool(t, old)
	require.NoError(t, pgmirror.MigrateToVersionForTest(ctx, db, old, 4))
	_, err := db.Exec(ctx, `DELETE FROM mirror_reconcile`) // the v4 singleton row comes from the copy
	require.NoError(t, err)
	before := map[string]int{}
	for _, table := range mirrorTables {
		var cols []string
		rows, err := db.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
			ORDER BY ordinal_position`, old, table)
		require.NoError(t, err)
		for rows.Next() {
			var c string
			require.NoError(t, rows.Scan(&c))
			cols = append(cols, c)
		}
		require.NoError(t, rows.Err())
		list := strings.Join(cols, ", ")
		if table == "mirror_reconcile" {
			list = strings.Replace(list, "singleton", "true", 1)
		}
		_, err = db.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM %s.%s`, table, strings.Join(cols, ", "), list, current, table))
		require.NoError(t, err, table)
		before[table] = count(t, db, `SELECT count(*) FROM `+table)
	}
	// Sequences go on from the copied numbers, as they would have.
	_, err = db.Exec(ctx, `SELECT setval('mirror_fetch_seq', (SELECT max(last) FROM `+current+`.mirror_fetch_numbers)),
		setval('mirror_changes_seq_seq', (SELECT max(seq) FROM mirror_changes))`)
	require.NoError(t, err)
	require.Positive(t, before["invoice_lines"])
	require.Positive(t, before["mirror_changes"])
	require.Equal(t, 1, before["mirror_reconcile"])
	lastSeq := count(t, db, `SELECT last_value FROM mirror_fetch_seq`)

	// The upgrade, by a replica of today naming the business.
	cfg := testConfig(sdkClient(srv), old)
	cfg.Business = "acme"
	up := openMirror(t, cfg)
	require.NoError(t, up.Migrate(ctx))
	for _, table := range mirrorTables {
		assert.Equal(t, before[table], count(t, db, `SELECT count(*) FROM `+table), "rows of %s", table)
		assert.Equal(t, before[table], count(t, db, `SELECT count(*) FROM `+table+` WHERE business = 'acme'`), "rows of %s are acme's", table)
	}
	diffs, n := compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: "acme"}, checkerPool(t, old))
	require.Empty(t, diffs)
	require.Positive(t, n)
	// The rows written before the history began are the books as of now
	// (their versions counted from mirror_version, or mirror_changed_at).
	diffs, _ = compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: "acme"}, asOf{checkerPool(t, old), time.Now()})
	require.Empty(t, diffs)
	done, err := up.BackfillDone(ctx)
	require.NoError(t, err)
	assert.True(t, done, "the backfill's state is kept: no new backfill")
	var feed []pgmirror.Change
	waitFeedReadable(t, up)
	for c, err := range up.Changes(ctx, 0) {
		require.NoError(t, err)
		feed = append(feed, c)
	}
	require.Len(t, feed, before["mirror_changes"])
	assert.Equal(t, "acme", feed[len(feed)-1].Business)
	st, err := pgmirror.ReadStatus(ctx, db, old)
	require.NoError(t, err)
	require.Len(t, st.Businesses, 1)
	assert.Equal(t, "acme", st.Businesses[0].Name)
	assert.Equal(t, len(pgmirror.Resources()), st.Businesses[0].Backfilled)

	// The upgraded mirror goes on, under acme.
	inv := goesOn(t, srv, clock, up, old, "acme")
	assert.Greater(t, count(t, db, `SELECT mirror_fetch_seq FROM invoices WHERE id = $1`, inv.ID), lastSeq,
		"the business's fetch numbers go on above the sequence's")
}

// copied backfills and reconciles a mirror of cfg, then closes it: a
// complete copy for an upgrade to start from.
func copied(t testing.TB, cfg pgmirror.Config) {
	t.Helper()
	ctx := context.Background()
	m := openMirror(t, cfg)
	require.NoError(t, m.Backfill(ctx))
	_, err := m.Reconcile(ctx)
	require.NoError(t, err)
	m.Close()
}

// goesOn runs m, upgraded in schema, hooked to srv, and checks that it goes
// on: an event's invoice lands with its lines, under business, no walk
// lists the invoices again, and the mirror equals the service. It returns
// the event's invoice.
func goesOn(t testing.TB, srv *invoicingtest.Server, clock *invoicingtest.FakeClock, m *pgmirror.Mirror, schema, business string) *invoicing.Invoice {
	t.Helper()
	db := adminPool(t, schema)
	// (The comparisons list the invoices too.)
	lists := func() int { return requests(srv, "GET /invoices") - requests(srv, "GET /invoices/") }
	listsBefore := lists()
	hookUp(t, srv, clock, m)
	run(t, m)
	inv := createInvoice(t, sdkClient(srv), invoicing.InvoiceStatusDraft, 2)
	waitUntil(t, 20*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM invoice_lines WHERE business = $1 AND invoice_id = $2`, business, inv.ID)
		return n == 2, "the new invoice's lines"
	})
	assert.Equal(t, listsBefore, lists(), "no walk listed the invoices again")
	diffs, n := compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: business}, checkerPool(t, schema))
	require.Empty(t, diffs)
	require.Positive(t, n)
	return inv
}
