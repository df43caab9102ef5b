package invoicing_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EAuthentication(t *testing.T) {
	ctx := t.Context()
	srv, full := e2eServer(t)
	item := &invoicing.ItemCreateParams{
		Name: "Forbidden", UnitPrice: invoicing.Ptr(e2eD("1")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	}

	t.Run("read-only key: reads work, writes are 403", func(t *testing.T) {
		ro := srv.ClientWithKey(srv.ReadOnlyKey, e2eFast)
		_, err := ro.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		before := len(srv.Requests())
		_, err = ro.Items.Create(ctx, item)
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		e2eAPIError(t, err, http.StatusForbidden)
		_, err = ro.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		_, err = ro.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, LineItems: []invoicing.LineItemParams{e2eLine("x", "1", "1")},
		})
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		assert.Len(t, srv.Requests(), before+3, "a 403 is not retried")
		items := e2eAll(t, full.Items.List(ctx, nil))
		assert.Len(t, items, 1, "nothing was created")
	})

	t.Run("bad key is 401", func(t *testing.T) {
		const badKey = "sk_test_not_a_key_of_this_business_0000"
		bad := srv.ClientWithKey(badKey, e2eFast)
		before := len(srv.Requests())
		_, err := bad.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
		e2eAPIError(t, err, http.StatusUnauthorized)
		assert.NotContains(t, err.Error(), badKey)
		assert.Len(t, srv.Requests(), before+1, "a 401 is not retried")
	})

	t.Run("scoped and revoked keys", func(t *testing.T) {
		key := srv.NewAPIKey(invoicingtest.ScopeInvoicesRead)
		scoped := srv.ClientWithKey(key, e2eFast)
		_, err := scoped.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		_, err = scoped.Quotes.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrForbidden, "quotes:read is missing")
		srv.RevokeAPIKey(key)
		_, err = scoped.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
	})
}
