package pgmirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// A reconciliation corrects what changed without an event reaching the
// mirror (here no webhook endpoint exists at all): invoices made overdue or
// voided, quotes declined or expired, bills approved and paid, a new bank
// transaction and the balance it changes, new accounts, tax codes, items
// and contacts. It reports the corrections per resource, through its
// result, the OnReconciled hook and the log, and deletes the processed
// deliveries past their retention; a second one finds nothing to correct.
func TestReconcileCorrectsChangesThatRaiseNoEvent(t *testing.T) {
	srv, _ := newFake(t)
	c := srv.Client()
	overdue, voided := createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 2), createInvoice(t, c, invoicing.InvoiceStatusDraft, 1)
	declined, expired := createQuote(t, c, 2), createQuote(t, c, 1)
	paid, approved := createBill(t, c), createBill(t, c)

	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	var mu sync.Mutex
	hooked := map[string]int{}
	cfg.OnReconciled = func(resource string, corrected int) {
		mu.Lock()
		defer mu.Unlock()
		hooked[resource] += corrected
	}
	m := openMirror(t, cfg)
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))

	require.NoError(t, srv.UpdateInvoice(overdue.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue}))
	require.NoError(t, srv.UpdateInvoice(voided.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided}))
	require.NoError(t, srv.DeclineQuote(declined.ID))
	require.NoError(t, srv.ExpireQuote(expired.ID))
	require.NoError(t, srv.ApproveBill(paid.ID))
	require.NoError(t, srv.PayBill(paid.ID, time.Time{}))
	require.NoError(t, srv.ApproveBill(approved.ID))
	srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: invoicingtest.SeedBankAccountID, Date: t0,
		Description: "Interest", Amount: decimal.RequireFromString("3.21")})
	srv.AddAccount(invoicingtest.Account{Code: "4200", Name: "Other Revenue", Type: invoicingtest.AccountRevenue})
	srv.AddTaxCode(invoicingtest.TaxCode{Code: "EXP", Name: "Export", Region: "AU"})
	_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{Name: "Widget", UnitPrice: invoicing.Ptr(decimal.NewFromInt(5)),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID})
	require.NoError(t, err)
	srv.AddClient(invoicingtest.Contact{Name: "Quiet client"})
	srv.AddSupplier(invoicingtest.Contact{Name: "Quiet supplier"})

	db := adminPool(t, schema)
	_, err = db.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, status, processed_at)
		VALUES ('old', 'test', now(), '{}', 'processed', now() - interval '8 days'),
		       ('recent', 'test', now(), '{}', 'processed', now() - interval '6 days'),
		       ('parked', 'test', now(), '{}', 'failed', NULL)`)
	require.NoError(t, err)

	corrected, err := m.Reconcile(ctx)
	require.NoError(t, err)
	want := map[string]int{
		pgmirror.Invoices: 2, pgmirror.Quotes: 2, pgmirror.Bills: 2, pgmirror.BankTransactions: 1, pgmirror.BankAccounts: 1,
		pgmirror.Accounts: 1, pgmirror.TaxCodes: 1, pgmirror.Items: 1, pgmirror.Clients: 1, pgmirror.Suppliers: 1,
	}
	assert.Equal(t, want, corrected)
	assert.Equal(t, want, hooked)
	assert.Contains(t, logs.String(), `msg="pgmirror: reconciled" resource=quotes listed=2 corrected=2`)
	requireMirrorEqual(t, srv, schema)
	assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE delivery_id IN ('recent', 'parked')`),
		"processed deliveries past the week's retention are deleted; recent and parked ones are kept")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE delivery_id = 'old'`))

	changed := count(t, db, `SELECT count(*) FROM invoice_lines`)
	again, err := m.Reconcile(ctx)
	require.NoError(t, err)
	for _, r := range pgmirror.Resources() {
		assert.Zero(t, again[r], "%s corrected again", r)
	}
	assert.Equal(t, changed, count(t, db, `SELECT count(*) FROM invoice_lines`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_changed_at > (SELECT last_started_at FROM mirror_reconcile)`),
		"an unchanged record is not rewritten")
}

// Replicas running the reconciler take turns (one run at a time, never two
// interleaved) and together respect the interval, counted from the end of
// the last run by any replica to the start of the next.
func TestReplicasReconcileOneAtATimeAtTheInterval(t *testing.T) {
	srv, _ := newFake(t)
	schema := newSchemaName()
	const interval = 300 * time.Millisecond
	type call struct {
		replica  int
		resource string
		at       time.Time
	}
	var mu sync.Mutex
	var calls []call
	var mirrors []*pgmirror.Mirror
	for i := range 2 {
		cfg := testConfig(sdkClient(srv), schema)
		cfg.ReconcileInterval = interval
		cfg.OnReconciled = func(resource string, _ int) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, call{i, resource, time.Now()})
		}
		mirrors = append(mirrors, openMirror(t, cfg))
	}
	require.NoError(t, mirrors[0].Backfill(context.Background()))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, m := range mirrors {
		wg.Go(func() { m.RunReconciler(ctx) })
	}
	resources := pgmirror.Resources()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) >= 4*len(resources), fmt.Sprintf("%d of %d resources reconciled", len(calls), 4*len(resources))
	})
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	runs := len(calls) / len(resources)
	for r := range runs {
		run := calls[r*len(resources) : (r+1)*len(resources)]
		for i, c := range run {
			assert.Equal(t, resources[i], c.resource, "run %d: resources in order, not interleaved with another run", r)
			assert.Equal(t, run[0].replica, c.replica, "run %d is one replica's", r)
		}
		if r > 0 {
			gap := run[0].at.Sub(calls[r*len(resources)-1].at)
			assert.GreaterOrEqual(t, gap, interval, "run %d started %v after the previous one ended", r, gap)
		}
	}
}
