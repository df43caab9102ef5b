package invoicing_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
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

// The deadline covers the JSON body as well as the headers: a body that
// stalls is a network error, repeated for a GET and not for a POST.
func TestStalledJSONBodyEndsTheAttempt(t *testing.T) {
	ctx := context.Background()
	stall := stallAfter(200, "application/json", `{"id": "`)
	invoice := httpmock.NewStringResponder(200, fixture(t, "invoice.json"))

	c, api := newMock(t, responders(stall, invoice), invoicing.WithTimeout(100*time.Millisecond))
	inv, err := c.Invoices.Get(ctx, idInvoice)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	assert.Equal(t, 2, len(api.requests()))

	c, api = newMock(t, stall, invoicing.WithTimeout(100*time.Millisecond), invoicing.WithMaxRetries(1))
	err = getInvoice(c)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "invoicing: reading GET /invoices/"+idInvoice+" response: no complete response within 100ms")
	assert.Equal(t, 2, len(api.requests()))

	c, api = newMock(t, responders(stall, invoice), invoicing.WithTimeout(100*time.Millisecond))
	_, err = c.Invoices.Create(ctx, svcValidInvoice())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, len(api.requests()), "a POST is not repeated")
}

func TestDrippingBodyEndsAtTheAttemptDeadline(t *testing.T) {
	drip := func(r *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(200, "")
		resp.Body = dripBody{r.Context()}
		return resp, nil
	}
	c, api := newMock(t, drip, invoicing.WithTimeout(200*time.Millisecond), invoicing.WithMaxRetries(1))
	start := time.Now()
	err := getInvoice(c)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the deadline covers the whole body, not each byte")
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, 2, len(api.requests()))
}

func TestResponseOverTheCapIsNotRetried(t *testing.T) {
	big := `{"invoice_number": "` + strings.Repeat("9", 4096) + `"}`
	for name, header := range map[string][]string{
		"with Content-Length":    {"Content-Length", strconv.Itoa(len(big))},
		"without Content-Length": nil,
	} {
		t.Run(name, func(t *testing.T) {
			c, api := newMock(t, always(200, big, header...), invoicing.WithMaxResponseBytes(1024))
			err := getInvoice(c)
			require.ErrorIs(t, err, invoicing.ErrResponseTooLarge)
			assert.Contains(t, err.Error(), "invoicing: reading GET /invoices/"+idInvoice+" response")
			assert.Len(t, api.requests(), 1, "never retried, even for a GET")
		})
	}
	// The cap is inclusive.
	exact := `"` + strings.Repeat("x", 1022) + `"`
	c, _ := newMock(t, always(200, exact), invoicing.WithMaxResponseBytes(1024))
	var raw []byte
	require.NoError(t, c.Do(context.Background(), "GET", "/x", nil, &raw))
	assert.Equal(t, exact, string(raw))
	c, _ = newMock(t, always(200, exact+" "), invoicing.WithMaxResponseBytes(1024))
	require.ErrorIs(t, c.Do(context.Background(), "GET", "/x", nil, &raw), invoicing.ErrResponseTooLarge)
}

// A Content-Length is a hint, not a promise: a 32 MiB claim allocates no
// 32 MiB.
func TestContentLengthIsOnlyAHint(t *testing.T) {
	c, _ := newMock(t, func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(200, fixture(t, "item.json"))
		resp.ContentLength = 32 << 20 // claimed, not sent
		return resp, nil
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Items.Get(context.Background(), idItem)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20))
}

func TestLoggingShowsRoutesNeverKeysNorIDs(t *testing.T) {
	const tenant = "sk_tenant_secret_55555"
	logs := &logRecorder{}
	c, _ := newMock(t, sequence(always(429, `{"detail": "x"}`), always(503, `{"detail": "down"}`), always(401, `{"detail": "Invalid API key"}`)),
		logs.logger())
	err := getInvoice(c)
	require.ErrorIs(t, err, invoicing.ErrUnauthorized)
	require.ErrorIs(t, c.Do(context.Background(), "GET", "/x", nil, nil, invoicing.WithAPIKey(tenant)), invoicing.ErrUnauthorized)
	out := logs.text()
	assert.Contains(t, out, `DEBUG "invoicing: attempt" route="GET /invoices/{id}" attempt="1" status="429"`)
	assert.Contains(t, out, `INFO "invoicing: retrying" route="GET /invoices/{id}" retry="1" status="429" wait=`)
	assert.Contains(t, out, `INFO "invoicing: retrying" route="GET /invoices/{id}" retry="2" status="503" wait=`)
	assert.Contains(t, out, `DEBUG "invoicing: call" route="GET /invoices/{id}" attempts="3" status="401" took=`)
	assert.Contains(t, out, `DEBUG "invoicing: call" route="GET /x" attempts="1" status="401" took=`)
	assert.NotContains(t, out, idInvoice)
	assert.NotContains(t, out, testKey)
	assert.NotContains(t, out, tenant)
	assert.NotContains(t, out, "Bearer")
	assert.NotContains(t, err.Error(), testKey)

	// A transport failure is logged with its error, still without the key.
	logs = &logRecorder{}
	c, _ = newMock(t, httpmock.NewErrorResponder(errors.New("dial tcp: connection refused")), logs.logger(), invoicing.WithMaxRetries(1))
	err = getInvoice(c)
	require.ErrorContains(t, err, "connection refused")
	assert.Contains(t, logs.text(), `error="Get \"`+testURL+`/invoices/`)
	assert.NotContains(t, err.Error(), testKey)
	assert.NotContains(t, logs.text(), testKey)
}

