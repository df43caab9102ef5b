package invoicing_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// An empty base URL or key comes from the environment; what is in neither
// place is named.
func TestNewClientFromEnvironment(t *testing.T) {
	t.Setenv(invoicing.EnvBaseURL, "")
	t.Setenv(invoicing.EnvAPIKey, "")
	_, err := invoicing.NewClient("", "")
	assert.EqualError(t, err, "invoicing: NewClient needs a base URL (or INVOICING_BASE_URL) and an API key (or INVOICING_API_KEY)")
	_, err = invoicing.NewClient(testURL, "")
	assert.EqualError(t, err, "invoicing: NewClient needs an API key (or INVOICING_API_KEY)")
	_, err = invoicing.NewClient(" ", testKey)
	assert.EqualError(t, err, "invoicing: NewClient needs a base URL (or INVOICING_BASE_URL)")

	t.Setenv(invoicing.EnvBaseURL, testURL)
	_, err = invoicing.NewClient("", " \n")
	assert.EqualError(t, err, "invoicing: NewClient needs an API key (or INVOICING_API_KEY)")
	t.Setenv(invoicing.EnvAPIKey, testKey+"\n")
	api := &mockAPI{handler: always(200, fixture(t, "invoice.json"))}
	c, err := invoicing.NewClient("", "", invoicing.WithHTTPClient(plainHTTPClient(api.transport())))
	require.NoError(t, err)
	assert.Equal(t, testURL, c.BaseURL())
	require.NoError(t, getInvoice(c))
	assert.Equal(t, "Bearer "+testKey, api.last(t).Header.Get("Authorization"), "trimmed")

	// Arguments win over the environment.
	c, api = newMock(t, &mockAPI{base: "https://other.invoicing.test" + prefix, key: "sk_other", handler: always(200, fixture(t, "invoice.json"))})
	assert.Equal(t, "https://other.invoicing.test"+prefix, c.BaseURL())
	require.NoError(t, getInvoice(c))
	assert.Equal(t, "Bearer sk_other", api.last(t).Header.Get("Authorization"))

	// A key from the environment is checked as any key, and not shown.
	t.Setenv(invoicing.EnvAPIKey, "Bearer sk_env_secret")
	_, err = invoicing.NewClient("", "")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sk_env_secret")
}

// The first mistakes with a key: a "Bearer " prefix is named, whitespace
// around the key (from a file or an environment variable) is trimmed,
// whitespace or control characters inside it are refused, and the key never
// appears in an error.
func TestNewClientKeyMistakes(t *testing.T) {
	const key = "sk_live_4f3e2d1c0b9a"
	for _, k := range []string{"Bearer " + key, "bearer " + key, "BEARER " + key, " Bearer " + key + "\n"} {
		c, err := invoicing.NewClient(testURL, k)
		assert.Nil(t, c)
		assert.EqualError(t, err, `invoicing: the API key starts with "Bearer ": omit the Bearer prefix, the SDK adds it`, "%q", k)
	}
	for _, k := range []string{key + "\n", "  " + key + "\t\r\n"} {
		c, api := newMock(t, &mockAPI{key: k, handler: always(200, fixture(t, "invoice.json"))})
		require.NoError(t, getInvoice(c))
		assert.Equal(t, "Bearer "+key, api.last(t).Header.Get("Authorization"), "the key is sent trimmed")
	}
	for _, k := range []string{"sk live", key + "\r\nX-Evil: 1", "sk\x00" + key, "sk\x7f" + key, "sk\t" + key,
		"sk\u00a0" + key, "sk\u0085" + key, "sk\u2028" + key, "sk\u3000" + key} {
		_, err := invoicing.NewClient(testURL, k)
		assert.EqualError(t, err, "invoicing: the API key contains whitespace or control characters", "%q", k)
	}
}

