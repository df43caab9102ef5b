package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// A member the Selection leaves out is nowhere in the database, and one it
// hashes is there only as its hash: a business's clients' emails and its
// invoices' notes and lines' descriptions are left out, its clients'
// phones hashed. Values
// carrying a marker are planted in the service before the backfill and
// after it (events, whose payloads carry an email: the inbox; changes: the
// change feed and the history); then every column of every table of the
// mirror's schema is searched for the marker, and the mirror's logs. A
// value kept carries another marker, which the same search finds, so that
// the search is known to look where the data is.
func TestAMemberLeftOutIsNowhereInTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const kept = "keptmarker"
	f := newFleet(t, 1)
	b := f.Businesses[0]
	var logs syncBuffer
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), func(cfg *pgmirror.Config) {
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	sel := pgmirror.Selection{
		Exclude: []string{"clients.email", "invoices.notes", "invoices.line_items.description"},
		Hash:    []string{"clients.phone"},
	}
	require.NoError(t, mm.Businesses().Add(ctx, pgmirror.BusinessConfig{
		Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Selection: sel}))
	b.Subscribe(mm.URL+"/webhooks/"+b.Name, secretOf(b.Name))

	c := f.Client(t)
	plant := func(n string) (client, invoice string) { return plantSecrets(t, c, b, kept+" Ltd "+n, n) }
	_, first := plant("1")
	run(t, mm.Mirror)
	waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	second, _ := plant("2") // by events
	notes := secretMarker + " notes changed"
	require.NoError(t, b.Srv.UpdateInvoice(first, invoicingtest.InvoiceUpdate{Notes: &notes})) // a version to the history
	waitUntil(t, time.Minute, func() (bool, string) {
		n := count(t, mm.DB, `SELECT count(*) FROM clients WHERE id = $1`, second)
		return n == 1, "the client added after the backfill, mirrored"
	})
	waitDrained(t, mm.DB, time.Minute)
	_, err := mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)

	// The service has the values; the mirror has none of them.
	raw := serviceRecords(t, scope{URL: f.URL, Key: b.Key}, "/clients", "clients")
	require.Contains(t, jsonText(t, raw), secretMarker+"1@example.org", "the service sends the email")
	found := searchSchema(t, mm.DB, mm.Schema, secretMarker)
	assert.Empty(t, found, "tables and columns holding a value left out or hashed")
	assert.NotContains(t, strings.ToLower(logs.String()), secretMarker)
	keptIn := searchSchema(t, mm.DB, mm.Schema, kept)
	for _, where := range []string{"clients.name", "clients.raw", "invoices.client_name", "invoices_history.raw", "mirror_changes.new_values"} {
		assert.Contains(t, keptIn, where, "the search finds a value kept")
	}
	assert.Positive(t, count(t, mm.DB, `SELECT count(*) FROM invoices_history WHERE id = $1`, first), "the history holds a version")
	assert.Positive(t, count(t, mm.DB, `SELECT count(*) FROM invoicing_webhook_inbox WHERE event_type = 'contact.created'`))

	// The hashes: 64 hex digits, the same for the same phone, in the
	// column and in raw; the members left out are NULL.
	rows, err := mm.DB.Query(ctx, `SELECT phone, raw->>'phone', email, raw ? 'email' FROM clients WHERE name LIKE $1`, kept+"%")
	require.NoError(t, err)
	var hashes []string
	for rows.Next() {
		var phone, rawPhone string
		var email *string
		var hasEmail bool
		require.NoError(t, rows.Scan(&phone, &rawPhone, &email, &hasEmail))
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), phone)
		assert.Equal(t, phone, rawPhone)
		assert.Nil(t, email)
		assert.False(t, hasEmail)
		hashes = append(hashes, phone)
	}
	require.NoError(t, rows.Err())
	require.Len(t, hashes, 2)
	assert.Equal(t, hashes[0], hashes[1], "equal values, equal hashes: they still join")
	assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM invoice_lines WHERE description IS NOT NULL AND invoice_id = $1`, first))
}

// secretMarker is in each value the tests plant for a Selection to leave
// out or hash: searchSchema finds any left in the database.
const secretMarker = "s3cr3tmarker"

// plantSecrets adds to b's service a client called name whose email (with
// n) and phone carry secretMarker, and an invoice of it whose notes and
// line's description carry it, and returns their ids.
func plantSecrets(t testing.TB, c *invoicing.Client, b *fleetBusiness, name, n string) (client, invoice string) {
	t.Helper()
	client = b.Srv.AddClient(invoicingtest.Contact{Name: name, Email: secretMarker + n + "@example.org", Phone: "+61 " + secretMarker})
	res, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{ClientID: client, Notes: secretMarker + " notes " + n,
		LineItems: []invoicing.LineItemParams{{Description: secretMarker + " line " + n, UnitPrice: decimal.NewFromInt(100),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID}}}, invoicing.WithAPIKey(b.Key))
	require.NoError(t, err)
	return client, res.ID
}

// jsonText is records as text, to search.
func jsonText(t testing.TB, records []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		for k, v := range r {
			b.WriteString(k + "=" + strings.TrimSpace(strings.ReplaceAll(toText(v), "\n", " ")) + " ")
		}
	}
	return b.String()
}

func toText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// searchSchema returns the "table.column" of every column of every table
// of schema whose text (a bytea's as escaped text) holds marker, case
// aside.
func searchSchema(t testing.TB, db *pgxpool.Pool, schema, marker string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns AS c
		JOIN information_schema.tables AS t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE' ORDER BY 1, 2`, schema)
	require.NoError(t, err)
	type column struct{ table, name, typ string }
	var cols []column
	for rows.Next() {
		var c column
		require.NoError(t, rows.Scan(&c.table, &c.name, &c.typ))
		cols = append(cols, c)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, cols)
	var found []string
	for _, c := range cols {
		text := `"` + c.name + `"::text`
		if c.typ == "bytea" {
			text = `encode("` + c.name + `", 'escape')`
		}
		if count(t, db, `SELECT count(*) FROM "`+c.table+`" WHERE `+text+` ILIKE '%' || $1 || '%'`, marker) > 0 {
			found = append(found, c.table+"."+c.name)
		}
	}
	return found
}