func TestRedirects(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int32
	target := prefix + "/items/" + idItem
	h := func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch strings.TrimPrefix(r.URL.Path, prefix) {
		case "/to-http":
			http.Redirect(w, r, "http://api.invoicing.test"+target, http.StatusFound)
		case "/to-other-http":
			http.Redirect(w, r, "http://10.0.0.5"+target, http.StatusMovedPermanently)
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:9"+target, http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, target, http.StatusFound)
		case "/loop":
			http.Redirect(w, r, prefix+"/loop", http.StatusFound)
		default:
			reply(w, 200, fixture(t, "item.json"))
		}
	}
	var policy atomic.Int32
	callers := func(rt http.RoundTripper) *http.Client {
		return &http.Client{Transport: rt, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			policy.Add(1)
			if len(via) >= 3 {
				return errors.New("my policy: 3 redirects at most")
			}
			return nil
		}}
	}
	plain := plainHTTPClient

	t.Run("https to plain http is refused", func(t *testing.T) {
		for _, path := range []string{"/to-http", "/to-other-http"} {
			for name, shape := range map[string]func(http.RoundTripper) *http.Client{"plain": plain, "caller's policy": callers} {
				hits.Store(0)
				policy.Store(0)
				c, _ := newMock(t, &mockAPI{handler: h, shape: shape})
				err := c.Do(ctx, "GET", path, nil, nil)
				require.Error(t, err)
				assert.Equal(t, "invoicing: GET "+path+": refusing to follow a redirect to plain http (the API key would travel in clear text)", err.Error(), name)
				assert.NotContains(t, err.Error(), testKey)
				assert.EqualValues(t, 1, hits.Load(), "not followed, not retried (%s)", name)
				assert.Zero(t, policy.Load(), "the SDK's rule runs first (%s)", name)
			}
		}
	})
	t.Run("unless WithInsecureHTTP", func(t *testing.T) {
		c, api := newMock(t, &mockAPI{handler: h, shape: plain}, invoicing.WithInsecureHTTP())
		require.NoError(t, c.Do(ctx, "GET", "/to-http", nil, nil))
		assert.Equal(t, "/items/"+idItem, api.last(t).Path)
	})
	t.Run("plain http to loopback is allowed", func(t *testing.T) {
		c, api := newMock(t, &mockAPI{handler: h, shape: plain})
		require.NoError(t, c.Do(ctx, "GET", "/to-loopback", nil, nil))
		assert.Equal(t, "/items/"+idItem, api.last(t).Path)
	})
	t.Run("caller's policy runs after the SDK's", func(t *testing.T) {
		policy.Store(0)
		c, _ := newMock(t, &mockAPI{handler: h, shape: callers})
		it := map[string]any{}
		require.NoError(t, c.Do(ctx, "GET", "/moved", nil, &it))
		assert.Equal(t, "WIDGET-01", it["item_code"])
		assert.EqualValues(t, 1, policy.Load())
		hits.Store(0)
		err := c.Do(ctx, "GET", "/loop", nil, nil)
		require.ErrorContains(t, err, "my policy: 3 redirects at most", "the caller's policy, not net/http's limit")
		assert.Equal(t, "invoicing: GET /loop: my policy: 3 redirects at most", err.Error())
		assert.EqualValues(t, 3, hits.Load(), "a refused redirect is not retried")
	})
	t.Run("at most 10 redirects", func(t *testing.T) {
		hits.Store(0)
		c, _ := newMock(t, &mockAPI{handler: h, shape: plain})
		err := c.Do(ctx, "GET", "/loop", nil, nil)
		assert.Equal(t, "invoicing: GET /loop: stopped after 10 redirects", err.Error())
		assert.EqualValues(t, 10, hits.Load(), "the first request and 9 redirects, the 10th refused; not retried")
	})
	t.Run("the caller's policy may return the redirect", func(t *testing.T) {
		c, _ := newMock(t, &mockAPI{handler: h, shape: func(rt http.RoundTripper) *http.Client {
			return &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}})
		err := c.Do(ctx, "GET", "/moved", nil, nil)
		e := apiError(t, err)
		assert.Equal(t, http.StatusFound, e.StatusCode, "a 3xx the caller keeps is an *Error")
		assert.Equal(t, target, e.Header.Get("Location"))
	})
}

