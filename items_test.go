package invoicing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestItemsGet(t *testing.T) {
	it, body := getFixture(t, "item.json", "/items/"+idItem, "", func(c *invoicing.Client) (*invoicing.Item, error) {
		return c.Items.Get(context.Background(), idItem)
	})
	assert.Equal(t, idItem, it.ID)
	assert.Equal(t, "WIDGET-01", it.ItemCode)
	assert.Equal(t, "Widget", it.Name)
	assert.Equal(t, "A very good widget", it.Description)
	assert.Equal(t, invoicing.ItemTypeSales, it.ItemType)
	assert.Equal(t, "19.999", it.UnitPrice.String())
	assert.True(t, it.IsTaxable)
	assert.Equal(t, "4000", it.AccountID)
	assert.Equal(t, "GST", it.TaxCodeID)
	assert.True(t, it.IsActive)
	assert.Equal(t, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), it.CreatedAt)
	require.NotNil(t, it.UpdatedAt)
	assert.Equal(t, time.Date(2026, 10, 2, 12, 0, 0, 5e8, time.UTC), *it.UpdatedAt)
	assert.JSONEq(t, body, string(rawJSON(t, it)))
}

func TestItemsListFilterAndKey(t *testing.T) {
	c, api := newMock(t, always(200, `{"items": [`+fixture(t, "item.json")+`], "total": 1, "page": 1, "page_size": 100, "has_more": false}`))
	got := testkit.Collect(t, c.Items.List(context.Background(), &invoicing.ItemListParams{ItemType: invoicing.ItemTypePurchase}))
	require.Len(t, got, 1)
	assert.Equal(t, "Widget", got[0].Name)
	svcAssertGET(t, api.last(t), "/items", "item_type=PURCHASE&page=1&page_size=100")

	pg, err := c.Items.ListPage(context.Background(), &invoicing.ItemListParams{ListParams: invoicing.ListParams{PageSize: 10}, ItemType: invoicing.ItemTypeText})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/items", "item_type=TEXT&page_size=10")
	require.Len(t, pg.Items, 1)
	assert.Equal(t, "WIDGET-01", pg.Items[0].ItemCode)
	assert.Equal(t, 1, pg.Total)
}

func TestItemsCreateBody(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "item.json")))
	p := svcValidItem()
	p.ItemCode = "WIDGET-01"
	p.Description = "d"
	p.ItemType = invoicing.ItemTypeSales
	p.IsTaxable = invoicing.Ptr(false)
	it, err := c.Items.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, "Widget", it.Name)
	assert.Equal(t, idItem, it.ID)
	svcAssertPOST(t, api.last(t), "/items", `{"name":"Widget","item_code":"WIDGET-01","description":"d","item_type":"SALES",`+
		`"unit_price":19.999,"is_taxable":false,"account_id":"4000","tax_code_id":"GST"}`)

	// A TEXT item sends no unit_price; a free SALES item sends 0; a PURCHASE item its price.
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "Note", ItemType: invoicing.ItemTypeText, AccountID: "4000", TaxCodeID: "GST"})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/items", `{"name":"Note","item_type":"TEXT","account_id":"4000","tax_code_id":"GST"}`)
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "Free", UnitPrice: invoicing.Ptr(svcDec("0")), AccountID: "4000", TaxCodeID: "GST"})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/items", `{"name":"Free","unit_price":0,"account_id":"4000","tax_code_id":"GST"}`)
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "Paper", ItemType: invoicing.ItemTypePurchase,
		UnitPrice: invoicing.Ptr(svcDec("12.50")), AccountID: "6100", TaxCodeID: "GST", IsTaxable: invoicing.Ptr(true)})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/items", `{"name":"Paper","item_type":"PURCHASE","unit_price":12.50,"is_taxable":true,"account_id":"6100","tax_code_id":"GST"}`)
	assert.Len(t, api.requests(), 4)
}

