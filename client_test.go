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
	t.Setenv(invoicing.EnvBaseURL, "")
	t.Setenv(invoicing.EnvAPIKey, "")
	cases := map[string]struct {
		base, key string
		opts      []invoicing.Option
		want      string
	}{
		"empty key":     {"https://api.example.test" + prefix, "", nil, "NewClient needs an API key (or INVOICING_API_KEY)"},
		"blank key":     {"https://api.example.test" + prefix, "  ", nil, "NewClient needs an API key (or INVOICING_API_KEY)"},
		"key with CRLF": {"https://api.example.test" + prefix, "abc\r\nX-Evil: 1", nil, "whitespace or control"},
		"relative URL":  {"/api/v1/external", "k", nil, `base URL "/api/v1/external" has no scheme (want https://host/api/v1/external`},
		"no scheme":     {"api.example.test/api/v1/external", "k", nil, "has no scheme"},
		"host:port, no scheme": {"127.0.0.1:8080/api/v1/external", "k", nil,
			`base URL "127.0.0.1:8080/api/v1/external" has no scheme (want https://host/api/v1/external, or http:// for a server on this machine)`},
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

// The first mistakes with a key: a "Bearer " prefix is named, whitespace
// around the key (from a file or an environment variable) is trimmed, and
// the key never appears in an error.
func TestNewClientKeyMistakes(t *testing.T) {
	t.Setenv(invoicing.EnvAPIKey, "")
	const key = "sk_live_4f3e2d1c0b9a"
	for _, k := range []string{"Bearer " + key, "bearer " + key, "BEARER " + key} {
		_, err := invoicing.NewClient("https://api.example.test"+prefix, k)
		require.Error(t, err, k)
		assert.Equal(t, `invoicing: the API key starts with "Bearer ": omit the Bearer prefix, the SDK adds it`, err.Error())
		assert.NotContains(t, err.Error(), key)
	}
	for _, k := range []string{key + "\n", "  " + key + "\t\r\n"} {
		_, a := newTestAPI(t, always(200, fixture(t, "invoice.json")))
		c, err := invoicing.NewClient(a.srv.URL+prefix, k)
		require.NoError(t, err, "%q", k)
		_, err = c.Invoices.Get(context.Background(), invoiceID)
		require.NoError(t, err)
		assert.Equal(t, "Bearer "+key, a.last(t).Header.Get("Authorization"), "the key is sent trimmed")
	}
	_, err := invoicing.NewClient("https://api.example.test"+prefix, "sk live")
	assert.EqualError(t, err, "invoicing: the API key contains whitespace or control characters")
}

// An empty base URL or key comes from the environment; what is in neither
// place is named.
func TestNewClientFromEnvironment(t *testing.T) {
	t.Setenv(invoicing.EnvBaseURL, "")
	t.Setenv(invoicing.EnvAPIKey, "")
	_, err := invoicing.NewClient("", "")
	assert.EqualError(t, err, "invoicing: NewClient needs a base URL (or INVOICING_BASE_URL) and an API key (or INVOICING_API_KEY)")
	_, err = invoicing.NewClient("https://api.example.test"+prefix, "")
	assert.EqualError(t, err, "invoicing: NewClient needs an API key (or INVOICING_API_KEY)")

	_, a := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	t.Setenv(invoicing.EnvBaseURL, a.srv.URL+prefix)
	_, err = invoicing.NewClient("", "")
	assert.EqualError(t, err, "invoicing: NewClient needs an API key (or INVOICING_API_KEY)")
	t.Setenv(invoicing.EnvAPIKey, testKey+"\n")
	fromEnv, err := invoicing.NewClient("", "")
	require.NoError(t, err)
	assert.Equal(t, a.srv.URL+prefix, fromEnv.BaseURL())
	_, err = fromEnv.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+testKey, a.last(t).Header.Get("Authorization"))

	// Arguments win over the environment.
	explicit, err := invoicing.NewClient("https://other.example.test"+prefix, "sk_other")
	require.NoError(t, err)
	assert.Equal(t, "https://other.example.test"+prefix, explicit.BaseURL())
}
