package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

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
	const secret = "s3cr3tmarker"
	f := newFleet(t, 1)
	b := f.Businesses[0]
	var logs syncBuffer
	logTo := func(cfg *pgmirror.Config) { // both replicas': either applies the change
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), logTo)
	mm.add(t, b, 0)
	run(t, mm.Mirror)
	mm.replica(t, f, logTo)

	c := f.Client(t)
	n := 0
	plant := func() (client, invoice string) {
		n++
		return plantSecrets(t, c, b, secret, fmt.Sprintf("Client %d", n), fmt.Sprint(n))
	}
	_, first := plant()
	waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	waitBusinessReady(t, mm, b.Name)
	plant()
	notes := secret + " notes changed"
	require.NoError(t, b.Srv.UpdateInvoice(first, invoicingtest.InvoiceUpdate{Notes: &notes})) // a version to the history
	waitDrained(t, mm.DB, time.Minute)
	_, err := mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)
	for _, where := range []string{"clients.email", "clients.raw", "invoices.notes", "invoices_history.notes", "invoice_lines.description",
		"mirror_changes.new_values", "invoicing_webhook_inbox.body"} {
		require.Contains(t, searchSchema(t, mm.DB, mm.Schema, secret), where, "planted")
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
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM invoices WHERE id = ANY($1)`, []string{third, fourth}) == 2, "the invoices planted since, mirrored"
	})
	waitDrained(t, mm.DB, time.Minute)
	_, err = mm.ReconcileBusiness(ctx, b.Name)
	require.NoError(t, err)

	assert.Empty(t, searchSchema(t, mm.DB, mm.Schema, secret), "tables and columns holding a value left out or hashed")
	applied := logs.String()
	require.Contains(t, applied, "the business's selection changed: what the mirror held is rewritten to it")
	assert.Regexp(t, regexp.MustCompile(`rows_rewritten=[1-9]`), applied)
	assert.Regexp(t, regexp.MustCompile(`rows_deleted=[1-9]`), applied)
	assert.NotContains(t, strings.ToLower(applied), secret)
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
	cfg := testConfig(f.Client(t), mm.Schema)
	cfg.Keys = mm.Keys
	cfg.Logger = slog.New(slog.NewTextHandler(&started, &slog.HandlerOptions{Level: slog.LevelInfo}))
	openMirror(t, cfg)
	assert.Equal(t, before, rowVersions(t, mm), "rows written")
	assert.NotContains(t, started.String(), "selection changed")

	// Everything kept again: filled in by walks.
	add(pgmirror.Selection{})
	waitSelection(t, mm, b.Name, pgmirror.Selection{})
	waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	waitDrained(t, mm.DB, time.Minute)
	requireBusinessEqual(t, f, mm, b)
	assert.Contains(t, searchSchema(t, mm.DB, mm.Schema, secret), "clients.email")
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
	const secret = "s3cr3tmarker"
	f := newFleet(t, 1)
	b := f.Businesses[0]
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), nil)
	ep := mm.add(t, b, 0)
	run(t, mm.Mirror)
	waitBusinessReady(t, mm, b.Name)

	// The stale replica: migrated (the business loaded, keeping
	// everything), serving webhooks, running nothing (no watcher reloads
	// it).
	cfg := testConfig(f.Client(t), mm.Schema)
	cfg.Keys = mm.Keys
	cfg.WebhookOptions = []webhooks.Option{webhooks.WithClock(f.Clock.Now)}
	stale := openMirror(t, cfg)
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", stale.BusinessHandler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	sel := pgmirror.Selection{Exclude: []string{"clients.email"}}
	require.NoError(t, mm.Businesses().Add(ctx, pgmirror.BusinessConfig{
		Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Selection: sel}))
	waitSelection(t, mm, b.Name, sel)
	ep.Delete() // the deliveries go to the stale replica alone
	b.Subscribe(hs.URL+"/webhooks/"+b.Name, secretOf(b.Name))

	client := b.Srv.AddClient(invoicingtest.Contact{Name: "Stale", Email: secret + "@example.org"})
	waitUntil(t, time.Minute, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM invoicing_webhook_inbox WHERE event_type = 'contact.created' AND status = 'processed'`) == 1 &&
			count(t, mm.DB, `SELECT count(*) FROM clients WHERE id = $1`, client) == 1, "the delivery processed and its client mirrored"
	})
	assert.Empty(t, searchSchema(t, mm.DB, mm.Schema, secret), "the email, anywhere")
	assert.Equal(t, 1, count(t, mm.DB, `SELECT count(*) FROM invoicing_webhook_inbox
		WHERE event_type = 'contact.created' AND convert_from(body, 'UTF8')::jsonb ? 'contact_id'`), "the delivery keeps what the mirror reads")
}