// A business's Selection is recorded when it is first served; changed
// before the mirror holds anything, it is taken; changed over data, what
// the mirror holds is rewritten to it (the phones left out are filled in
// again by a walk). A replica still running with the Selection before
// stops with ErrSelectionChanged once it writes.
func TestASelectionChangedOverDataIsApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, _ := newFake(t)
	cfg := testConfig(sdkClient(srv), newSchemaName())
	cfg.Selection = pgmirror.Selection{Exclude: []string{"clients.email"}}
	openMirror(t, cfg) // migrated: recorded, before any data
	db := adminPool(t, cfg.Schema)
	require.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_selections WHERE selection = '{"exclude": ["clients.email"]}'`))
	cfg.Selection = pgmirror.Selection{Exclude: []string{"clients.phone"}}
	before := openMirror(t, cfg) // no data yet: taken
	require.NoError(t, before.Backfill(ctx))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM clients WHERE phone IS NOT NULL`))
	assert.Positive(t, count(t, db, `SELECT count(*) FROM clients WHERE email IS NOT NULL`))

	cfg.Selection = pgmirror.Selection{} // everything again, over data
	m := openMirror(t, cfg)
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_backfill WHERE resource = 'clients'`), "the clients walked again")
	require.NoError(t, m.Backfill(ctx))
	assert.Positive(t, count(t, db, `SELECT count(*) FROM clients WHERE phone IS NOT NULL`))
	requireTablesEqual(t, srv, cfg.Schema, pgmirror.Resources())

	_, err := before.Reconcile(ctx) // its rows shaped by the Selection before
	require.ErrorContains(t, err, "selection changed meanwhile")
	_, err = before.Reconcile(ctx)
	require.ErrorIs(t, err, pgmirror.ErrSelectionChanged)
	assert.ErrorContains(t, err, "keeps everything, this replica exclude clients.phone")

	pc, err := pgxpool.ParseConfig(postgresOf(cfg.Schema).URL)
	require.NoError(t, err)
	// Errors in the Selection itself.
	for sel, want := range map[string]pgmirror.Selection{
		`no resource "nope"`:              {Exclude: []string{"nope.email"}},
		"a record's id":                   {Exclude: []string{"clients.id"}},
		"clients have no lines":           {Exclude: []string{"clients.line_items.x"}},
		`want "resource.member"`:          {Exclude: []string{"invoices"}},
		"a member's name":                 {Exclude: []string{"invoices.total hash"}},
		"its column is numeric, not text": {Hash: []string{"invoices.total"}},
		"both excluded and hashed":        {Exclude: []string{"clients.name"}, Hash: []string{"clients.name"}},
		"hashing members needs a keyring": {Hash: []string{"clients.name"}},
	} {
		cfg.Selection = want
		_, err := pgmirror.New(ctx, pc, cfg)
		assert.ErrorContains(t, err, sel)
	}
}

// A business whose Selection names resources mirrors those alone: its
// backfill lists them and is complete with them (the business ready, its
// status counting two resources), an event of another resource (a supplier
// added) is not followed, the reconciliation and the verification walk
// them alone, and nothing of the others is stored. A resource named
// later is backfilled.
func TestABusinessMirrorsTheResourcesItNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 30, quotes: 5, bills: 5, clients: 5, suppliers: 5, items: 5, bankTransactions: 5}, 35, 1)
	cfg := testConfig(sdkClient(srv), newSchemaName())
	cfg.Selection = pgmirror.Selection{Resources: []string{pgmirror.Invoices, pgmirror.Clients}}
	m := openMirror(t, cfg)
	hookUp(t, srv, clock, m)
	run(t, m)
	db := adminPool(t, cfg.Schema)
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE ready_at IS NOT NULL`) == 1, "the business ready"
	})
	client := srv.AddClient(invoicingtest.Contact{Name: "A client"})
	supplier := srv.AddSupplier(invoicingtest.Contact{Name: "A supplier"})
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM clients WHERE id = $1`, client) == 1, "the client's event followed"
	})
	waitDrained(t, db, time.Minute)
	_, err := m.Reconcile(ctx)
	require.NoError(t, err)
	v, err := m.Verify(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, v.Differences)
	var verified []string
	for _, r := range v.Resources {
		verified = append(verified, r.Resource)
	}
	assert.ElementsMatch(t, cfg.Selection.Resources, verified)

	for _, res := range pgmirror.Resources() {
		n := count(t, db, `SELECT count(*) FROM `+res)
		if res == pgmirror.Invoices || res == pgmirror.Clients {
			assert.Positive(t, n, res)
		} else {
			assert.Zero(t, n, "%s, not mirrored", res)
		}
	}
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_pending_fetch`), "the supplier's event requested nothing")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM suppliers WHERE id = $1`, supplier))
	assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL`))
	st, err := m.Status(ctx, "")
	require.NoError(t, err)
	require.Len(t, st.Businesses, 1)
	assert.Equal(t, 2, st.Businesses[0].Resources)
	assert.Equal(t, 2, st.Businesses[0].Backfilled)
	requireTablesEqual(t, srv, cfg.Schema, cfg.Selection.Resources)

	// Bills named too: the backfill walks them, and nothing else.
	cfg.Selection.Resources = append(cfg.Selection.Resources, pgmirror.Bills)
	again := openMirror(t, cfg)
	require.NoError(t, again.Backfill(ctx))
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL`))
	requireTablesEqual(t, srv, cfg.Schema, cfg.Selection.Resources)
}

// requireTablesEqual fails t unless the mirror's tables of resources (and
// their lines) in schema equal srv's records.
func requireTablesEqual(t testing.TB, srv *invoicingtest.Server, schema string, resources []string) {
	t.Helper()
	db := checkerPool(t, schema)
	for _, res := range checkedResources {
		if slices.Contains(resources, res.table) {
			want := serviceRecords(t, serverScope(srv), res.path, res.key)
			require.Empty(t, compareTable(t, db, pgmirror.DefaultBusiness, res, want), res.table)
		}
	}
}

// Changing a business's Selection rewrites what the mirror holds of it.
// A business of two replicas is mirrored whole, with recognisable values
// planted in the service before the backfill and by events after it (the
// inbox, the change feed and the history hold them). Then, while events
// go on, it is added again leaving out its clients' emails, its invoices'
// notes and its lines' descriptions, hashing its clients' phones, and no
// longer mirroring bank transactions. Once applied:
//
//   - the planted values are nowhere in the database, the phones are
//     hashes in their column and in raw, and nothing of the bank
//     transactions is held; the replica that applied it logged the rows
//     it rewrote and deleted;
//   - the change feed still replays to the tables, and a verification
//     walk finds the tables equal to the service as the Selection keeps
//     it;
//   - the same Selection added again rewrites nothing;
//   - everything kept again is filled in by walks: the tables equal the
//     service, the emails and the bank transactions back.
func TestChangingTheSelectionRewritesWhatIsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 1)
	b := f.Businesses[0]
	var logs syncBuffer
	logTo := func(cfg *pgmirror.Config) { // both replicas': either applies the change
		cfg.Logger = logs.logger()
	}
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), logTo)
	mm.add(t, b, 0)
	run(t, mm.Mirror)
	mm.replica(t, f, logTo)

	c := f.Client(t)
	n := 0
	plant := func() (client, invoice string) {
		n++
		return plantSecrets(t, c, b, fmt.Sprintf("Client %d", n), fmt.Sprint(n))
	}
	_, first := plant()
	waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	waitBusinessReady(t, mm, b.Name)
	plant()
	// The first invoice's own version is mirrored before it changes: an
	// event fetched late would find the change, and the history would
	// never hold the planted notes.
	waitDrained(t, mm.DB, time.Minute)
	notes := secretMarker + " notes changed"
	require.NoError(t, b.Srv.UpdateInvoice(first, invoicingtest.InvoiceUpdate{Notes: &notes})) // a version to the history
	waitDrained(t, mm.DB, time.Minute)
	_, err := mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)
	for _, where := range []string{"clients.email", "clients.raw", "invoices.notes", "invoices_history.notes", "invoice_lines.description",
		"mirror_changes.new_values", "invoicing_webhook_inbox.body"} {
		require.Contains(t, searchSchema(t, mm.DB, mm.Schema, secretMarker), where, "planted")
	}
	require.Positive(t, count(t, mm.DB, `SELECT count(*) FROM bank_transactions`))

	// The change, with events before and after it.
	var mirrored []string
	for _, res := range pgmirror.Resources() {
		if res != pgmirror.BankTransactions {
			mirrored = append(mirrored, res)
		}
	}
	sel := pgmirror.Selection{
		Resources: mirrored,
		Exclude:   []string{"clients.email", "invoices.notes", "invoices.line_items.description"},
		Hash:      []string{"clients.phone"},
	}
	add := func(sel pgmirror.Selection) {
		require.NoError(t, mm.Businesses().Add(ctx, pgmirror.BusinessConfig{
			Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Selection: sel}))
	}
	plant()
	add(sel)
	_, third := plant()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	waitSelection(t, mm, b.Name, sel)
	_, fourth := plant()
	// A delivery that reached a replica still holding the old Selection was
	// refused (errStaleSelection); the service sends it again a minute
	// later by its clock, which stands still until moved on.
	retry := time.Now().Add(2 * time.Second)
	waitUntil(t, time.Minute, func() (bool, string) {
		if count(t, mm.DB, `SELECT count(*) FROM invoices WHERE id = ANY($1)`, []string{third, fourth}) == 2 {
			return true, ""
		}
		if time.Now().After(retry) {
			f.Clock.Advance(time.Minute)
			retry = time.Now().Add(2 * time.Second)
		}
		return false, "the invoices planted since, mirrored"
	})
	waitDrained(t, mm.DB, time.Minute)
	_, err = mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)

	assert.Empty(t, searchSchema(t, mm.DB, mm.Schema, secretMarker), "tables and columns holding a value left out or hashed")
	applied := logs.String()
	require.Contains(t, applied, "the business's selection changed: what the mirror held is rewritten to it")
	assert.Regexp(t, regexp.MustCompile(`rows_rewritten=[1-9]`), applied)
	assert.Regexp(t, regexp.MustCompile(`rows_deleted=[1-9]`), applied)
	assert.NotContains(t, strings.ToLower(applied), secretMarker)
	rows, err := mm.DB.Query(ctx, `SELECT phone, raw->>'phone' FROM clients WHERE name LIKE 'Client %'`)
	require.NoError(t, err)
	var phones []string
	for rows.Next() {
		var phone, raw string
		require.NoError(t, rows.Scan(&phone, &raw))
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), phone)
		assert.Equal(t, phone, raw)
		phones = append(phones, phone)
	}
	require.NoError(t, rows.Err())
	require.Len(t, slices.Compact(phones), 1, "every planted phone, hashed alike (rewritten or fetched since)")
	for _, table := range []string{"bank_transactions", "bank_transactions_history", "mirror_changes WHERE resource = 'bank_transactions'",
		"mirror_backfill WHERE resource = 'bank_transactions'"} {
		assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM `+table), table)
	}
	requireFeedReplays(t, mm.Mirror, mm.DB)
	v, err := mm.Verify(ctx, b.Name)
	require.NoError(t, err)
	assert.Empty(t, v.Differences, "the tables, as the Selection keeps the service")

	// The same Selection again: nothing is rewritten. A replica started
	// since has applied it once its Migrate returns.
	before := rowVersions(t, mm)
	add(sel)
	var started syncBuffer
	mm.open(t, f, func(cfg *pgmirror.Config) { cfg.Logger = started.logger() })
	assert.Equal(t, before, rowVersions(t, mm), "rows written")
	assert.NotContains(t, started.String(), "selection changed")

	// Everything kept again: filled in by walks.
	add(pgmirror.Selection{})
	waitSelection(t, mm, b.Name, pgmirror.Selection{})
	waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	waitDrained(t, mm.DB, time.Minute)
	requireBusinessEqual(t, f, mm, b)
	assert.Contains(t, searchSchema(t, mm.DB, mm.Schema, secretMarker), "clients.email")
	requireFeedReplays(t, mm.Mirror, mm.DB)
}

