package invoicingtest_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

var practice = []string{"acme", "globex", "initech"}

func TestMultiServerKeepsEachBusinessToItsKey(t *testing.T) {
	m := invoicingtest.NewTestMultiServer(t, practice)
	acme, globex := m.Business("acme"), m.Business("globex")
	for _, b := range m.Businesses() {
		assert.Equal(t, m.URL, b.URL, "one base URL")
	}
	assert.Equal(t, practice, []string{m.Businesses()[0].BusinessName(), m.Businesses()[1].BusinessName(), m.Businesses()[2].BusinessName()})
	assert.NotEqual(t, acme.BusinessID(), globex.BusinessID())
	assert.Equal(t, acme.BusinessID(), invoicingtest.NewTestMultiServer(t, []string{"acme"}).Business("acme").BusinessID(), "the same name, the same id")
	assert.NotEqual(t, acme.FullKey, globex.FullKey)

	ctx := t.Context()
	inv := createInvoice(t, acme.Client()).Invoice
	_, err := acme.Client().Invoices.Get(ctx, inv.ID)
	require.NoError(t, err)
	_, err = globex.Client().Invoices.Get(ctx, inv.ID)
	require.ErrorIs(t, err, invoicing.ErrNotFound, "globex's key never sees acme's invoice")
	_, err = m.Business("initech").ClientWithKey(m.Business("initech").ReadOnlyKey).Invoices.Get(ctx, inv.ID)
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	page, err := globex.Client().Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, page.Total)
	client, err := globex.Client().Clients.Get(ctx, invoicingtest.SeedClientID)
	require.NoError(t, err, "each business has the seed data")
	assert.Equal(t, "Acme Pty Ltd", client.Name)

	// One client of the SDK, the key chosen per call.
	c := acme.Client()
	_, err = c.Invoices.Get(ctx, inv.ID, invoicing.WithAPIKey(globex.FullKey))
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	other := createInvoice(t, globex.Client())
	assert.Equal(t, inv.InvoiceNumber, other.Invoice.InvoiceNumber, "each business numbers its own invoices")
	got, err := c.Invoices.Get(ctx, other.Invoice.ID, invoicing.WithAPIKey(globex.FullKey))
	require.NoError(t, err)
	assert.Equal(t, other.Invoice.ID, got.ID)

	// Scopes are the business's key's; no key, or one no business holds, is
	// a 401; a path the API does not have, a 404.
	_, err = globex.ClientWithKey(globex.ReadOnlyKey).Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Hooli"})
	require.ErrorIs(t, err, invoicing.ErrForbidden)
	_, err = acme.ClientWithKey("sk_test_nobody").Invoices.Get(ctx, inv.ID)
	require.ErrorIs(t, err, invoicing.ErrUnauthorized)
	for _, tc := range []struct {
		path, key string
		want      int
	}{
		{"/invoices", "", http.StatusUnauthorized},
		{"/invoices", "sk_test_nobody", http.StatusUnauthorized},
		{"/nowhere", "sk_test_nobody", http.StatusNotFound},
		{"/nowhere", acme.FullKey, http.StatusNotFound},
	} {
		req, err := http.NewRequest(http.MethodGet, m.URL+tc.path, nil)
		require.NoError(t, err)
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.want, resp.StatusCode, tc)
	}
	assert.Len(t, acme.Requests(), 3, "the requests of acme's key only: the create, a get, /nowhere")
}

func TestMultiServerRoutesKeysAsTheyChange(t *testing.T) {
	m := invoicingtest.NewTestMultiServer(t, practice)
	globex := m.Business("globex")
	ctx := t.Context()

	key := globex.NewAPIKey(invoicingtest.AllScopes()...)
	createInvoice(t, globex.ClientWithKey(key))
	page, err := globex.Client().Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total, "a key minted later reaches its business")
	globex.RevokeAPIKey(key)
	_, err = globex.ClientWithKey(key).Invoices.ListPage(ctx, nil)
	require.ErrorIs(t, err, invoicing.ErrUnauthorized)

	// LoadState gives the business the saved keys; the old ones stop.
	alone := invoicingtest.NewTestServer(t)
	createInvoice(t, alone.Client())
	var state bytes.Buffer
	require.NoError(t, alone.SaveState(&state))
	initech := m.Business("initech")
	oldKey := initech.FullKey
	require.NoError(t, initech.LoadState(&state))
	page, err = initech.Client().Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	_, err = initech.ClientWithKey(oldKey).Invoices.ListPage(ctx, nil)
	require.ErrorIs(t, err, invoicing.ErrUnauthorized)

	// The same state loaded into another business would give one key two
	// businesses: refused, the business left as it was.
	require.NoError(t, initech.SaveState(&state))
	acme := m.Business("acme")
	require.ErrorContains(t, acme.LoadState(&state), "business initech's")
	page, err = acme.Client().Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, page.Total, "acme's own data")
}

