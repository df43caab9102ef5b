package invoicingtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
)

func TestURLIncludesPrefixAndIsLoopback(t *testing.T) {
	srv, _ := newServer(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/external", u.Path)
	assert.Equal(t, "127.0.0.1", u.Hostname())
}

func TestAPIIsNotMountedAtRoot(t *testing.T) {
	srv, _ := newServer(t)
	root := strings.TrimSuffix(srv.URL, BasePath)
	req, err := http.NewRequest(http.MethodGet, root+"/invoices", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	send(t, req).requireStatus(t, http.StatusNotFound)
}

func TestNewTestServerClosesWithTheTest(t *testing.T) {
	var base string
	t.Run("inner", func(t *testing.T) {
		srv := NewTestServer(t)
		base = srv.URL
		get(t, srv, "/invoices").requireStatus(t, http.StatusOK)
	})
	_, err := http.Get(base + "/invoices")
	assert.Error(t, err, "the server must be closed once the test that started it ends")
}

func TestCloseIsIdempotent(t *testing.T) {
	srv := NewServer()
	srv.Close()
	srv.Close()
}

func TestMissingOrInvalidKeyIs401(t *testing.T) {
	srv, _ := newServer(t)
	revoked := srv.NewAPIKey(AllScopes()...)
	srv.RevokeAPIKey(revoked)
	cases := map[string]string{
		"missing":  "",
		"unknown":  "Bearer sk_test_nope",
		"scheme":   "Basic " + srv.FullKey,
		"no token": "Bearer ",
		"revoked":  "Bearer " + revoked,
	}
	for name, header := range cases {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/invoices", "/items", "/quotes", "/clients", "/reports/trial-balance"} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				r := send(t, req).requireStatus(t, http.StatusUnauthorized)
				assert.Equal(t, "Invalid or missing API key", r.detail(t))
			}
		})
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	srv, _ := newServer(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/invoices", nil)
	req.Header.Set("Authorization", "bearer "+srv.FullKey)
	send(t, req).requireStatus(t, http.StatusOK)
}

func TestReadOnlyKeyGets403OnWrites(t *testing.T) {
	srv, _ := newServer(t)
	for _, path := range []string{"/invoices", "/items", "/quotes", "/clients", "/suppliers", "/bills"} {
		get := call(t, srv, http.MethodGet, path, srv.ReadOnlyKey, nil)
		get.requireStatus(t, http.StatusOK)
		r := call(t, srv, http.MethodPost, path, srv.ReadOnlyKey, map[string]any{})
		r.requireStatus(t, http.StatusForbidden)
		assert.Contains(t, r.detail(t), "scope")
	}
	assert.Empty(t, srv.Events(), "a refused write must not create anything")
}

func TestScopedKey(t *testing.T) {
	srv, _ := newServer(t)
	key := srv.NewAPIKey(ScopeItemsRead)
	call(t, srv, http.MethodGet, "/items", key, nil).requireStatus(t, http.StatusOK)
	call(t, srv, http.MethodGet, "/items/"+SeedItemID, key, nil).requireStatus(t, http.StatusOK)
	r := call(t, srv, http.MethodGet, "/invoices", key, nil).requireStatus(t, http.StatusForbidden)
	assert.Equal(t, "API key is missing the required scope: invoices:read", r.detail(t))
	call(t, srv, http.MethodGet, "/quotes/x/pdf", key, nil).requireStatus(t, http.StatusForbidden)
	call(t, srv, http.MethodPost, "/items", key, map[string]any{}).requireStatus(t, http.StatusForbidden)

	none := srv.NewAPIKey()
	call(t, srv, http.MethodGet, "/items", none, nil).requireStatus(t, http.StatusForbidden)
}

func TestUnknownPathAndMethod(t *testing.T) {
	srv, _ := newServer(t)
	r := get(t, srv, "/nothing-here").requireStatus(t, http.StatusNotFound)
	assert.Equal(t, "Not Found", r.detail(t))

	r = call(t, srv, http.MethodDelete, "/invoices", srv.FullKey, nil).requireStatus(t, http.StatusMethodNotAllowed)
	assert.Equal(t, "GET, POST", r.header.Get("Allow"))
	assert.Equal(t, "Method Not Allowed", r.detail(t))
}

func TestRequestLogOmitsTheKey(t *testing.T) {
	srv, _ := newServer(t)
	get(t, srv, "/invoices?status=draft")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "GET", reqs[0].Method)
	assert.Equal(t, "/invoices", reqs[0].Path)
	assert.Equal(t, "status=draft", reqs[0].RawQuery)
	assert.Equal(t, http.StatusOK, reqs[0].Status)
	assert.Equal(t, testStart, reqs[0].At)
	assert.Empty(t, reqs[0].Header.Get("Authorization"))
}