// The caller's http.Client is used as given and left as it was.
func TestCallersHTTPClientIsNotModified(t *testing.T) {
	var policyCalls atomic.Int32
	check := func(*http.Request, []*http.Request) error { policyCalls.Add(1); return nil }
	var mine *http.Client
	c, api := newMock(t, &mockAPI{handler: always(200, fixture(t, "item.json")), shape: func(rt http.RoundTripper) *http.Client {
		mine = &http.Client{Transport: rt, Timeout: 30 * time.Second, CheckRedirect: check}
		return mine
	}})
	_, err := c.Items.Get(context.Background(), idItem)
	require.NoError(t, err)
	assert.Len(t, api.requests(), 1, "its transport sent the request")
	assert.Same(t, api.transport(), mine.Transport.(*httpmock.MockTransport))
	assert.Equal(t, 30*time.Second, mine.Timeout)
	require.NoError(t, mine.CheckRedirect(nil, nil))
	assert.EqualValues(t, 1, policyCalls.Load(), "its own policy, unwrapped")
}

func TestTypedErrorsThroughEveryHTTPClientShape(t *testing.T) {
	ctx := context.Background()
	createItem := func(c *invoicing.Client) error { _, err := c.Items.Create(ctx, svcValidItem()); return err }
	cases := []struct {
		name     string
		status   int
		body     string
		header   []string
		call     func(*invoicing.Client) error
		is       []error
		detail   string
		problems int
		retry    time.Duration
	}{
		{name: "400", status: 400, body: `{"detail":"page must be >= 1"}`, is: []error{invoicing.ErrBadRequest}, detail: "page must be >= 1"},
		{name: "401", status: 401, body: `{"detail":"Invalid API key"}`, is: []error{invoicing.ErrUnauthorized}, detail: "Invalid API key"},
		{name: "403", status: 403, body: `{"detail":"Missing scope invoices:read"}`, is: []error{invoicing.ErrForbidden}, detail: "Missing scope invoices:read"},
		{name: "404", status: 404, body: `{"detail":"Invoice not found"}`, is: []error{invoicing.ErrNotFound}, detail: "Invoice not found"},
		{name: "409 item code", status: 409, body: `{"detail":"Item code already exists"}`, call: createItem,
			is: []error{invoicing.ErrConflict, invoicing.ErrItemCodeExists}, detail: "Item code already exists"},
		{name: "422 unit price", status: 422, body: `{"detail":"unit_price is required for SALES and PURCHASE items"}`, call: createItem,
			is: []error{invoicing.ErrValidation, invoicing.ErrUnitPriceRequired}, detail: "unit_price is required for SALES and PURCHASE items"},
		{name: "422 item type", status: 422, body: `{"detail":"item_type must be one of: SALES, PURCHASE, TEXT"}`, call: createItem,
			is: []error{invoicing.ErrValidation, invoicing.ErrInvalidItemType}, detail: "item_type must be one of: SALES, PURCHASE, TEXT"},
		{name: "422 problems", status: 422, body: fixture(t, "error_422_array.json"),
			is: []error{invoicing.ErrValidation}, detail: "line_items.0.unit_price: field required; client_id: field required", problems: 2},
		{name: "429 beyond the maximum wait", status: 429, body: `{"detail":"Too many requests"}`, header: []string{"Retry-After", "3600"},
			is: []error{invoicing.ErrRateLimited}, detail: "Too many requests", retry: time.Hour},
		{name: "500", status: 500, body: `{"detail":"database unavailable"}`, is: []error{invoicing.ErrServer}, detail: "database unavailable"},
		{name: "502 HTML", status: 502, body: fixture(t, "error_502.html"), is: []error{invoicing.ErrServer}, detail: "Bad Gateway"},
	}
	for _, shape := range shapeNames(t) {
		for _, tc := range cases {
			t.Run(shape+"/"+tc.name, func(t *testing.T) {
				c, _ := newShapedClient(t, shape, always(tc.status, tc.body, tc.header...), invoicing.WithMaxRetries(0))
				call := tc.call
				if call == nil {
					call = func(c *invoicing.Client) error { return getInvoice(c) }
				}
				err := call(c)
				e := apiError(t, err)
				assert.Equal(t, tc.status, e.StatusCode)
				assert.Equal(t, tc.detail, e.Detail)
				assert.Equal(t, tc.body, string(e.Body))
				assert.Len(t, e.Problems, tc.problems)
				assert.Equal(t, tc.retry, e.RetryAfter)
				for _, s := range tc.is {
					assert.ErrorIs(t, err, s)
				}
			})
		}
	}
}

