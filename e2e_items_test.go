package invoicing_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EItems(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)

	widget, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode: "E2E-WIDGET", Name: "Widget", Description: "A blue widget",
		UnitPrice: invoicing.Ptr(e2eD("12.345")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err)
	assert.NotEmpty(t, widget.ID)
	assert.Equal(t, "E2E-WIDGET", widget.ItemCode)
	assert.Equal(t, "Widget", widget.Name)
	assert.Equal(t, "A blue widget", widget.Description)
	assert.Equal(t, invoicing.ItemTypeSales, widget.ItemType, "item_type defaults to SALES")
	e2eDecEqual(t, e2eD("12.345"), widget.UnitPrice)
	assert.True(t, widget.IsTaxable, "is_taxable defaults to true")
	assert.True(t, widget.IsActive)
	assert.Nil(t, widget.UpdatedAt)
	assert.Equal(t, invoicingtest.SeedRevenueAccountID, widget.AccountID)
	assert.Equal(t, invoicingtest.SeedGSTTaxCodeID, widget.TaxCodeID)
	assert.WithinDuration(t, srv.Now(), widget.CreatedAt, 5*time.Second)

	text, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode: "E2E-NOTE", Name: "Terms note", ItemType: invoicing.ItemTypeText,
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTFreeTaxCodeID,
	})
	require.NoError(t, err, "a TEXT item needs no unit_price")
	assert.Equal(t, invoicing.ItemTypeText, text.ItemType)
	assert.True(t, text.UnitPrice.IsZero())

	paper, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		Name: "Printer paper", ItemType: invoicing.ItemTypePurchase, UnitPrice: invoicing.Ptr(decimal.Zero),
		IsTaxable: invoicing.Ptr(false),
		AccountID: invoicingtest.SeedExpenseAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err, "a zero price is a price")
	assert.Equal(t, invoicing.ItemTypePurchase, paper.ItemType)
	assert.False(t, paper.IsTaxable)
	assert.Empty(t, paper.ItemCode, "item_code is optional")

	got, err := c.Items.Get(ctx, widget.ID)
	require.NoError(t, err)
	assert.Equal(t, widget, got)
	_, err = c.Items.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	t.Run("duplicate code is 409 ErrItemCodeExists", func(t *testing.T) {
		before := len(e2eRequests(srv, http.MethodPost, "/items"))
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			ItemCode: "E2E-WIDGET", Name: "Another", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrItemCodeExists)
		assert.ErrorIs(t, err, invoicing.ErrConflict)
		apiErr := e2eAPIError(t, err, http.StatusConflict)
		assert.Equal(t, "Item code already exists", apiErr.Detail, "API.md section 7's text")
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/items"), before+1, "not retried")
	})

	t.Run("what the SDK checks is not sent", func(t *testing.T) {
		before := len(srv.Requests())
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "No price", AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired)
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		_, err = c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "Odd type", ItemType: "SERVICE", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrInvalidItemType)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "item_type", pe.Field)
		assert.Len(t, srv.Requests(), before, "nothing reached the service")
	})

	t.Run("422 from the service for what the SDK cannot check", func(t *testing.T) {
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "Bad account", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: uuid.NewString(), TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrValidation)
		assert.NotErrorIs(t, err, invoicing.ErrUnitPriceRequired)
		apiErr := e2eAPIError(t, err, http.StatusUnprocessableEntity)
		assert.Contains(t, apiErr.Detail, "account_id")
	})

	all := e2eAll(t, c.Items.List(ctx, nil))
	ids := func(items []*invoicing.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	require.Len(t, all, 4, "the seed item and three new ones")
	assert.Equal(t, invoicingtest.SeedItemID, all[0].ID)
	assert.Equal(t, []string{widget.ID, text.ID, paper.ID}, ids(all[1:]))
	for _, typ := range []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText} {
		var want []string
		for _, it := range all {
			if it.ItemType == typ {
				want = append(want, it.ID)
			}
		}
		got := e2eAll(t, c.Items.List(ctx, &invoicing.ItemListParams{ItemType: typ}))
		assert.Equal(t, want, ids(got), "item_type=%s", typ)
	}

	page, err := c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, len(all), page.Total)
	assert.False(t, page.HasMore)
	require.Len(t, page.Items, 1)
	assert.Equal(t, paper.ID, page.Items[0].ID)
}