func TestNewClientChecksTheBaseURL(t *testing.T) {
	for name, tc := range map[string]struct{ base, want string }{
		"relative":  {"/api/v1/external", `invoicing: base URL "/api/v1/external" has no scheme (want https://host/api/v1/external, or http:// for a server on this machine)`},
		"no scheme": {"api.example.test/api/v1/external", `base URL "api.example.test/api/v1/external" has no scheme`},
		"host:port, no scheme": {"127.0.0.1:8080/api/v1/external",
			`invoicing: base URL "127.0.0.1:8080/api/v1/external" has no scheme (want https://host/api/v1/external, or http:// for a server on this machine)`},
		"no host":      {"https:///api/v1/external", "is not absolute"},
		"invalid":      {"https://a b.test:x/api", "is not a valid URL"},
		"ftp":          {"ftp://api.example.test/api/v1/external", `invoicing: base URL scheme "ftp" is not http or https`},
		"credentials":  {"https://u:p@api.example.test/api/v1/external", "invoicing: base URL must not contain credentials"},
		"user only":    {"https://u@api.example.test/api/v1/external", "credentials"},
		"query":        {"https://api.example.test/api/v1/external?x=1", "invoicing: base URL must not have a query or fragment"},
		"fragment":     {"https://api.example.test/api/v1/external#top", "query or fragment"},
		"plain http":   {"http://api.example.test/api/v1/external", "invoicing: refusing to send the API key over plain http to api.example.test (use https, or WithInsecureHTTP)"},
		"private http": {"http://10.0.0.5:8080/api/v1/external", "refusing to send the API key over plain http to 10.0.0.5:8080"},
		"lookalike":    {"http://localhost.evil.test/api/v1/external", "plain http"},
	} {
		c, err := invoicing.NewClient(tc.base, testKey)
		assert.Nil(t, c, name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.want, name)
		assert.NotContains(t, err.Error(), testKey, name)
	}
	for _, base := range []string{
		"http://localhost:8080/api/v1/external", "http://LOCALHOST/api/v1/external", "http://127.0.0.1/api/v1/external",
		"http://[::1]:9/api/v1/external", "http://127.3.2.1/api/v1/external", "http://api.localhost/api/v1/external",
		"https://api.example.test/api/v1/external", "HTTPS://api.example.test/api/v1/external",
	} {
		_, err := invoicing.NewClient(base, testKey)
		assert.NoError(t, err, base)
	}
	c, err := invoicing.NewClient("http://api.internal.test/api/v1/external/", testKey, invoicing.WithInsecureHTTP())
	require.NoError(t, err)
	assert.Equal(t, "http://api.internal.test/api/v1/external", c.BaseURL(), "trailing slash trimmed")
}

// The base URL's path prefix is kept on every request, and a trailing
// slash does not make a double one.
func TestBasePathKeptOnEveryRequest(t *testing.T) {
	for _, base := range []string{testURL, testURL + "/", testURL + "//"} {
		var got []string
		var mu sync.Mutex
		c, _ := newMock(t, &mockAPI{base: base, handler: func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.URL.EscapedPath())
			mu.Unlock()
			if strings.HasSuffix(r.URL.Path, "/invoices") {
				reply(w, 200, `{"invoices": [], "has_more": false}`)
				return
			}
			reply(w, 200, fixture(t, "invoice.json"))
		}})
		require.NoError(t, getInvoice(c))
		_, err := c.Invoices.ListPage(context.Background(), nil)
		require.NoError(t, err)
		require.NoError(t, c.Do(context.Background(), "GET", "/reports/x", nil, nil))
		assert.Equal(t, []string{prefix + "/invoices/" + idInvoice, prefix + "/invoices", prefix + "/reports/x"}, got, base)
	}
}

func TestUserAgent(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "item.json")))
	_, err := c.Items.Get(context.Background(), idItem)
	require.NoError(t, err)
	assert.Regexp(t, `^invoicing-go/`+invoicing.Version+` \(go\S+\)$`, api.last(t).Header.Get("User-Agent"))

	c, api = newMock(t, always(200, fixture(t, "item.json")), invoicing.WithUserAgent("billing-sync/2.1"))
	_, err = c.Items.Get(context.Background(), idItem)
	require.NoError(t, err)
	assert.Regexp(t, `^invoicing-go/\S+ \(go\S+\) billing-sync/2\.1$`, api.last(t).Header.Get("User-Agent"))
}