func TestEveryListEndpointPaginates(t *testing.T) {
	srv, _ := newServer(t)
	createInvoice(t, srv, nil)
	createQuote(t, srv, nil)
	post(t, srv, "/bills", billBody(nil)).requireStatus(t, http.StatusCreated)
	lists := map[string]string{
		"/invoices": "invoices", "/items": "items", "/quotes": "quotes", "/clients": "clients",
		"/suppliers": "suppliers", "/bills": "bills", "/accounts": "accounts", "/tax-codes": "tax_codes",
		"/bank-accounts": "bank_accounts", "/bank-transactions": "bank_transactions",
	}
	for path, key := range lists {
		t.Run(key, func(t *testing.T) {
			page := get(t, srv, path+"?page_size=1").requireStatus(t, http.StatusOK).object(t)
			assert.Len(t, page, 5, "the records plus total, page, page_size, has_more")
			assert.Len(t, list(t, page, key), 1)
			assert.Equal(t, num("1"), page["page"])
			assert.Equal(t, num("1"), page["page_size"])
			total, err := strconv.Atoi(string(page["total"].(jsonNumber)))
			require.NoError(t, err)
			assert.Equal(t, total > 1, page["has_more"])

			last := get(t, srv, fmt.Sprintf("%s?page_size=1&page=%d", path, total)).object(t)
			assert.Len(t, list(t, last, key), 1)
			assert.Equal(t, false, last["has_more"])

			get(t, srv, path+"?page_size=101").requireStatus(t, http.StatusBadRequest)
			get(t, srv, path+"?page=0").requireStatus(t, http.StatusBadRequest)
		})
	}
}

// TestClientIsWiredToTheServer checks only the wiring of Client and
// ClientWithKey (base URL and key); the API itself is tested over plain
// net/http elsewhere in this package.
func TestClientIsWiredToTheServer(t *testing.T) {
	srv, _ := newServer(t)
	created := createInvoice(t, srv, nil)

	inv, err := srv.Client().Invoices.Get(context.Background(), created["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, "INV-0001", inv.InvoiceNumber)

	reqs := srv.Requests()
	assert.Equal(t, "/invoices/"+created["id"].(string), reqs[len(reqs)-1].Path)
	assert.Equal(t, http.StatusOK, reqs[len(reqs)-1].Status)

	revoked := srv.NewAPIKey(AllScopes()...)
	srv.RevokeAPIKey(revoked)
	_, err = srv.ClientWithKey(revoked, invoicing.WithMaxRetries(0)).Invoices.Get(context.Background(), created["id"].(string))
	var apiErr *invoicing.Error
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
}

func TestWithListenerServesOnTheGivenListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(WithListener(l))
	assert.Equal(t, "http://"+l.Addr().String()+BasePath, srv.URL)
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)

	srv.Close()
	_, err = net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "Close closes the listener")
}

func TestRootURLNamesUnspecifiedAddressesByLoopback(t *testing.T) {
	for addr, want := range map[*net.TCPAddr]string{
		{IP: net.IPv4(192, 0, 2, 1), Port: 4010}: "http://192.0.2.1:4010",
		{IP: net.IPv4zero, Port: 4010}:           "http://127.0.0.1:4010",
		{IP: net.IPv6unspecified, Port: 4010}:    "http://[::1]:4010",
		{IP: net.IPv6loopback, Port: 80}:         "http://[::1]:80",
	} {
		assert.Equal(t, want, rootURL(addr), "%v", addr)
	}
}
