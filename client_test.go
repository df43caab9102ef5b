package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
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

// ------------------------------------------------------------ NewClient

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

// ----------------------------------------------------------- the Client

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

// ------------------------------------------------------- client Options

func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  invoicing.Option
		want string
	}{
		{"zero timeout", invoicing.WithTimeout(0), "timeout 0s is not positive"},
		{"negative timeout", invoicing.WithTimeout(-time.Second), "timeout -1s is not positive"},
		{"negative retries", invoicing.WithMaxRetries(-1), "max retries -1 is negative"},
		{"negative min wait", invoicing.WithRetryWait(-1, time.Second), "retry wait bounds"},
		{"max below min", invoicing.WithRetryWait(2*time.Second, time.Second), "want 0 <= min <= max"},
		{"zero rate", invoicing.WithRateLimit(0, 1), "rate limit"},
		{"negative rate", invoicing.WithRateLimit(-5, 1), "rate limit"},
		{"NaN rate", invoicing.WithRateLimit(math.NaN(), 1), "rate limit"},
		{"zero burst", invoicing.WithRateLimit(5, 0), "burst of at least 1"},
		{"nil middleware", invoicing.WithMiddleware(nil), "nil middleware"},
		{"UA with LF", invoicing.WithUserAgent("a\nb"), "user agent must not contain line breaks"},
		{"UA with CR", invoicing.WithUserAgent("a\rX-Evil: 1"), "user agent"},
		{"zero body cap", invoicing.WithMaxResponseBytes(0), "max response bytes 0 is not positive"},
		{"negative body cap", invoicing.WithMaxResponseBytes(-1), "max response bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := invoicing.NewClient(testURL, testKey, tc.opt)
			assert.Nil(t, c)
			require.ErrorIs(t, err, invoicing.ErrInvalidOption)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "invoicing: invalid option: "), err.Error())
			assert.NotContains(t, err.Error(), testKey)
		})
	}
	// The first invalid option is the one reported.
	_, err := invoicing.NewClient(testURL, testKey, invoicing.WithTimeout(time.Second), invoicing.WithMaxRetries(-2), invoicing.WithTimeout(0))
	assert.EqualError(t, err, "invoicing: invalid option: max retries -2 is negative")
}

func TestOptionsAcceptBoundaryValues(t *testing.T) {
	for name, opts := range map[string][]invoicing.Option{
		"nil option":               {nil},
		"nil http.Client":          {invoicing.WithHTTPClient(nil)},
		"no retries":               {invoicing.WithMaxRetries(0)},
		"no wait":                  {invoicing.WithRetryWait(0, 0)},
		"tiny timeout":             {invoicing.WithTimeout(time.Nanosecond)},
		"burst of 1":               {invoicing.WithRateLimit(0.5, 1)},
		"no middleware":            {invoicing.WithMiddleware()},
		"nil logger":               {invoicing.WithLogger(nil)},
		"empty user agent part":    {invoicing.WithUserAgent("")},
		"one byte":                 {invoicing.WithMaxResponseBytes(1)},
		"insecure http, but https": {invoicing.WithInsecureHTTP()},
	} {
		c, err := invoicing.NewClient(testURL, testKey, opts...)
		require.NoError(t, err, name)
		assert.Equal(t, testURL, c.BaseURL(), name)
	}
	// The values take effect: no retries and no wait.
	c, api := newMock(t, always(503, `{"detail": "busy"}`), invoicing.WithMaxRetries(0), invoicing.WithRetryWait(0, 0))
	require.ErrorIs(t, getInvoice(c), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)
}

// ------------------------------------------------------ RequestOptions