// No way of printing a Client or its services shows the key.
func TestAPIKeyCannotBePrinted(t *testing.T) {
	const key = "sk_live_do_not_print_me_0123456789"
	c := newClient(t, "https://api.example.test"+prefix, key, invoicing.WithUserAgent("app/1"))
	// Make a call, so that whatever a call leaves behind is printed too.
	used, _ := newMock(t, &mockAPI{key: key, handler: always(429, `{"detail": "slow"}`)}, invoicing.WithMaxRetries(0))
	require.Error(t, getInvoice(used))
	values := map[string]any{
		"*Client": c, "Client": reflect.ValueOf(c).Elem().Interface(), "used *Client": used,
		"used Client": reflect.ValueOf(used).Elem().Interface(),
		"Invoices":    c.Invoices, "*Invoices": *c.Invoices, "Items": c.Items,
		"Quotes": c.Quotes, "Clients": c.Clients, "Suppliers": c.Suppliers, "Bills": c.Bills,
		"Accounts": c.Accounts, "TaxCodes": c.TaxCodes, "Reports": c.Reports, "*Reports": *c.Reports,
		"BankAccounts": c.BankAccounts, "BankTransactions": c.BankTransactions,
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t", "%p", "%T", "%60.4v", "%08d"} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, key, "%s printed with %s", name, verb)
			assert.NotContains(t, out, "Bearer", "%s printed with %s", name, verb)
			assert.NotContains(t, out, fmt.Sprintf("%x", key), "%s printed with %s", name, verb)
			assert.NotContains(t, out, fmt.Sprintf("%X", key), "%s printed with %s", name, verb)
		}
	}
	assert.Equal(t, "invoicing.Client{https://api.example.test"+prefix+"}", fmt.Sprintf("%v", c))
	assert.Equal(t, "invoicing.Client{https://api.example.test"+prefix+"}", c.String())
	assert.Equal(t, `"invoicing.Client{https://api.example.test`+prefix+`}"`, fmt.Sprintf("%q", c))
}

// closeCounter is a caller's transport that counts CloseIdleConnections.
type closeCounter struct {
	http.RoundTripper
	closes atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.closes.Add(1) }

func TestCloseIdleConnections(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(httpmock.NewStringResponder(503, `{"detail": "busy"}`))
	rt := &closeCounter{RoundTripper: mt}
	c := newClient(t, "", "", invoicing.WithHTTPClient(&http.Client{Transport: rt}), invoicing.WithRetryWait(0, 0))

	// Calls never close the caller's idle connections: not a call that
	// spends its retries, nor one cancelled while it waits to retry.
	require.ErrorIs(t, getInvoice(c), invoicing.ErrServer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &logRecorder{on: func(r slog.Record) {
		if r.Message == "invoicing: retrying" {
			cancel()
		}
	}}
	waiting := newClient(t, "", "", invoicing.WithHTTPClient(&http.Client{Transport: rt}),
		invoicing.WithRetryWait(time.Minute, time.Minute), logs.logger())
	_, err := waiting.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 4+1, mt.GetTotalCallCount())
	assert.Zero(t, rt.closes.Load())

	c.CloseIdleConnections()
	assert.EqualValues(t, 1, rt.closes.Load(), "forwarded to the transport")
	require.ErrorIs(t, getInvoice(c), invoicing.ErrServer, "the Client stays usable")
	assert.Equal(t, 4+1+4, mt.GetTotalCallCount())

	// A transport without the method, and the SDK's own, are fine too.
	c, _ = newMock(t, always(200, fixture(t, "invoice.json")))
	c.CloseIdleConnections()
	require.NoError(t, getInvoice(c))
	newClient(t, "", "").CloseIdleConnections()
}

func TestConcurrentUse(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "invoice.json")))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				inv, err := c.Invoices.Get(context.Background(), idInvoice)
				if assert.NoError(t, err) {
					assert.Equal(t, "INV-0042", inv.InvoiceNumber)
					assert.Len(t, inv.LineItems, 2)
				}
			}
		})
	}
	wg.Wait()
	assert.Len(t, api.requests(), 160)
}

func TestServicesHangOffTheClient(t *testing.T) {
	v := reflect.ValueOf(newClient(t, "", "")).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			assert.False(t, v.Field(i).IsNil(), f.Name)
		}
	}
}
