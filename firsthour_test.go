package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// The first mistakes a new user makes explain themselves.

// A base URL without /api/v1/external meets the service's 404 for a path it
// does not have ({"detail": "Not Found"}, or a proxy's HTML page): the error
// says what the base URL must end in, and shows the one used.
func TestNotFoundFromABaseURLWithoutThePrefixSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix+"/") {
			reply(w, 404, `{"detail": "Invoice not found"}`)
			return
		}
		reply(w, 404, `{"detail": "Not Found"}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, base := range []string{srv.URL, srv.URL + "/api/v1", srv.URL + "/"} {
		c, err := invoicing.NewClient(base, testKey)
		require.NoError(t, err)
		_, err = c.Invoices.Get(ctx, invoiceID)
		require.ErrorIs(t, err, invoicing.ErrNotFound)
		want := "invoicing: GET /invoices/" + invoiceID + ": 404 Not Found (the base URL must end in /api/v1/external; this Client uses " + strings.TrimRight(base, "/") + ")"
		assert.Equal(t, want, err.Error(), base)
		for range c.Invoices.List(ctx, nil) {
			break
		}
	}

	// With the prefix, a 404 is about the record: no advice.
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	require.NoError(t, err)
	_, err = c.Invoices.Get(ctx, invoiceID)
	assert.Equal(t, "invoicing: GET /invoices/"+invoiceID+`: 404 Not Found: "Invoice not found"`, err.Error())
}

// An error after retries says how many attempts were made, for a status
// and for a network failure alike.
func TestErrorAfterRetriesCountsAttempts(t *testing.T) {
	c, _ := newTestAPI(t, always(503, `{"detail": "maintenance"}`), invoicing.WithClock(newFakeClock()))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	assert.Equal(t, "invoicing: GET /invoices/"+invoiceID+`: 503 Service Unavailable: "maintenance" (after 4 attempts)`, err.Error())
	_, err = c.Invoices.Get(context.Background(), invoiceID, invoicing.WithRetries(0))
	assert.Equal(t, "invoicing: GET /invoices/"+invoiceID+`: 503 Service Unavailable: "maintenance"`, err.Error(), "one attempt: nothing to count")

	down, err := invoicing.NewClient("http://127.0.0.1:1"+prefix, testKey, invoicing.WithClock(newFakeClock()), invoicing.WithMaxRetries(2))
	require.NoError(t, err)
	_, err = down.Invoices.Get(context.Background(), invoiceID)
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "(after 3 attempts)"), err.Error())
}

// A create given nil says which params it needs.
func TestCreateWithNilParamsSaysWhatItNeeds(t *testing.T) {
	c, api := newTestAPI(t, always(201, "{}"))
	ctx := context.Background()
	for want, call := range map[string]func() error{
		"invoicing: invalid params: Invoices.Create needs a *InvoiceCreateParams with ClientID and at least one of LineItems, got nil": func() error {
			_, err := c.Invoices.Create(ctx, nil)
			return err
		},
		"invoicing: invalid params: Quotes.Create needs a *QuoteCreateParams with ClientID and at least one of LineItems, got nil": func() error {
			_, err := c.Quotes.Create(ctx, nil)
			return err
		},
		"invoicing: invalid params: Items.Create needs a *ItemCreateParams with Name, AccountID, TaxCodeID and (for SALES and PURCHASE items) UnitPrice, got nil": func() error {
			_, err := c.Items.Create(ctx, nil)
			return err
		},
		"invoicing: invalid params: Clients.Create needs a *ContactCreateParams (an empty one is allowed), got nil": func() error {
			_, err := c.Clients.Create(ctx, nil)
			return err
		},
		"invoicing: invalid params: Suppliers.Create needs a *ContactCreateParams (an empty one is allowed), got nil": func() error {
			_, err := c.Suppliers.Create(ctx, nil)
			return err
		},
		"invoicing: invalid params: Bills.Create needs a *BillCreateParams (an empty one is allowed), got nil": func() error {
			_, err := c.Bills.Create(ctx, nil)
			return err
		},
	} {
		err := call()
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		assert.EqualError(t, err, want)
	}
	assert.Empty(t, api.requests())
}

// WithPrefetch given to a method that fetches one response fails the call
// with ErrInvalidOption instead of being ignored.
func TestPrefetchOnlyForList(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	ctx := context.Background()
	_, err := c.Invoices.Get(ctx, invoiceID, invoicing.WithPrefetch(4))
	require.ErrorIs(t, err, invoicing.ErrInvalidOption)
	assert.EqualError(t, err, "invoicing: invalid option: WithPrefetch applies to List only; this call fetches one response")
	_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithPrefetch(4))
	require.ErrorIs(t, err, invoicing.ErrInvalidOption)
	var raw []byte
	require.ErrorIs(t, c.Do(ctx, http.MethodGet, "/invoices", nil, &raw, invoicing.WithPrefetch(2)), invoicing.ErrInvalidOption)
	_, err = c.Invoices.PDF(ctx, invoiceID, invoicing.WithPrefetch(2))
	require.ErrorIs(t, err, invoicing.ErrInvalidOption)
	assert.Empty(t, api.requests(), "nothing sent")
}

// One Client serves several businesses: each call may carry its own key,
// held as secretly as the Client's, and a 429 pauses only the calls of the
// key that met it.
func TestPerCallAPIKey(t *testing.T) {
	const tenantA, tenantB = "sk_tenant_a_0123456789", "sk_tenant_b_9876543210"
	clk := newFakeClock()
	var limitA atomic.Bool
	limitA.Store(true)
	c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+tenantA && limitA.CompareAndSwap(true, false) {
			reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "20")
			return
		}
		reply(w, 200, fixture(t, "invoice.json"))
	}, invoicing.WithClock(clk), invoicing.WithRetryWait(time.Millisecond, time.Minute))
	ctx := context.Background()

	_, err := c.Invoices.Get(ctx, invoiceID, invoicing.WithAPIKey(tenantB+"\n"))
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+tenantB, api.last(t).Header.Get("Authorization"), "trimmed, sent in place of the Client's")
	_, err = c.Invoices.Get(ctx, invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+testKey, api.last(t).Header.Get("Authorization"), "the Client's key otherwise")

	// Tenant A meets a 429 and gives up at once; A's next call in its
	// window, with a deadline inside it, gets the 429 without sending.
	_, err = c.Invoices.Get(ctx, invoiceID, invoicing.WithAPIKey(tenantA), invoicing.WithRetries(0))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	sent := len(api.requests())
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.Invoices.Get(short, invoiceID, invoicing.WithAPIKey(tenantA))
	require.ErrorIs(t, err, invoicing.ErrRateLimited, "A is paused")
	assert.Len(t, api.requests(), sent)
	// Tenant B and the Client's own key are not paused.
	_, err = c.Invoices.Get(short, invoiceID, invoicing.WithAPIKey(tenantB))
	require.NoError(t, err)
	_, err = c.Invoices.Get(short, invoiceID)
	require.NoError(t, err)
	assert.Empty(t, clk.waits(), "nobody waited")

	// A bad key is an invalid option; the key is never shown.
	for _, bad := range []string{"Bearer " + tenantA, "sk tenant", ""} {
		_, err = c.Invoices.Get(ctx, invoiceID, invoicing.WithAPIKey(bad))
		require.ErrorIs(t, err, invoicing.ErrInvalidOption, bad)
		assert.NotContains(t, err.Error(), tenantA)
	}
	opt := invoicing.WithAPIKey(tenantA)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, opt), tenantA, verb)
	}
}

// Collect gathers a list, with a cap; First takes its first record.
func TestCollectAndFirst(t *testing.T) {
	body := func(ids ...string) string {
		var recs []string
		for _, id := range ids {
			recs = append(recs, `{"id": "`+id+`", "invoice_number": "INV-`+id[:4]+`"}`)
		}
		return `{"invoices": [` + strings.Join(recs, ",") + `], "total": ` + fmt.Sprint(len(ids)) + `, "page": 1, "page_size": 100, "has_more": false}`
	}
	ids := []string{"a1b2c3d4-0000-4000-8000-000000000001", "a1b2c3d5-0000-4000-8000-000000000002", "a1b2c3d6-0000-4000-8000-000000000003"}
	c, _ := newTestAPI(t, always(200, body(ids...)))
	ctx := context.Background()

	all, err := invoicing.Collect(c.Invoices.List(ctx, nil), 0)
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.Equal(t, ids[2], all[2].ID)

	capped, err := invoicing.Collect(c.Invoices.List(ctx, nil), 2)
	require.ErrorIs(t, err, invoicing.ErrTooManyRecords)
	assert.EqualError(t, err, "invoicing: the list holds more than 2 records")
	assert.Len(t, capped, 2, "the first 2 come with the error")

	exact, err := invoicing.Collect(c.Invoices.List(ctx, nil), 3)
	require.NoError(t, err, "exactly the cap is no error")
	assert.Len(t, exact, 3)

	first, err := invoicing.First(c.Invoices.List(ctx, nil))
	require.NoError(t, err)
	assert.Equal(t, ids[0], first.ID)

	empty, _ := newTestAPI(t, always(200, body()))
	_, err = invoicing.First(empty.Invoices.List(ctx, nil))
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	assert.EqualError(t, err, "invoicing: the list is empty")
	assert.ErrorIs(t, err, invoicing.ErrEmptyList)

	failing, _ := newTestAPI(t, always(500, `{"detail": "down"}`), invoicing.WithMaxRetries(0))
	got, err := invoicing.Collect(failing.Invoices.List(ctx, nil), 0)
	assert.Empty(t, got)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	_, err = invoicing.First(failing.Invoices.List(ctx, nil))
	require.ErrorAs(t, err, &apiErr)
	assert.False(t, errors.Is(err, invoicing.ErrNotFound))
}