// A record decodes the same through every http.Client shape, and so does
// an error after a retry (the last response's body is the one kept), and
// an error body a middleware replaced.
func TestSuccessAndRetriedErrorThroughEveryHTTPClientShape(t *testing.T) {
	rewrite := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err == nil && resp.StatusCode == 404 {
			resp.Body.Close()
			resp.Body = io.NopCloser(strings.NewReader(`{"detail":"rewritten by middleware"}`))
		}
		return resp, err
	}
	for _, shape := range shapeNames(t) {
		t.Run(shape, func(t *testing.T) {
			c, api := newShapedClient(t, shape, sequence(
				always(200, fixture(t, "invoice.json")),
				always(503, `{"detail":"try later"}`),
				always(500, `{"detail":"still down"}`),
				always(404, `{"detail":"Invoice not found"}`),
			), invoicing.WithMaxRetries(1), invoicing.WithMiddleware(rewrite))
			inv, err := c.Invoices.Get(context.Background(), idInvoice)
			require.NoError(t, err)
			assert.Equal(t, "INV-0042", inv.InvoiceNumber)
			assert.Equal(t, "1357.95", inv.Total.String())

			err = getInvoice(c)
			e := apiError(t, err)
			assert.Equal(t, 500, e.StatusCode)
			assert.Equal(t, "still down", e.Detail)
			assert.Equal(t, `{"detail":"still down"}`, string(e.Body))
			assert.Equal(t, 2, e.Attempts)
			assert.Len(t, api.requests(), 3)

			err = getInvoice(c)
			require.ErrorIs(t, err, invoicing.ErrNotFound)
			assert.Equal(t, "rewritten by middleware", apiError(t, err).Detail)
		})
	}
}

// Response bodies are read into pooled buffers: no call may see another's
// data, nor a record keep bytes a later call overwrites. Run under -race.
func TestConcurrentCallsKeepTheirOwnBodies(t *testing.T) {
	body := func(n int) string {
		pad := strings.Repeat(strconv.Itoa(n%10), (n*397)%9000) // sizes vary, so buffers are reused across sizes
		return `{"id": "` + idInvoice + `", "invoice_number": "INV-` + strconv.Itoa(n) + `", "notes": "` + pad +
			`", "total": ` + strconv.Itoa(n) + `.25, "custom_` + strconv.Itoa(n) + `": {"seq": ` + strconv.Itoa(n) + `}}`
	}
	c, _ := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.Header.Get("X-Seq"))
		assert.NoError(t, err)
		if n%5 == 0 {
			reply(w, 404, `{"detail": "missing `+strconv.Itoa(n)+`", "pad": "`+strings.Repeat("p", n*31)+`"}`)
			return
		}
		reply(w, 200, body(n))
	})
	type result struct {
		inv *invoicing.Invoice
		raw []byte
		msg json.RawMessage
		err error
	}
	const workers, each = 8, 40
	results := make([]result, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				n := w*each + i
				seq := invoicing.WithHeader("X-Seq", strconv.Itoa(n))
				r := &results[n]
				switch n % 3 {
				case 0:
					r.inv, r.err = c.Invoices.Get(context.Background(), idInvoice, seq)
				case 1:
					r.err = c.Do(context.Background(), "GET", "/invoices/"+idInvoice, nil, &r.raw, seq)
				case 2:
					r.err = c.Do(context.Background(), "GET", "/invoices/"+idInvoice, nil, &r.msg, seq)
				}
			}
		})
	}
	wg.Wait()
	for n, r := range results {
		seq := strconv.Itoa(n)
		if n%5 == 0 {
			e := apiError(t, r.err)
			assert.Equal(t, "missing "+seq, e.Detail)
			assert.Equal(t, `{"detail": "missing `+seq+`", "pad": "`+strings.Repeat("p", n*31)+`"}`, string(e.Body))
			continue
		}
		require.NoError(t, r.err, n)
		switch n % 3 {
		case 0:
			assert.Equal(t, "INV-"+seq, r.inv.InvoiceNumber)
			assert.Equal(t, seq+".25", r.inv.Total.String())
			assert.Len(t, r.inv.Notes, (n*397)%9000)
			assert.JSONEq(t, body(n), string(rawJSON(t, r.inv)), "the record and its Extra are its own")
		case 1:
			assert.Equal(t, body(n), string(r.raw))
		case 2:
			assert.Equal(t, body(n), string(r.msg))
		}
	}
}
