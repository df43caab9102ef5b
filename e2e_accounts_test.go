package invoicing_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EAccountsAndTaxCodes(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	closed := srv.AddAccount(invoicingtest.Account{Code: "4900", Name: "Old revenue", Type: invoicingtest.AccountRevenue, Inactive: true})

	all := e2eAll(t, c.Accounts.List(ctx, nil))
	require.NotEmpty(t, all)
	byID := map[string]*invoicing.Account{}
	for _, a := range all {
		byID[a.ID] = a
	}
	assert.Len(t, byID, len(all), "ids are unique")
	for _, typ := range []invoicing.AccountType{invoicing.AccountTypeRevenue, invoicing.AccountTypeExpense, invoicing.AccountTypeAsset} {
		var want []string
		for _, a := range all {
			if a.Type == typ {
				want = append(want, a.ID)
			}
		}
		require.NotEmpty(t, want, typ)
		var got []string
		for _, a := range e2eAll(t, c.Accounts.List(ctx, &invoicing.AccountListParams{Type: typ})) {
			got = append(got, a.ID)
		}
		assert.Equal(t, want, got, "type=%s", typ)
		page, err := c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: typ, ListParams: invoicing.ListParams{PageSize: 1}})
		require.NoError(t, err)
		assert.Equal(t, len(want), page.Total)
	}

	sales, err := c.Accounts.Get(ctx, invoicingtest.SeedRevenueAccountID)
	require.NoError(t, err)
	assert.Equal(t, rawJSON(t, byID[invoicingtest.SeedRevenueAccountID]), rawJSON(t, sales))
	assert.Equal(t, invoicing.AccountTypeRevenue, sales.Type)
	assert.NotEmpty(t, sales.Code)
	assert.NotEmpty(t, sales.Name)
	require.NotNil(t, sales.IsActive)
	assert.True(t, *sales.IsActive)
	old, err := c.Accounts.Get(ctx, closed)
	require.NoError(t, err)
	require.NotNil(t, old.IsActive)
	assert.False(t, *old.IsActive)
	assert.Equal(t, "4900", old.Code)
	_, err = c.Accounts.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	fancy := srv.AddTaxCode(invoicingtest.TaxCode{Code: "ODD", Name: "Odd rate", Rate: e2eD("12.345"), Region: "NZ"})
	codes := e2eAll(t, c.TaxCodes.List(ctx, nil))
	for _, region := range []string{"AU", "NZ"} {
		var want []string
		for _, tc := range codes {
			if strings.EqualFold(tc.Region, region) {
				want = append(want, tc.ID)
			}
		}
		require.NotEmpty(t, want, region)
		var got []string
		for _, tc := range e2eAll(t, c.TaxCodes.List(ctx, &invoicing.TaxCodeListParams{Region: region})) {
			got = append(got, tc.ID)
		}
		assert.Equal(t, want, got, "region=%s", region)
	}
	page, err := c.TaxCodes.ListPage(ctx, &invoicing.TaxCodeListParams{Region: "NZ", ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)

	levy, err := c.TaxCodes.Get(ctx, invoicingtest.SeedOnePercentTaxCodeID)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("1"), levy.Rate, "the 1% tax code of API.md's example")
	odd, err := c.TaxCodes.Get(ctx, fancy)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("12.345"), odd.Rate, "rates are exact")
	assert.Equal(t, "ODD", odd.Code)
	_, err = c.TaxCodes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}