func TestItemsCreateDocumentedServiceErrors(t *testing.T) {
	for _, tc := range []struct {
		status            int
		detail            string
		sentinel, general error
	}{
		{409, "Item code already exists", invoicing.ErrItemCodeExists, invoicing.ErrConflict},
		{422, "unit_price is required for SALES and PURCHASE items", invoicing.ErrUnitPriceRequired, invoicing.ErrValidation},
		{422, "item_type must be one of: SALES, PURCHASE, TEXT", invoicing.ErrInvalidItemType, invoicing.ErrValidation},
	} {
		c, api := newMock(t, always(tc.status, `{"detail": "`+tc.detail+`"}`))
		it, err := c.Items.Create(context.Background(), svcValidItem())
		assert.Nil(t, it)
		require.ErrorIs(t, err, tc.sentinel)
		require.ErrorIs(t, err, tc.general)
		apiErr := apiError(t, err)
		assert.Equal(t, tc.detail, apiErr.Detail)
		assert.Len(t, api.requests(), 1)
		for _, other := range []error{invoicing.ErrItemCodeExists, invoicing.ErrUnitPriceRequired, invoicing.ErrInvalidItemType} {
			if other != tc.sentinel {
				assert.NotErrorIs(t, err, other)
			}
		}
	}
	// Same status, other detail: only the general sentinel.
	c, _ := newMock(t, always(409, `{"detail": "something else"}`))
	_, err := c.Items.Create(context.Background(), svcValidItem())
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	assert.NotErrorIs(t, err, invoicing.ErrItemCodeExists)
}

func TestItemsCreateValidatedBeforeSending(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "item.json")))
	ctx := context.Background()
	noPrice := svcValidItem()
	noPrice.UnitPrice = nil
	_, err := c.Items.Create(ctx, noPrice)
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "unit_price", pe.Field)
	assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired, "the same sentinel as the service's 422")
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.NotErrorIs(t, err, invoicing.ErrValidation, "nothing was sent: no service error")

	purchase := svcValidItem()
	purchase.UnitPrice, purchase.ItemType = nil, invoicing.ItemTypePurchase
	_, err = c.Items.Create(ctx, purchase)
	assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired)

	for _, bad := range []invoicing.ItemType{"SERVICE", "sales", "text "} {
		badType := svcValidItem()
		badType.ItemType = bad
		_, err = c.Items.Create(ctx, badType)
		require.ErrorAs(t, err, &pe, bad)
		assert.Equal(t, "item_type", pe.Field)
		assert.ErrorIs(t, err, invoicing.ErrInvalidItemType)
		assert.NotErrorIs(t, err, invoicing.ErrUnitPriceRequired)
	}

	for field, mutate := range map[string]func(*invoicing.ItemCreateParams){
		"name":        func(p *invoicing.ItemCreateParams) { p.Name = "" },
		"account_id":  func(p *invoicing.ItemCreateParams) { p.AccountID = "" },
		"tax_code_id": func(p *invoicing.ItemCreateParams) { p.TaxCodeID = "" },
		"item_code":   func(p *invoicing.ItemCreateParams) { p.ItemCode = "X"; p.Extra = map[string]any{"item_code": "Y"} },
	} {
		p := svcValidItem()
		mutate(p)
		it, err := c.Items.Create(ctx, p)
		assert.Nil(t, it)
		require.ErrorAs(t, err, &pe, field)
		assert.Equal(t, field, pe.Field)
		assert.NotErrorIs(t, err, invoicing.ErrUnitPriceRequired)
	}
	_, err = c.Items.Create(ctx, nil)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())
}

// A create is never repeated after a 5xx (only after a 429).
func TestItemsCreateNotRepeatedAfterServerError(t *testing.T) {
	c, api := newMock(t, always(503, `{"detail": "unavailable"}`))
	_, err := c.Items.Create(context.Background(), svcValidItem())
	assert.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)

	c, api = newMock(t, always(503, `{"detail": "unavailable"}`))
	_, err = c.Items.Create(context.Background(), svcValidItem(), invoicing.WithIdempotentRetry())
	assert.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 4, "WithIdempotentRetry: the default 3 retries")
}