// Every method takes RequestOptions and applies them the same way.
func TestEveryMethodTakesRequestOptions(t *testing.T) {
	api := &endpointAPI{attempts: map[string]int{}}
	c, _ := newMock(t, api.respond)
	stalling, _ := newMock(t, api.respond, invoicing.WithTimeout(300*time.Millisecond))
	ctx := context.Background()
	for _, m := range apiCalls() {
		t.Run(m.name, func(t *testing.T) {
			tag := func(s string) invoicing.RequestOption { return invoicing.WithHeader("X-Test-Call", m.name+"/"+s) }

			// Headers are sent, and the response is filled on success.
			var resp invoicing.Response
			require.NoError(t, m.call(ctx, c, tag("ok"), invoicing.WithHeader("X-Correlation-Id", "corr-7"), invoicing.WithResponseInto(&resp)))
			last := api.lastOf(t, m.name+"/ok")
			assert.Equal(t, m.verb, last.Method)
			assert.Equal(t, m.path, last.Path)
			assert.Equal(t, "corr-7", last.Header.Get("X-Correlation-Id"))
			assert.Equal(t, "Bearer "+testKey, last.Header.Get("Authorization"), "the SDK's headers are still sent")
			assert.Contains(t, []int{200, 201}, resp.StatusCode)
			assert.Equal(t, 1, resp.Attempts)
			assert.Equal(t, "req-"+m.name+"/ok-1", resp.RequestID)
			assert.NotNil(t, resp.Header)

			// WithAPIKey sends another key.
			require.NoError(t, m.call(ctx, c, tag("key"), invoicing.WithAPIKey("sk_tenant_"+strconv.Itoa(len(m.name)))))
			assert.Equal(t, "Bearer sk_tenant_"+strconv.Itoa(len(m.name)), api.lastOf(t, m.name+"/key").Header.Get("Authorization"))

			// The response is filled on failure too, and is the *Error's.
			resp = invoicing.Response{}
			err := m.call(ctx, c, tag("notfound"), invoicing.WithHeader("X-Test", "notfound"), invoicing.WithResponseInto(&resp))
			e := apiError(t, err)
			assert.Equal(t, 404, resp.StatusCode)
			assert.Equal(t, "req-"+m.name+"/notfound-1", resp.RequestID)
			assert.Equal(t, resp, e.Response)

			// What is repeated after a 503: reads, and creates only with
			// WithIdempotentRetry.
			resp = invoicing.Response{}
			err = m.call(ctx, c, tag("fail"), invoicing.WithHeader("X-Test", "fail=9"), invoicing.WithResponseInto(&resp))
			require.ErrorIs(t, err, invoicing.ErrServer)
			want := 4
			if m.create {
				want = 1
			}
			assert.Equal(t, want, api.attemptsOf(m.name+"/fail"))
			assert.Equal(t, want, resp.Attempts)
			err = m.call(ctx, c, tag("idem"), invoicing.WithHeader("X-Test", "fail=1"), invoicing.WithIdempotentRetry(), invoicing.WithResponseInto(&resp))
			require.NoError(t, err)
			assert.Equal(t, 2, api.attemptsOf(m.name+"/idem"), "WithIdempotentRetry repeats after a 503")
			assert.Equal(t, 2, resp.Attempts)

			// An invalid option fails the call before anything is sent.
			err = m.call(ctx, c, tag("bad"), invoicing.WithHeader("Authorization", "Bearer other"))
			require.ErrorIs(t, err, invoicing.ErrInvalidOption)
			assert.Zero(t, api.attemptsOf(m.name+"/bad"))
		})
	}

	// WithTimeout bounds each attempt: the stalled first one ends after it
	// and (where repeating is safe) the second succeeds. (All at once: each
	// waits out the timeout.)
	calls := apiCalls()
	resps := make([]invoicing.Response, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, m := range calls {
		wg.Go(func() {
			errs[i] = m.call(ctx, stalling, invoicing.WithHeader("X-Test-Call", m.name+"/stall"), invoicing.WithHeader("X-Test", "stall"),
				invoicing.WithResponseInto(&resps[i]))
		})
	}
	wg.Wait()
	for i, m := range calls {
		if m.create {
			if assert.ErrorIs(t, errs[i], context.DeadlineExceeded, m.name) {
				assert.Contains(t, errs[i].Error(), "per-attempt timeout", m.name)
			}
			assert.Equal(t, 1, resps[i].Attempts, m.name)
			assert.Equal(t, 0, resps[i].StatusCode, "%s: no response came", m.name)
		} else {
			assert.NoError(t, errs[i], m.name)
			assert.Equal(t, 2, resps[i].Attempts, m.name)
		}
		assert.Equal(t, resps[i].Attempts, api.attemptsOf(m.name+"/stall"), m.name)
	}
}

func TestRequestOptionsRefuseBadValuesBeforeSending(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "invoice.json")))
	ctx := context.Background()
	for name, opt := range map[string]invoicing.RequestOption{
		"authorization":             invoicing.WithHeader("authorization", "x"),
		"AUTHORIZATION":             invoicing.WithHeader("AUTHORIZATION", "x"),
		"content type":              invoicing.WithHeader("Content-Type", "text/plain"),
		"content type, lower":       invoicing.WithHeader("content-type", "text/plain"),
		"CR LF in value":            invoicing.WithHeader("X-A", "a\r\nX-Injected: 1"),
		"LF in value":               invoicing.WithHeader("X-A", "a\nb"),
		"CR in value":               invoicing.WithHeader("X-A", "a\rb"),
		"NUL in value":              invoicing.WithHeader("X-A", "a\x00b"),
		"LF in name":                invoicing.WithHeader("X-A\nB", "a"),
		"NUL in name":               invoicing.WithHeader("X-A\x00", "a"),
		"empty name":                invoicing.WithHeader("", "a"),
		"space in name":             invoicing.WithHeader("X A", "a"),
		"colon in name":             invoicing.WithHeader("X-A:", "a"),
		"non-ASCII name":            invoicing.WithHeader("X-Ä", "a"),
		"nil response":              invoicing.WithResponseInto(nil),
		"empty query name":          invoicing.WithQuery("", "x"),
		"empty key":                 invoicing.WithAPIKey(""),
		"blank key":                 invoicing.WithAPIKey(" \n"),
		"Bearer key":                invoicing.WithAPIKey("Bearer sk_x"),
		"key with a space":          invoicing.WithAPIKey("sk x"),
		"key with control char":     invoicing.WithAPIKey("sk\x7fx"),
		"key with a no-break space": invoicing.WithAPIKey("sk\u00a0x"),
	} {
		_, err := c.Invoices.Get(ctx, idInvoice, opt)
		require.ErrorIs(t, err, invoicing.ErrInvalidOption, name)
		assert.True(t, strings.HasPrefix(err.Error(), "invoicing: invalid option: "), err.Error())
		assert.ErrorIs(t, c.Do(ctx, "POST", "/x", map[string]int{"a": 1}, nil, opt), invoicing.ErrInvalidOption, name)
		assert.ErrorIs(t, svcListErr(c.Invoices.List(ctx, nil, opt)), invoicing.ErrInvalidOption, name)
		_, err = c.Invoices.PDF(ctx, idInvoice, opt)
		assert.ErrorIs(t, err, invoicing.ErrInvalidOption, name)
	}
	assert.Empty(t, api.requests())
}

