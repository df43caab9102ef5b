package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestAccountsListTypeFilter(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "accounts_list.json")))
	got := testkit.Collect(t, c.Accounts.List(context.Background(), &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}))
	svcAssertGET(t, api.last(t), "/accounts", "page=1&page_size=100&type=revenue")
	assert.Len(t, api.requests(), 1)

	require.Len(t, got, 2)
	a0, a1 := got[0], got[1]
	assert.Equal(t, idAccount, a0.ID)
	assert.Equal(t, "200", a0.Code)
	assert.Equal(t, "Sales", a0.Name)
	assert.Equal(t, invoicing.AccountTypeRevenue, a0.Type)
	require.NotNil(t, a0.IsActive)
	assert.True(t, *a0.IsActive)
	assert.False(t, a0.Has("description"))

	assert.Nil(t, a1.IsActive, "an absent is_active is not read as inactive")
	assert.False(t, a1.Has("is_active"))
	assert.Equal(t, "Interest and sundry income", extraValue[string](t, a1.Extra, "description"))
	assert.Nil(t, a1.MismatchedFields())
}

func TestAccountsListPageItemsKeyAndExtra(t *testing.T) {
	pg, _ := getFixture(t, "accounts_list_items.json", "/accounts", "is_active=false&page=1", func(c *invoicing.Client) (*invoicing.Page[invoicing.Account], error) {
		return c.Accounts.ListPage(context.Background(), &invoicing.AccountListParams{
			ListParams: invoicing.ListParams{Page: 1},
			Extra:      url.Values{"is_active": {"false"}},
		})
	})
	require.Len(t, pg.Items, 1)
	a := pg.Items[0]
	assert.Equal(t, invoicing.AccountType("current_asset"), a.Type, "unknown type kept")
	assert.False(t, a.Type.Known())
	require.NotNil(t, a.IsActive)
	assert.False(t, *a.IsActive)
}

func TestAccountsGet(t *testing.T) {
	a, body := getFixture(t, "accounts_get.json", "/accounts/"+idAccount, "", func(c *invoicing.Client) (*invoicing.Account, error) {
		return c.Accounts.Get(context.Background(), idAccount)
	})
	assert.Equal(t, "Sales", a.Name)
	assert.Equal(t, invoicing.AccountTypeRevenue, a.Type)
	assert.JSONEq(t, body, string(rawJSON(t, a)))
}

func TestTaxCodesListPageRegion(t *testing.T) {
	pg, _ := getFixture(t, "taxcodes_list.json", "/tax-codes", "region=AU", func(c *invoicing.Client) (*invoicing.Page[invoicing.TaxCode], error) {
		return c.TaxCodes.ListPage(context.Background(), &invoicing.TaxCodeListParams{Region: "AU"})
	})
	require.Len(t, pg.Items, 2)
	gst, fre := pg.Items[0], pg.Items[1]
	assert.Equal(t, idTaxCode, gst.ID)
	assert.Equal(t, "GST", gst.Code)
	assert.Equal(t, "GST on Income", gst.Name)
	assert.True(t, gst.Rate.Equal(decimal.NewFromInt(10)), "a rate in percent")
	assert.Equal(t, "AU", gst.Region)
	assert.True(t, fre.Rate.IsZero())
	assert.True(t, fre.Has("rate"), "a zero rate is sent, not absent")
	assert.Equal(t, "G2", extraValue[string](t, fre.Extra, "reporting_label"))
}

func TestTaxCodesListWithRegionUnderAnotherName(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "taxcodes_list.json")))
	got := testkit.Collect(t, c.TaxCodes.List(context.Background(), &invoicing.TaxCodeListParams{Extra: url.Values{"country": {"NZ"}}}))
	require.Len(t, got, 2)
	for _, tc := range got {
		assert.NotEmpty(t, tc.Code)
	}
	svcAssertGET(t, api.last(t), "/tax-codes", "country=NZ&page=1&page_size=100")
}

func TestTaxCodesGetExactRateAndUnknownFields(t *testing.T) {
	tc, body := getFixture(t, "taxcodes_get.json", "/tax-codes/"+idTaxCode, "", func(c *invoicing.Client) (*invoicing.TaxCode, error) {
		return c.TaxCodes.Get(context.Background(), idTaxCode)
	})
	assert.Equal(t, "12.375", tc.Rate.String())
	var comps []struct {
		Name string          `json:"name"`
		Rate decimal.Decimal `json:"rate"`
	}
	require.NoError(t, tc.Extra.Get("components", &comps))
	require.Len(t, comps, 2)
	assert.True(t, comps[0].Rate.Add(comps[1].Rate).Equal(tc.Rate))
	assert.JSONEq(t, body, string(rawJSON(t, tc)))
}

// An outline record tells an absent member from a zero one, keeps a null
// its field cannot hold, and encodes back to exactly the members it came
// with.
func TestTaxCodesHasAndExactRoundTrip(t *testing.T) {
	body := `{"id":"` + idTaxCode + `","rate":10,"name":null,"Region":"AU"}`
	var tc invoicing.TaxCode
	require.NoError(t, json.Unmarshal([]byte(body), &tc))
	assert.True(t, tc.Has("rate"))
	assert.True(t, tc.Has("name"), "a null member is present")
	assert.False(t, tc.Has("region"), "names match exactly")
	assert.True(t, tc.Has("Region"))
	assert.False(t, tc.Has("code"), "absent, although Code is zero")
	assert.Nil(t, tc.MismatchedFields(), "null is not a mismatch")
	assert.Equal(t, `{"id":"`+idTaxCode+`","name":null,"rate":10,"Region":"AU"}`, string(rawJSON(t, tc)),
		"no member added (code), none changed (name stays null)")
}

// A member the service sends with another JSON type than the SDK's is left
// zero and named; the call does not fail, and the value is in Extra.
func ExampleAccount_MismatchedFields_code() {
	var a invoicing.Account
	body := `{"id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "code": 200, "name": "Sales", "is_active": true}`
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		panic(err)
	}
	fmt.Printf("%s %t %q %q\n", a.Name, *a.IsActive, a.Code, a.MismatchedFields())
	var code int
	if err := a.Extra.Get("code", &code); err != nil {
		panic(err)
	}
	fmt.Println(code)
	// Output:
	// Sales true "" ["code"]
	// 200
}
