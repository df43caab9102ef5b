package invoicing_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

const (
	accountID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	taxCodeID = "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"
)

func TestAccountsListTypeFilter(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "accounts_list.json")))
	var got []*invoicing.Account
	for a, err := range c.Accounts.List(context.Background(), &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}) {
		require.NoError(t, err)
		got = append(got, a)
	}
	resAssertGET(t, api.last(t), "/accounts", "page=1&page_size=100&type=revenue")
	assert.Len(t, api.requests(), 1)

	require.Len(t, got, 2)
	a0, a1 := got[0], got[1]
	assert.Equal(t, accountID, a0.ID)
	assert.Equal(t, "200", a0.Code)
	assert.Equal(t, "Sales", a0.Name)
	assert.Equal(t, invoicing.AccountTypeRevenue, a0.Type)
	require.NotNil(t, a0.IsActive)
	assert.True(t, *a0.IsActive)
	assert.False(t, a0.Has("description"))

	assert.Nil(t, a1.IsActive, "an absent is_active is not read as inactive")
	var desc string
	require.NoError(t, a1.Extra.Get("description", &desc))
	assert.Equal(t, "Interest and sundry income", desc)
}

func TestAccountsListPageItemsKeyAndExtra(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "accounts_list_items.json")))
	pg, err := c.Accounts.ListPage(context.Background(), &invoicing.AccountListParams{
		ListParams: invoicing.ListParams{Page: 1},
		Extra:      url.Values{"is_active": {"false"}},
	})
	require.NoError(t, err)
	resAssertGET(t, api.last(t), "/accounts", "is_active=false&page=1")
	require.Len(t, pg.Items, 1)
	a := pg.Items[0]
	assert.Equal(t, invoicing.AccountType("current_asset"), a.Type, "unknown type kept")
	assert.False(t, a.Type.Known())
	require.NotNil(t, a.IsActive)
	assert.False(t, *a.IsActive)
}

func TestAccountsGet(t *testing.T) {
	body := fixture(t, "accounts_get.json")
	c, api := newTestAPI(t, always(200, body))
	a, err := c.Accounts.Get(context.Background(), accountID)
	require.NoError(t, err)
	resAssertGET(t, api.last(t), "/accounts/"+accountID, "")
	assert.Equal(t, "Sales", a.Name)
	assert.Equal(t, invoicing.AccountTypeRevenue, a.Type)
	assert.JSONEq(t, body, string(rawJSON(t, a)))
}

func TestAccountTypeKnown(t *testing.T) {
	for _, v := range []invoicing.AccountType{invoicing.AccountTypeRevenue, invoicing.AccountTypeExpense, invoicing.AccountTypeAsset, invoicing.AccountTypeLiability, invoicing.AccountTypeEquity} {
		assert.True(t, v.Known(), v)
	}
	assert.False(t, invoicing.AccountType("REVENUE").Known())
}

func TestTaxCodesListPageRegion(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "taxcodes_list.json")))
	pg, err := c.TaxCodes.ListPage(context.Background(), &invoicing.TaxCodeListParams{Region: "AU"})
	require.NoError(t, err)
	resAssertGET(t, api.last(t), "/tax-codes", "region=AU")
	require.Len(t, pg.Items, 2)
	gst, fre := pg.Items[0], pg.Items[1]
	assert.Equal(t, taxCodeID, gst.ID)
	assert.Equal(t, "GST", gst.Code)
	assert.Equal(t, "GST on Income", gst.Name)
	assert.True(t, gst.Rate.Equal(decimal.NewFromInt(10)))
	assert.Equal(t, "AU", gst.Region)
	assert.True(t, fre.Rate.IsZero())
	var label string
	require.NoError(t, fre.Extra.Get("reporting_label", &label))
	assert.Equal(t, "G2", label)
}

func TestTaxCodesListWithRegionUnderAnotherName(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "taxcodes_list.json")))
	n := 0
	for tc, err := range c.TaxCodes.List(context.Background(), &invoicing.TaxCodeListParams{Extra: url.Values{"country": {"NZ"}}}) {
		require.NoError(t, err)
		assert.NotEmpty(t, tc.Code)
		n++
	}
	assert.Equal(t, 2, n)
	resAssertGET(t, api.last(t), "/tax-codes", "country=NZ&page=1&page_size=100")
}

func TestTaxCodesGetExactRateAndUnknownFields(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "taxcodes_get.json")))
	tc, err := c.TaxCodes.Get(context.Background(), taxCodeID)
	require.NoError(t, err)
	resAssertGET(t, api.last(t), "/tax-codes/"+taxCodeID, "")
	assert.Equal(t, "12.375", tc.Rate.String())
	var comps []struct {
		Name string          `json:"name"`
		Rate decimal.Decimal `json:"rate"`
	}
	require.NoError(t, tc.Extra.Get("components", &comps))
	require.Len(t, comps, 2)
	assert.True(t, comps[0].Rate.Add(comps[1].Rate).Equal(tc.Rate))
}