func TestWithHeader(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "invoice.json")), invoicing.WithUserAgent("app/1"))
	require.NoError(t, getInvoice(c, invoicing.WithHeader("x-correlation-id", "a"), invoicing.WithHeader("X-Correlation-Id", "b"),
		invoicing.WithHeader("Idempotency-Key", "k-1"), invoicing.WithHeader("X-Empty", "")))
	h := api.last(t).Header
	assert.Equal(t, []string{"a", "b"}, h.Values("X-Correlation-Id"), "canonicalised; given twice, both sent")
	assert.Equal(t, "k-1", h.Get("Idempotency-Key"))
	assert.Equal(t, []string{""}, h.Values("X-Empty"))
	assert.Equal(t, "application/json", h.Get("Accept"))
	assert.True(t, strings.HasSuffix(h.Get("User-Agent"), " app/1"))

	// User-Agent and Accept given here replace the SDK's.
	require.NoError(t, getInvoice(c, invoicing.WithHeader("User-Agent", "mine/2"), invoicing.WithHeader("Accept", "application/json; q=1")))
	h = api.last(t).Header
	assert.Equal(t, []string{"mine/2"}, h.Values("User-Agent"))
	assert.Equal(t, []string{"application/json; q=1"}, h.Values("Accept"))

	// A call's headers are its own: the next call does not send them.
	require.NoError(t, getInvoice(c))
	h = api.last(t).Header
	assert.Empty(t, h.Get("X-Correlation-Id"))
	assert.True(t, strings.HasPrefix(h.Get("User-Agent"), "invoicing-go/"))
	assert.Equal(t, "Bearer "+testKey, h.Get("Authorization"))
}