// waitSelection waits until the Selection recorded for business is sel.
func waitSelection(t testing.TB, mm *multiMirror, business string, sel pgmirror.Selection) {
	t.Helper()
	b, err := json.Marshal(sel)
	require.NoError(t, err)
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM mirror_selections WHERE business = $1 AND selection @> $2::jsonb AND $2::jsonb @> selection`,
			business, string(b)) == 1, "the selection applied: " + string(b)
	})
}

// waitBusinessReady waits until business has had its first complete
// copy.
func waitBusinessReady(t testing.TB, mm *multiMirror, business string) {
	t.Helper()
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM mirror_reconcile WHERE business = $1 AND ready_at IS NOT NULL`, business) == 1, business + " ready"
	})
}

// rowVersions returns, for every table of the mirror's records, its rows'
// xmin, the transaction that wrote each: rows written again have others.
func rowVersions(t testing.TB, mm *multiMirror) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, res := range pgmirror.Resources() {
		for _, table := range []string{res, res + "_history"} {
			var v string
			require.NoError(t, mm.DB.QueryRow(context.Background(),
				`SELECT coalesce(string_agg(xmin::text, ',' ORDER BY ctid), '') FROM `+table).Scan(&v))
			out[table] = v
		}
	}
	var feed string
	require.NoError(t, mm.DB.QueryRow(context.Background(), `SELECT count(*)::text FROM mirror_changes`).Scan(&feed))
	out["mirror_changes"] = feed
	return out
}

