package invoicing_test

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// e2eContacts is what ClientService and SupplierService have in common.
type e2eContacts interface {
	List(context.Context, *invoicing.ContactListParams, ...invoicing.RequestOption) iter.Seq2[*invoicing.Contact, error]
	ListPage(context.Context, *invoicing.ContactListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Contact], error)
	Get(context.Context, string, ...invoicing.RequestOption) (*invoicing.Contact, error)
	Create(context.Context, *invoicing.ContactCreateParams, ...invoicing.RequestOption) (*invoicing.Contact, error)
}

func TestE2EClientsAndSuppliers(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	for _, tc := range []struct {
		path string
		svc  e2eContacts
		seed []string
	}{
		{"/clients", c.Clients, []string{invoicingtest.SeedClientID, invoicingtest.SeedOtherClientID}},
		{"/suppliers", c.Suppliers, []string{invoicingtest.SeedSupplierID, invoicingtest.SeedOtherSupplierID}},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			first, err := tc.svc.ListPage(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, len(tc.seed), first.Total)

			created, err := tc.svc.Create(ctx, &invoicing.ContactCreateParams{
				Name: "Harbour Lane Bakery", Email: "accounts@harbourlane.example", Phone: "+61 3 6200 0000",
				Extra: map[string]any{"address": map[string]any{"address_line1": "9 Wharf Rd", "city": "Hobart", "country": "AU"}},
			})
			require.NoError(t, err)
			assert.NotEmpty(t, created.ID)
			assert.Equal(t, "Harbour Lane Bakery", created.Name)
			assert.Equal(t, "accounts@harbourlane.example", created.Email)
			assert.Equal(t, "+61 3 6200 0000", created.Phone)
			assert.Nil(t, created.UpdatedAt)
			assert.WithinDuration(t, srv.Now(), created.CreatedAt, 5*time.Second)
			assert.True(t, created.Has("id"), "the raw object is kept")

			got, err := tc.svc.Get(ctx, created.ID)
			require.NoError(t, err)
			assert.Equal(t, created.ID, got.ID)
			assert.Equal(t, created.Name, got.Name)
			assert.Equal(t, created.Email, got.Email)
			assert.JSONEq(t, string(rawJSON(t, created)), string(rawJSON(t, got)))

			all := e2eAll(t, tc.svc.List(ctx, nil))
			var ids []string
			for _, ct := range all {
				ids = append(ids, ct.ID)
			}
			assert.Equal(t, append(slices.Clone(tc.seed), created.ID), ids)

			last, err := tc.svc.ListPage(ctx, &invoicing.ContactListParams{
				ListParams: invoicing.ListParams{Page: len(all), PageSize: 1},
				Extra:      url.Values{"search": {"Harbour"}},
			})
			require.NoError(t, err)
			assert.Equal(t, len(all), last.Total)
			assert.False(t, last.HasMore)
			require.Len(t, last.Items, 1)
			assert.Equal(t, created.ID, last.Items[0].ID)
			reqs := e2eRequests(srv, http.MethodGet, tc.path)
			q, err := url.ParseQuery(reqs[len(reqs)-1].RawQuery)
			require.NoError(t, err)
			assert.Equal(t, "Harbour", q.Get("search"), "Extra query values are sent")

			before := len(srv.Requests())
			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Name: "Clash", Extra: map[string]any{"name": "Other"}})
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			_, err = tc.svc.Get(ctx, "not-a-uuid")
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			assert.Len(t, srv.Requests(), before, "nothing reached the service")

			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Email: "nameless@example.com"})
			assert.ErrorIs(t, err, invoicing.ErrValidation, "the service requires a name")
			_, err = tc.svc.Get(ctx, uuid.NewString())
			assert.ErrorIs(t, err, invoicing.ErrNotFound)
		})
	}

	// The address sent through Extra reached the service: quote webhooks
	// carry the client's address.
	clients := e2eAll(t, c.Clients.List(ctx, nil))
	bakery := clients[len(clients)-1]
	_, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID: bakery.ID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Bread", "1", "5")},
	})
	require.NoError(t, err)
	events := srv.Events()
	last := events[len(events)-1]
	require.Equal(t, webhooks.EventQuoteCreated, last.Name)
	ev, err := webhooks.Parse(webhooks.EventQuoteCreated, last.Body)
	require.NoError(t, err)
	qc := ev.(*webhooks.QuoteCreated)
	assert.Equal(t, "Hobart", qc.ClientAddress.City)
	assert.Equal(t, "9 Wharf Rd", qc.ClientAddress.AddressLine1)
	assert.Equal(t, bakery.Email, qc.ClientEmail)
}