func TestWithQuery(t *testing.T) {
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/accounts") {
			reply(w, 200, `{"accounts": [], "has_more": false}`)
			return
		}
		reply(w, 200, fixture(t, "contacts_client.json"))
	})
	ctx := context.Background()
	_, err := c.Clients.Get(ctx, idInvoice, invoicing.WithQuery("include", "addresses"), invoicing.WithQuery("include", "tags"),
		invoicing.WithQuery("page", "2"))
	require.NoError(t, err)
	assert.Equal(t, "include=addresses&include=tags&page=2", api.last(t).Query, "both values; page means nothing to a Get")

	_, err = c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}, invoicing.WithQuery("status", "active"))
	require.NoError(t, err)
	assert.Equal(t, "status=active&type=revenue", api.last(t).Query)

	sent := len(api.requests())
	var pe *invoicing.ParamError
	_, err = c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}, invoicing.WithQuery("type", "expense"))
	require.ErrorAs(t, err, &pe, "a typed filter is not set twice")
	assert.Equal(t, "type", pe.Field)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	for _, name := range []string{"page", "page_size"} {
		_, err = c.Accounts.ListPage(ctx, nil, invoicing.WithQuery(name, "5"))
		require.ErrorAs(t, err, &pe, "%s belongs to ListParams", name)
		assert.Equal(t, name, pe.Field)
		err = svcListErr(c.Accounts.List(ctx, nil, invoicing.WithQuery(name, "5")))
		require.ErrorAs(t, err, &pe, "List: %s", name)
	}
	assert.Len(t, api.requests(), sent, "nothing sent")
}

func TestWithAPIKey(t *testing.T) {
	const tenant = "sk_tenant_a_0123456789"
	c, api := newMock(t, always(200, fixture(t, "invoice.json")))
	require.NoError(t, getInvoice(c, invoicing.WithAPIKey("  "+tenant+"\n")))
	assert.Equal(t, "Bearer "+tenant, api.last(t).Header.Get("Authorization"), "trimmed, sent in place of the Client's")
	require.NoError(t, getInvoice(c))
	assert.Equal(t, "Bearer "+testKey, api.last(t).Header.Get("Authorization"), "the Client's key otherwise")

	// A bad key is an invalid option, and the key is never shown.
	for _, bad := range []string{"Bearer " + tenant, "bearer " + tenant, tenant + " x", tenant + "\x00", ""} {
		err := getInvoice(c, invoicing.WithAPIKey(bad))
		require.ErrorIs(t, err, invoicing.ErrInvalidOption, "%q", bad)
		assert.True(t, strings.HasPrefix(err.Error(), "invoicing: invalid option: WithAPIKey: "), err.Error())
		assert.NotContains(t, err.Error(), tenant)
	}
	opt := invoicing.WithAPIKey(tenant)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T", "%p"} {
		assert.NotContains(t, fmt.Sprintf(verb, opt), tenant, verb)
	}
	var lopt invoicing.ListOption = opt
	assert.NotContains(t, fmt.Sprintf("%#v", lopt), tenant)
}

func TestWithResponseInto(t *testing.T) {
	ctx := context.Background()
	c, _ := newMock(t, sequence(
		always(503, `{"detail": "busy"}`),
		always(200, fixture(t, "invoice.json"), "X-Request-Id", "req-2"),
	))
	var resp invoicing.Response
	require.NoError(t, getInvoice(c, invoicing.WithResponseInto(&resp)))
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "req-2", resp.RequestID)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, 2, resp.Attempts)
	assert.Positive(t, resp.Duration)

	// On failure it is the *Error's Response.
	c, _ = newMock(t, always(409, `{"detail": "Invoice number exists"}`, "X-Request-Id", "req-409"))
	_, err := c.Invoices.Create(ctx, svcValidInvoice(), invoicing.WithResponseInto(&resp))
	e := apiError(t, err)
	assert.Equal(t, e.Response, resp)
	assert.Equal(t, 409, resp.StatusCode)
	assert.Equal(t, "req-409", resp.RequestID)

	// On a network failure: attempts, but no status and no header.
	c, _ = newMock(t, func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") },
		invoicing.WithMaxRetries(2))
	resp = invoicing.Response{StatusCode: 1, Header: http.Header{"X": nil}}
	require.Error(t, getInvoice(c, invoicing.WithResponseInto(&resp)))
	assert.Equal(t, 0, resp.StatusCode)
	assert.Nil(t, resp.Header)
	assert.Equal(t, 3, resp.Attempts, "1 try + 2 retries, all failed")

	// For List it holds the response of the last page fetched.
	c, _ = newMock(t, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		more := page == "1"
		reply(w, 200, `{"invoices": [{"id": "00000000-0000-4000-8000-00000000000`+page+`"}], "total": 2, "page": `+page+
			`, "page_size": 1, "has_more": `+strconv.FormatBool(more)+`}`, "X-Request-Id", "page-"+page)
	})
	n := 0
	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 1}}, invoicing.WithResponseInto(&resp)) {
		require.NoError(t, err)
		n++
		assert.Equal(t, "page-"+strconv.Itoa(n), resp.RequestID, "filled with each page, before its records")
		assert.NotEmpty(t, inv.ID)
	}
	assert.Equal(t, 2, n)
	assert.Equal(t, "page-2", resp.RequestID)
}

