package invoicing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

const itemID = "9d7e6f5a-4b3c-4d2e-8f10-112233445566"

func validItem() *invoicing.ItemCreateParams {
	return &invoicing.ItemCreateParams{Name: "Widget", AccountID: "4000", TaxCodeID: "GST", UnitPrice: invoicing.Ptr(dec("19.999"))}
}

func TestItemsGetDecodes(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "item.json")))
	it, err := c.Items.Get(context.Background(), itemID)
	require.NoError(t, err)
	assert.Equal(t, "/items/"+itemID, api.last(t).Path)
	assert.Equal(t, itemID, it.ID)
	assert.Equal(t, "WIDGET-01", it.ItemCode)
	assert.Equal(t, invoicing.ItemTypeSales, it.ItemType)
	assert.Equal(t, "19.999", it.UnitPrice.String())
	assert.True(t, it.IsTaxable)
	assert.True(t, it.IsActive)
	require.NotNil(t, it.UpdatedAt)
	assert.Equal(t, time.Date(2026, 10, 2, 12, 0, 0, 5e8, time.UTC), *it.UpdatedAt)
}

func TestItemsListFilterAndKey(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"items": [`+fixture(t, "item.json")+`], "total": 1, "page": 1, "page_size": 100, "has_more": false}`))
	var got []string
	for it, err := range c.Items.List(context.Background(), &invoicing.ItemListParams{ItemType: invoicing.ItemTypePurchase}) {
		require.NoError(t, err)
		got = append(got, it.Name)
	}
	assert.Equal(t, []string{"Widget"}, got)
	assert.Equal(t, "item_type=PURCHASE&page=1&page_size=100", api.last(t).Query)
}

func TestItemsCreateBody(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "item.json")))
	p := validItem()
	p.ItemCode = "WIDGET-01"
	p.Description = "d"
	p.ItemType = invoicing.ItemTypeSales
	p.IsTaxable = invoicing.Ptr(false)
	it, err := c.Items.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, "Widget", it.Name)
	r := api.last(t)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/items", r.Path)
	assert.JSONEq(t, `{"name": "Widget", "item_code": "WIDGET-01", "description": "d", "item_type": "SALES",
		"unit_price": 19.999, "is_taxable": false, "account_id": "4000", "tax_code_id": "GST"}`, string(r.Body))

	// A TEXT item sends no unit_price; a free SALES item sends 0.
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "Note", ItemType: invoicing.ItemTypeText, AccountID: "4000", TaxCodeID: "GST"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name": "Note", "item_type": "TEXT", "account_id": "4000", "tax_code_id": "GST"}`, string(api.last(t).Body))
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "Free", UnitPrice: invoicing.Ptr(dec("0")), AccountID: "4000", TaxCodeID: "GST"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name": "Free", "unit_price": 0, "account_id": "4000", "tax_code_id": "GST"}`, string(api.last(t).Body))
}

func TestItemsCreateDocumentedServiceErrors(t *testing.T) {
	cases := []struct {
		status   int
		detail   string
		sentinel error
		general  error
	}{
		{409, "Item code already exists", invoicing.ErrItemCodeExists, invoicing.ErrConflict},
		{422, "unit_price is required for SALES and PURCHASE items", invoicing.ErrUnitPriceRequired, invoicing.ErrValidation},
		{422, "item_type must be one of: SALES, PURCHASE, TEXT", invoicing.ErrInvalidItemType, invoicing.ErrValidation},
	}
	for _, tc := range cases {
		c, api := newTestAPI(t, always(tc.status, `{"detail": "`+tc.detail+`"}`))
		_, err := c.Items.Create(context.Background(), validItem())
		require.ErrorIs(t, err, tc.sentinel)
		require.ErrorIs(t, err, tc.general)
		var apiErr *invoicing.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, tc.detail, apiErr.Detail)
		assert.Len(t, api.requests(), 1)
		for _, other := range []error{invoicing.ErrItemCodeExists, invoicing.ErrUnitPriceRequired, invoicing.ErrInvalidItemType} {
			if other != tc.sentinel {
				assert.NotErrorIs(t, err, other)
			}
		}
	}
	// Same status, other detail: only the general sentinel.
	c, _ := newTestAPI(t, always(409, `{"detail": "something else"}`))
	_, err := c.Items.Create(context.Background(), validItem())
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	assert.NotErrorIs(t, err, invoicing.ErrItemCodeExists)
}

func TestItemsCreateValidatedBeforeSending(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "item.json")))
	noPrice := validItem()
	noPrice.UnitPrice = nil
	_, err := c.Items.Create(context.Background(), noPrice)
	assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired, "the same sentinel as the service's 422")
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)

	purchase := validItem()
	purchase.UnitPrice, purchase.ItemType = nil, invoicing.ItemTypePurchase
	_, err = c.Items.Create(context.Background(), purchase)
	assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired)

	badType := validItem()
	badType.ItemType = "SERVICE"
	_, err = c.Items.Create(context.Background(), badType)
	assert.ErrorIs(t, err, invoicing.ErrInvalidItemType)

	for field, mutate := range map[string]func(*invoicing.ItemCreateParams){
		"name":        func(p *invoicing.ItemCreateParams) { p.Name = "" },
		"account_id":  func(p *invoicing.ItemCreateParams) { p.AccountID = "" },
		"tax_code_id": func(p *invoicing.ItemCreateParams) { p.TaxCodeID = "" },
	} {
		p := validItem()
		mutate(p)
		_, err := c.Items.Create(context.Background(), p)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, field, pe.Field)
	}
	assert.Empty(t, api.requests())
}
