package invoicing_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EBills(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)
	supplier, err := c.Suppliers.Get(ctx, invoicingtest.SeedSupplierID)
	require.NoError(t, err)

	b1, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		IssueDate: invoicing.NewDate(2026, time.March, 1), DueDate: invoicing.NewDate(2026, time.March, 31),
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{
			e2eLine("Paper, boxes", "10", "5.50"),
			{Description: "Toner", Quantity: invoicing.Ptr(e2eD("2")), UnitPrice: e2eD("89.99"), AccountID: invoicingtest.SeedOtherExpenseAccountID},
		},
	})
	require.NoError(t, err)
	assert.NotEmpty(t, b1.ID)
	assert.Equal(t, "OS-1001", b1.BillNumber)
	assert.Equal(t, invoicingtest.SeedSupplierID, b1.SupplierID)
	assert.Equal(t, supplier.Name, b1.SupplierName)
	assert.Equal(t, invoicing.BillStatusDraft, b1.Status, "invoicingtest's default bill status")
	assert.Equal(t, invoicing.NewDate(2026, time.March, 1), b1.IssueDate)
	assert.Equal(t, invoicing.NewDate(2026, time.March, 31), b1.DueDate)
	assert.Equal(t, "AUD", b1.Currency)
	n0, t0, a0 := e2eAmounts(e2eD("10"), e2eD("5.50"), gst)
	n1, t1, a1 := e2eAmounts(e2eD("2"), e2eD("89.99"), gst)
	require.Len(t, b1.LineItems, 2)
	e2eDecEqual(t, a0, b1.LineItems[0].Amount)
	e2eDecEqual(t, t1, b1.LineItems[1].TaxAmount)
	require.NotNil(t, b1.LineItems[1].AccountID)
	assert.Equal(t, invoicingtest.SeedOtherExpenseAccountID, *b1.LineItems[1].AccountID, "the line's account overrides the default")
	e2eDecEqual(t, n0.Add(n1), b1.Subtotal)
	e2eDecEqual(t, t0.Add(t1), b1.TaxTotal)
	e2eDecEqual(t, a0.Add(a1), b1.Total)

	b2, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedOtherSupplierID, BillNumber: "OS-1001", Status: invoicing.BillStatusAwaitingApproval,
		DefaultAccountID: invoicingtest.SeedOtherExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Hosting, March", "1", "49")},
		Extra:     map[string]any{"reference": "CH-3"},
	})
	require.NoError(t, err, "another supplier may use the same bill number")
	assert.Equal(t, invoicing.BillStatusAwaitingApproval, b2.Status)

	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Again", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID,
		LineItems:  []invoicing.LineItemParams{e2eLine("No account", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrValidation, "the service, not the SDK, requires an account and a tax code")

	got, err := c.Bills.Get(ctx, b1.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(rawJSON(t, b1)), string(rawJSON(t, got)))
	_, err = c.Bills.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	bids := func(bs []*invoicing.Bill) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	assert.Equal(t, []string{b1.ID, b2.ID}, bids(e2eAll(t, c.Bills.List(ctx, nil))))
	assert.Equal(t, []string{b2.ID}, bids(e2eAll(t, c.Bills.List(ctx, &invoicing.BillListParams{Status: invoicing.BillStatusAwaitingApproval}))))
	assert.Equal(t, []string{b1.ID}, bids(e2eAll(t, c.Bills.List(ctx, &invoicing.BillListParams{SupplierID: invoicingtest.SeedSupplierID}))))
	page, err := c.Bills.ListPage(ctx, &invoicing.BillListParams{ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)
	assert.Equal(t, []string{b1.ID}, bids(e2ePtrs(page.Items)))

	require.NoError(t, srv.ApproveBill(b1.ID))
	got, err = c.Bills.Get(ctx, b1.ID)
	require.NoError(t, err)
	assert.Equal(t, invoicing.BillStatusApproved, got.Status)
	assert.NotNil(t, got.UpdatedAt)
}