func TestMultiServerBusinessesHaveTheirOwnWebhooksFaultsAndSecrets(t *testing.T) {
	clock := invoicingtest.NewFakeClock(time.Date(2026, time.March, 10, 9, 0, 0, 0, time.UTC))
	m := invoicingtest.NewTestMultiServer(t, practice, invoicingtest.WithClock(clock), invoicingtest.WithControl())
	acme, globex := m.Business("acme"), m.Business("globex")
	assert.Regexp(t, `^[0-9a-f]{64}$`, acme.WebhookSecret())
	assert.NotEqual(t, acme.WebhookSecret(), globex.WebhookSecret())

	var toAcme, toGlobex invoicingtest.DeliveryLog
	acmeEP := acme.NewReceiver(toAcme.Handle)
	globex.NewReceiver(toGlobex.Handle)
	assert.Equal(t, acme.WebhookSecret(), acmeEP.Secret(), "an endpoint without a secret of its own signs with the business's")
	createInvoice(t, acme.Client())
	require.Len(t, toAcme.All(), 1)
	assert.Equal(t, webhooks.EventInvoiceCreated, toAcme.All()[0].Type)
	assert.Empty(t, toGlobex.All(), "globex's endpoint gets none of acme's events")

	// Faults are the business's.
	acme.FailNext(1, http.StatusServiceUnavailable)
	_, err := globex.Client(invoicing.WithMaxRetries(0)).Invoices.ListPage(t.Context(), nil)
	require.NoError(t, err)
	_, err = acme.Client(invoicing.WithMaxRetries(0)).Invoices.ListPage(t.Context(), nil)
	require.ErrorIs(t, err, invoicing.ErrServer)

	// The control endpoints act on the business of the key.
	ctl := invoicingtest.NewControlClient(m.URL, globex.FullKey, nil)
	info, err := ctl.Info(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "globex", info.Business)
	assert.Equal(t, globex.BusinessID(), info.BusinessID)
	require.Len(t, info.Webhooks, 1)
	assert.NotEqual(t, acmeEP.ID(), info.Webhooks[0].ID)
	w, err := ctl.AddWebhook(t.Context(), invoicingtest.ControlWebhookRequest{URL: "http://127.0.0.1:9/hooks"})
	require.NoError(t, err)
	assert.Equal(t, globex.WebhookSecret(), w.Secret)
	var ce *invoicingtest.ControlError
	require.ErrorAs(t, invoicingtest.NewControlClient(m.URL, acme.FullKey, nil).DeleteWebhook(t.Context(), w.ID), &ce)
	assert.Equal(t, http.StatusNotFound, ce.StatusCode, "acme's key cannot reach globex's endpoint")
	require.NoError(t, ctl.DeleteWebhook(t.Context(), w.ID))

	// Test deliveries name the business.
	d, err := acmeEP.Test()
	require.NoError(t, err)
	assert.Contains(t, string(d.Body), `"business_id":"`+acme.BusinessID()+`"`)

	// One clock: both businesses read the same "today", and an advance
	// through one business's key expires every business's quotes, reporting
	// its own only.
	clock.Advance(48 * time.Hour)
	assert.Equal(t, acme.Now(), globex.Now())
	q, err := globex.Client().Quotes.Create(t.Context(), &invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, ValidDays: invoicing.Ptr(1),
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Audit", UnitPrice: decimal.NewFromInt(900)}},
	})
	require.NoError(t, err)
	adv, err := invoicingtest.NewControlClient(m.URL, acme.FullKey, nil).AdvanceClock(t.Context(), "3d")
	require.NoError(t, err)
	assert.Empty(t, adv.ExpiredQuotes, "globex's quote is not acme's to report")
	q, err = globex.Client().Quotes.Get(t.Context(), q.ID)
	require.NoError(t, err)
	assert.Equal(t, invoicing.QuoteStatusExpired, q.Status)
}

func TestSetWebhookSecretSignsLaterEndpoints(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	assert.Empty(t, srv.WebhookSecret(), "alone, each endpoint gets its own secret")
	first := srv.AddWebhookEndpoint("http://127.0.0.1:9/a")
	secret := "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	srv.SetWebhookSecret(secret)
	assert.Equal(t, secret, srv.AddWebhookEndpoint("http://127.0.0.1:9/b").Secret())
	assert.NotEqual(t, secret, first.Secret(), "existing endpoints keep theirs")
	srv.SetWebhookSecret("")
	assert.NotEqual(t, secret, srv.AddWebhookEndpoint("http://127.0.0.1:9/c").Secret())
	assert.Panics(t, func() { srv.SetWebhookSecret("short") })
}

func TestNewMultiServerRefusesBadNames(t *testing.T) {
	for _, names := range [][]string{nil, {""}, {"acme", "acme"}} {
		assert.Panics(t, func() { invoicingtest.NewMultiServer(names) }, names)
	}
	m := invoicingtest.NewMultiServer([]string{"acme"})
	assert.Panics(t, func() { m.Business("globex") })
	m.Close()
	m.Close()
}