func TestWithPrefetchBounds(t *testing.T) {
	c, api := newMock(t, always(200, `{"invoices": [], "total": 0, "has_more": false}`))
	ctx := context.Background()
	for _, n := range []int{0, -1, invoicing.MaxPrefetch + 1} {
		err := svcListErr(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(n)))
		require.ErrorIs(t, err, invoicing.ErrInvalidOption, n)
		assert.EqualError(t, err, fmt.Sprintf("invoicing: invalid option: prefetch %d is outside 1..%d", n, invoicing.MaxPrefetch))
	}
	assert.Empty(t, api.requests())
	for _, n := range []int{1, invoicing.MaxPrefetch} {
		require.NoError(t, svcListErr(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(n), invoicing.WithHeader("X-A", "b"))), n)
	}
	assert.Len(t, api.requests(), 2)
	assert.Equal(t, "b", api.last(t).Header.Get("X-A"), "RequestOptions are ListOptions")
}

// WithPrefetch means nothing to a call that fetches one response, so only
// List takes it: elsewhere it does not compile. This type-checks small
// programs against the package's export data (from `go list -export`,
// cached by the go command): type-checking net/http and the rest from
// source takes 3 s, 10 s under -race.
func TestWithPrefetchCompilesOnlyForList(t *testing.T) {
	t.Parallel() // runs the go command
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "this test needs the go command on PATH")
	const pkg = "github.com/invoicing-api/invoicing-go"
	out, err := exec.Command(goCmd, "list", "-export", "-f", "{{.ImportPath}}\t{{.Export}}", "context", pkg).Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("go list: %v\n%s", err, exitErr.Stderr)
	}
	require.NoError(t, err)
	exports := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		exports[path] = file
	}
	require.NotEmpty(t, exports[pkg])
	typeErrors := func(stmt string) []string {
		src := "package p\n\nimport (\n\t\"context\"\n\n\t\"" + pkg + "\"\n)\n\nfunc f(ctx context.Context, c *invoicing.Client) {\n\t" + stmt + "\n}\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", src, 0)
		require.NoError(t, err)
		imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			if exports[path] == "" {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(exports[path])
		})
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err.Error()) }}
		_, _ = conf.Check("p", fset, []*ast.File{f}, nil)
		return errs
	}
	for _, ok := range []string{
		`c.Invoices.List(ctx, nil, invoicing.WithPrefetch(2), invoicing.WithHeader("a", "b"))`,
		`c.Quotes.List(ctx, nil, invoicing.WithPrefetch(invoicing.MaxPrefetch), invoicing.WithResponseInto(nil), invoicing.WithIdempotentRetry())`,
		`c.Invoices.Get(ctx, "id", invoicing.WithHeader("a", "b"), invoicing.WithQuery("a", "b"), invoicing.WithAPIKey("k"))`,
	} {
		assert.Empty(t, typeErrors(ok), ok)
	}
	for _, bad := range []string{
		`c.Invoices.Get(ctx, "id", invoicing.WithPrefetch(2))`,
		`c.Invoices.ListPage(ctx, nil, invoicing.WithPrefetch(2))`,
		`c.Invoices.PDF(ctx, "id", invoicing.WithPrefetch(2))`,
		`c.Do(ctx, "GET", "/invoices", nil, nil, invoicing.WithPrefetch(2))`,
		`c.Items.Create(ctx, nil, invoicing.WithPrefetch(2))`,
	} {
		errs := typeErrors(bad)
		if assert.Len(t, errs, 1, bad) {
			assert.Contains(t, errs[0], "cannot use invoicing.WithPrefetch(2) (value of interface type invoicing.ListOption) as invoicing.RequestOption value", bad)
		}
	}
}
