package invoicing_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestMiddlewareSeesEveryAttemptInOrder(t *testing.T) {
	var mu sync.Mutex
	var order, seen []string
	outer := func(name string) invoicing.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return next(req)
		}
	}
	// record sees the response with its body unread, and reads it itself
	// (the SDK reads the body the middleware returns).
	record := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		req.Header.Set("X-Trace", "t-1")
		resp, err := next(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s #%d %d %s", invoicing.Route(req), invoicing.Attempt(req), resp.StatusCode, body[:min(len(body), 12)]))
		mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	c, api := newMock(t, sequence(always(503, `{"detail": "busy"}`), always(200, fixture(t, "invoice.json"))),
		invoicing.WithMiddleware(outer("first"), outer("second")), invoicing.WithMiddleware(record))
	inv, err := c.Invoices.Get(context.Background(), idInvoice)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber, "the body the middleware returned is decoded")
	assert.Equal(t, []string{
		"GET /invoices/{id} #1 503 {\"detail\": \"",
		"GET /invoices/{id} #2 200 {\n  \"id\": \"3",
	}, seen)
	assert.Equal(t, []string{"first", "second", "first", "second"}, order, "in the order given, on every attempt")
	assert.Equal(t, "t-1", api.last(t).Header.Get("X-Trace"))
}

func TestMiddlewareGetsTheBodyUnread(t *testing.T) {
	var read atomic.Int64
	var atReturn int64 = -1
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil {
			return nil, err
		}
		atReturn = read.Load()
		resp.Body = countingBody{resp.Body, &read}
		return resp, nil
	}
	body := fixture(t, "invoice.json")
	c, _ := newMock(t, always(200, body), invoicing.WithMiddleware(mw))
	require.NoError(t, getInvoice(c))
	assert.Zero(t, atReturn, "nothing was read when next returned")
	assert.EqualValues(t, len(body), read.Load(), "the SDK read the whole body through the middleware's wrapper")
}

func TestMiddlewareCanAnswerWithoutSending(t *testing.T) {
	cached := func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{},
			Body: io.NopCloser(strings.NewReader(`{"id": "` + idItem + `", "item_code": "CACHED"}`)), Request: req}, nil
	}
	c, api := newMock(t, always(500, ""), invoicing.WithMiddleware(cached))
	it, err := c.Items.Get(context.Background(), idItem)
	require.NoError(t, err)
	assert.Equal(t, "CACHED", it.ItemCode)
	assert.Empty(t, api.requests())
}

func TestMiddlewareErrorIsANetworkError(t *testing.T) {
	var calls atomic.Int32
	fail := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("circuit open")
		}
		return next(req)
	}
	c, api := newMock(t, always(200, fixture(t, "invoice.json")), invoicing.WithMiddleware(fail))
	require.NoError(t, getInvoice(c), "a GET is repeated")
	assert.Len(t, api.requests(), 1)
	calls.Store(0)
	_, err := c.Quotes.Create(context.Background(), svcValidQuote())
	require.ErrorContains(t, err, "invoicing: POST /quotes: circuit open")
}

func TestRouteAndAttemptInMiddleware(t *testing.T) {
	var mu sync.Mutex
	routes := map[string]bool{}
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		mu.Lock()
		routes[invoicing.Route(req)] = true
		mu.Unlock()
		return next(req)
	}
	api := &endpointAPI{attempts: map[string]int{}}
	c, _ := newMock(t, api.respond, invoicing.WithMiddleware(mw))
	for _, m := range apiCalls() {
		require.NoError(t, m.call(context.Background(), c), m.name)
	}
	for _, want := range []string{
		"GET /invoices", "GET /invoices/{id}", "GET /invoices/{id}/pdf", "POST /invoices", "GET /quotes/{id}/pdf",
		"GET /bank-transactions/{id}", "GET /reports/trial-balance", "POST /credit-notes", "GET /items/{id}",
	} {
		assert.True(t, routes[want], want)
	}
	for r := range routes {
		for _, id := range []string{idInvoice, idItem, idQuote, idClient, idSupplier, idBill, idAccount, idTaxCode, idBankTx} {
			assert.NotContains(t, r, id, "no raw id in a route")
		}
	}
	req, err := http.NewRequest("GET", "https://example.test/", nil)
	require.NoError(t, err)
	assert.Equal(t, "", invoicing.Route(req), "not a request of the SDK")
	assert.Equal(t, 0, invoicing.Attempt(req))
}

// Attempts are numbered 1..n, and a redirect keeps its attempt's number.
func TestAttemptNumbersThroughRetriesAndRedirects(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s #%d %s", invoicing.Route(req), invoicing.Attempt(req), strings.TrimPrefix(req.URL.Path, prefix)))
		mu.Unlock()
		return next(req)
	}
	path := "/things/" + idInvoice
	c, _ := newMock(t, sequence(
		always(503, `{"detail": "busy"}`),
		always(502, `{"detail": "busy"}`),
		func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, prefix+path+"/moved", http.StatusFound)
		},
		always(200, `{}`),
	), invoicing.WithMiddleware(mw))
	require.NoError(t, c.Do(context.Background(), "GET", path, nil, nil))
	assert.Equal(t, []string{
		"GET /things/{id} #1 " + path,
		"GET /things/{id} #2 " + path,
		"GET /things/{id} #3 " + path,
		"GET /things/{id} #3 " + path + "/moved",
	}, seen)
}
