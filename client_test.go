package invoicing_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestNewClientRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		base, key string
		opts      []invoicing.Option
		want      string
	}{
		"empty key":       {"https://api.example.test" + prefix, "", nil, "API key is empty"},
		"blank key":       {"https://api.example.test" + prefix, "  ", nil, "API key is empty"},
		"key with CRLF":   {"https://api.example.test" + prefix, "abc\r\nX-Evil: 1", nil, "whitespace or control"},
		"relative URL":    {"/api/v1/external", "k", nil, "not absolute"},
		"no scheme":       {"api.example.test/api/v1/external", "k", nil, "not absolute"},
		"ftp":             {"ftp://api.example.test/api/v1/external", "k", nil, "not http or https"},
		"credentials":     {"https://u:p@api.example.test/api/v1/external", "k", nil, "credentials"},
		"query":           {"https://api.example.test/api/v1/external?x=1", "k", nil, "query"},
		"plain http":      {"http://api.example.test/api/v1/external", "k", nil, "refusing to send the API key over plain http"},
		"private http":    {"http://10.0.0.5/api/v1/external", "k", nil, "plain http"},
		"negative retry":  {"https://a.test", "k", []invoicing.Option{invoicing.WithMaxRetries(-1)}, "max retries"},
		"bad wait bounds": {"https://a.test", "k", []invoicing.Option{invoicing.WithRetryWait(2, 1)}, "retry wait"},
		"bad body cap":    {"https://a.test", "k", []invoicing.Option{invoicing.WithMaxResponseBytes(0)}, "max response"},
		"UA newline":      {"https://a.test", "k", []invoicing.Option{invoicing.WithUserAgent("a\nb")}, "user agent"},
	}
	for name, tc := range cases {
		c, err := invoicing.NewClient(tc.base, tc.key, tc.opts...)
		assert.Nil(t, c, name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.want, name)
		assert.NotContains(t, err.Error(), "X-Evil", name)
	}
}

func TestNewClientAcceptsLoopbackHTTPAndOptIn(t *testing.T) {
	for _, base := range []string{
		"http://localhost:8080/api/v1/external", "http://127.0.0.1/api/v1/external",
		"http://[::1]:9/api/v1/external", "http://127.3.2.1/api/v1/external",
	} {
		_, err := invoicing.NewClient(base, "k")
		assert.NoError(t, err, base)
	}
	c, err := invoicing.NewClient("http://api.internal.test/api/v1/external/", "k", invoicing.WithInsecureHTTP())
	require.NoError(t, err)
	assert.Equal(t, "http://api.internal.test/api/v1/external", c.BaseURL(), "trailing slash trimmed")
}

func TestBasePathPrefixKeptOnEveryRequest(t *testing.T) {
	// newTestAPI fails the test for any request outside the prefix; a base
	// URL with a trailing slash must not produce a double slash either.
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	c2, err := invoicing.NewClient(api.srv.URL+prefix+"/", testKey)
	require.NoError(t, err)
	for _, cl := range []*invoicing.Client{c, c2} {
		_, err := cl.Invoices.Get(context.Background(), invoiceID)
		require.NoError(t, err)
		assert.Equal(t, "/invoices/"+invoiceID, api.last(t).Path)
	}
}

func TestUserAgentExtraPart(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "item.json")), invoicing.WithUserAgent("billing-sync/2.1"))
	_, err := c.Items.Get(context.Background(), itemID)
	require.NoError(t, err)
	assert.Regexp(t, `^invoicing-go/\S+ \(go\S+\) billing-sync/2\.1$`, api.last(t).Header.Get("User-Agent"))
}

func TestCustomHTTPClientIsUsed(t *testing.T) {
	var seen int
	var mu sync.Mutex
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen++
		mu.Unlock()
		return base.RoundTrip(r)
	})
	_, api := newTestAPI(t, always(200, fixture(t, "item.json")))
	c, err := invoicing.NewClient(api.srv.URL+prefix, testKey, invoicing.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	_, err = c.Items.Get(context.Background(), itemID)
	require.NoError(t, err)
	assert.Equal(t, 1, seen)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestConcurrentUse(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				inv, err := c.Invoices.Get(context.Background(), invoiceID)
				if assert.NoError(t, err) {
					assert.Equal(t, "INV-0042", inv.InvoiceNumber)
					assert.Len(t, inv.LineItems, 2)
				}
			}
		}()
	}
	wg.Wait()
	assert.Len(t, api.requests(), 160)
}

func TestCloseIdleConnectionsKeepsClientUsable(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "item.json")))
	_, err := c.Items.Get(context.Background(), itemID)
	require.NoError(t, err)
	c.CloseIdleConnections()
	_, err = c.Items.Get(context.Background(), itemID)
	require.NoError(t, err)
	assert.Len(t, api.requests(), 2)
}