// A business reconciled by hand after its backfill and before a round
// recorded its first complete copy (ready_at) is still made ready: here
// its ready_at is taken back after it was recorded, and a running mirror
// records it again, so that Verify and Resync, which need it, take the
// business.
func TestABusinessReconciledBeforeItsFirstCompleteCopyIsMadeReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 1)
	b := f.Businesses[0]
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), nil)
	mm.add(t, b, 0)
	run(t, mm.Mirror)
	waitBusinessReady(t, mm, b.Name)
	_, err := mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)
	_, err = mm.DB.Exec(ctx, `UPDATE mirror_reconcile SET ready_at = NULL`)
	require.NoError(t, err)
	waitBusinessReady(t, mm, b.Name)
	v, err := mm.Verify(ctx, b.Name)
	require.NoError(t, err)
	assert.Empty(t, v.Differences)
}

// A replica that has not yet seen a Selection applied by another stores a
// delivery with what the Selection before kept (here everything: a
// contact.created payload carries the email); the replica that processes
// it keeps of it only what the Selection recorded keeps.
func TestADeliveryStoredUnderTheSelectionBeforeIsRewrittenWhenProcessed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 1)
	b := f.Businesses[0]
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), nil)
	ep := mm.add(t, b, 0)
	run(t, mm.Mirror)
	waitBusinessReady(t, mm, b.Name)

	// The stale replica: migrated (the business loaded, keeping
	// everything), serving webhooks, running nothing (no watcher reloads
	// it).
	_, stale := mm.open(t, f)

	sel := pgmirror.Selection{Exclude: []string{"clients.email"}}
	require.NoError(t, mm.Businesses().Add(ctx, pgmirror.BusinessConfig{
		Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Selection: sel}))
	waitSelection(t, mm, b.Name, sel)
	ep.Delete() // the deliveries go to the stale replica alone
	b.Subscribe(stale+"/webhooks/"+b.Name, secretOf(b.Name))

	client := b.Srv.AddClient(invoicingtest.Contact{Name: "Stale", Email: secretMarker + "@example.org"})
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM invoicing_webhook_inbox WHERE event_type = 'contact.created' AND status = 'processed'`) == 1 &&
			count(t, mm.DB, `SELECT count(*) FROM clients WHERE id = $1`, client) == 1, "the delivery processed and its client mirrored"
	})
	assert.Empty(t, searchSchema(t, mm.DB, mm.Schema, secretMarker), "the email, anywhere")
	assert.Equal(t, 1, count(t, mm.DB, `SELECT count(*) FROM invoicing_webhook_inbox
		WHERE event_type = 'contact.created' AND convert_from(body, 'UTF8')::jsonb ? 'contact_id'`), "the delivery keeps what the mirror reads")
}
