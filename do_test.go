package invoicing_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestDoSendsThroughTheAttemptLoop(t *testing.T) {
	const body = `{"id": "cn-1", "total": 12.50}`
	c, api := newMock(t, always(200, body, "X-Request-Id", "r-1"))
	ctx := context.Background()
	var out struct {
		ID    string          `json:"id"`
		Total decimal.Decimal `json:"total"`
	}
	var resp invoicing.Response
	err := c.Do(ctx, "POST", "/credit-notes?draft=true", json.RawMessage(`{"amount": 12.50}`), &out,
		invoicing.WithQuery("notify", "no"), invoicing.WithResponseInto(&resp), invoicing.WithHeader("X-A", "b"))
	require.NoError(t, err)
	assert.Equal(t, "cn-1", out.ID)
	assert.Equal(t, "12.50", out.Total.StringFixed(2))
	r := api.last(t)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/credit-notes", r.Path)
	assert.Equal(t, "draft=true&notify=no", r.Query)
	assert.Equal(t, `{"amount":12.50}`, string(r.Body), "exact, compacted as encoding/json does")
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, "application/json", r.Header.Get("Accept"))
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	assert.Equal(t, "b", r.Header.Get("X-A"))
	assert.Equal(t, "r-1", resp.RequestID)
	assert.Equal(t, 200, resp.StatusCode)

	// *json.RawMessage and *[]byte receive the raw bytes.
	var raw json.RawMessage
	require.NoError(t, c.Do(ctx, "GET", "/credit-notes/cn-1", nil, &raw))
	assert.Equal(t, body, string(raw))
	var b []byte
	require.NoError(t, c.Do(ctx, "GET", "/credit-notes/cn-1", nil, &b))
	assert.Equal(t, body, string(b))
	r = api.last(t)
	assert.Empty(t, r.Body)
	assert.Empty(t, r.Header.Get("Content-Type"), "no body, no Content-Type")

	// A nil out ignores the body; HEAD and a 204 have none.
	require.NoError(t, c.Do(ctx, "GET", "/credit-notes/cn-1", nil, nil))
	require.NoError(t, c.Do(ctx, "HEAD", "/credit-notes/cn-1", nil, nil))
	assert.Equal(t, "HEAD", api.last(t).Method)
	c, _ = newMock(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	require.NoError(t, c.Do(ctx, "DELETE", "/credit-notes/cn-1", nil, nil))
}

func TestDoPathMustStayUnderTheBaseURL(t *testing.T) {
	c, api := newMock(t, always(200, `{}`))
	ctx := context.Background()
	for _, p := range []string{"", "invoices", "https://evil.example/x", "//evil.example/x", "/a/../../b", "/a/..", "/..",
		"/a/./b", "/.", "/%2e%2e/x", "/a/%2E/b", "/a%2F..%2Fb", "/a//b", "/a/", "/a#frag", "/a#", "/%zz", "/a?x=%zz",
		"mailto:x", "http:/x", "https://user@evil.example/x"} {
		err := c.Do(ctx, "GET", p, nil, nil)
		var pe *invoicing.ParamError
		if assert.ErrorAs(t, err, &pe, "path %q", p) {
			assert.Equal(t, "path", pe.Field)
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		}
	}
	assert.Empty(t, api.requests())
}

func TestDoPathIsSentEscapedAsGiven(t *testing.T) {
	var mu sync.Mutex
	var got []string
	c, _ := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, strings.TrimPrefix(r.URL.EscapedPath(), prefix)+"?"+r.URL.RawQuery)
		mu.Unlock()
		reply(w, 200, `{}`)
	})
	ctx := context.Background()
	for _, p := range []string{"/a%2Fb/c%20d", "/c d", "/invoices?status=paid&status=sent", "/x?", "/caf%C3%A9"} {
		require.NoError(t, c.Do(ctx, "GET", p, nil, nil), p)
	}
	assert.Equal(t, []string{"/a%2Fb/c%20d?", "/c%20d?", "/invoices?status=paid&status=sent", "/x?", "/caf%C3%A9?"}, got)

	// The path's query and WithQuery add up, but never set one name twice.
	err := c.Do(ctx, "GET", "/invoices?status=paid", nil, nil, invoicing.WithQuery("status", "sent"))
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "status", pe.Field)
	require.NoError(t, c.Do(ctx, "GET", "/invoices?page=2", nil, nil, invoicing.WithQuery("page_size", "5")))
	assert.Equal(t, "/invoices?page=2&page_size=5", got[len(got)-1], "page means nothing special to Do")
}

func TestDoMethods(t *testing.T) {
	c, api := newMock(t, always(200, `{}`))
	ctx := context.Background()
	for _, m := range []string{"", "GET /x", "G\nET", "GE(T", "GÉT"} {
		err := c.Do(ctx, m, "/x", nil, nil)
		var pe *invoicing.ParamError
		if assert.ErrorAs(t, err, &pe, "method %q", m) {
			assert.Equal(t, "method", pe.Field)
		}
	}
	assert.Empty(t, api.requests())
	for _, m := range []string{"PUT", "PATCH", "DELETE", "OPTIONS", "REPORT"} {
		require.NoError(t, c.Do(ctx, m, "/x", map[string]int{"a": 1}, nil), m)
		assert.Equal(t, m, api.last(t).Method)
		assert.Equal(t, `{"a":1}`, string(api.last(t).Body))
	}
}

// The body is encoded as encoding/json encodes it, except that a
// decimal.Decimal anywhere in it is an exact JSON number.
func TestDoEncodesTheBodyAsEncodingJSON(t *testing.T) {
	type address struct {
		City     string `json:"city"`
		Postcode string `json:"postcode,omitempty"`
	}
	type Embedded struct{ Source string }
	type note struct {
		Embedded
		Name     string // untagged: its Go name
		Internal string `json:"-"`
		Empty    string `json:"empty,omitempty"`
		Address  address
		HTML     string            `json:"html"`
		When     time.Time         `json:"when"`
		Raw      json.RawMessage   `json:"raw"`
		Bytes    []byte            `json:"bytes"`
		Tags     map[string]string `json:"tags"`
		Nil      *int              `json:"nil"`
		Float    float64           `json:"float"`
	}
	v := note{
		Embedded: Embedded{"erp"}, Name: "Acme", Internal: "secret", Address: address{City: "Sydney"},
		HTML: "<b>&</b>", When: time.Date(2026, 11, 1, 9, 30, 0, 5, time.FixedZone("", 11*3600)),
		Raw: json.RawMessage(`{ "kept" : [1, 2] }`), Bytes: []byte("hi"), Tags: map[string]string{"z": "1", "a": "2"},
		Float: 0.1,
	}
	want, err := json.Marshal(v)
	require.NoError(t, err)
	c, api := newMock(t, always(200, `{}`))
	require.NoError(t, c.Do(context.Background(), "POST", "/notes", v, nil))
	assert.Equal(t, string(want), string(api.last(t).Body), "byte for byte what encoding/json writes")
	assert.NotContains(t, string(api.last(t).Body), "secret")

	// Money is an exact number, at any depth; encoding/json would write a string.
	type payment struct {
		Amount decimal.Decimal            `json:"amount"`
		Fee    *decimal.Decimal           `json:"fee"`
		Lines  []map[string]any           `json:"lines"`
		ByCode map[string]decimal.Decimal `json:"by_code"`
	}
	p := payment{
		Amount: svcDec("12.50"), Fee: invoicing.Ptr(svcDec("0.10")),
		Lines:  []map[string]any{{"price": svcDec("100.000"), "qty": svcDec("1e3")}},
		ByCode: map[string]decimal.Decimal{"GST": svcDec("-1.5")},
	}
	require.NoError(t, c.Do(context.Background(), "POST", "/payments", p, nil))
	assert.Equal(t, `{"amount":12.50,"fee":0.10,"lines":[{"price":100.000,"qty":1000}],"by_code":{"GST":-1.5}}`, string(api.last(t).Body))

	// The SDK's own params encode as the SDK sends them.
	require.NoError(t, c.Do(context.Background(), "POST", "/invoices", svcValidInvoice(), nil))
	viaDo := api.last(t).Body
	_, err = c.Invoices.Create(context.Background(), svcValidInvoice())
	require.NoError(t, err)
	assert.Equal(t, string(api.last(t).Body), string(viaDo))

	// What cannot be encoded fails before anything is sent.
	sent := len(api.requests())
	err = c.Do(context.Background(), "POST", "/x", map[string]any{"c": make(chan int)}, nil)
	require.ErrorContains(t, err, "invoicing: encoding POST /x request: ")
	assert.Len(t, api.requests(), sent)
}

// customer is a caller's type, as users write them: some fields tagged,
// one not.
type customer struct {
	ID      string `json:"id"`
	Name    string // untagged: matched by its Go name, case-insensitively
	Email   string `json:"email"`
	Tags    []string
	Address struct{ City string } `json:"address"`
	Meta    map[string]any        `json:"meta"`
	Count   int                   `json:"count"`
	Skip    string                `json:"-"`
	Ptr     *int                  `json:"ptr"`
}

// out is decoded as encoding/json decodes it. (A reported bug: the untagged
// field Name stayed empty given {"name": "Acme"}.)
func TestDoDecodesIntoYourTypesAsEncodingJSON(t *testing.T) {
	const body = `{"ID": "c-1", "name": "Acme", "EMAIL": "a@acme.test", "tags": ["x", "y"], "Address": {"city": "Sydney"},
		"meta": {"n": 1.5, "list": [1, "a", null], "ok": true}, "count": 3, "Skip": "no", "ptr": 7, "unknown": {"a": [1]}}`
	c, _ := newMock(t, always(200, body))
	var got customer
	require.NoError(t, c.Do(context.Background(), "GET", "/customers/c-1", nil, &got))
	assert.Equal(t, "Acme", got.Name, "the untagged field gets its member")
	assert.Equal(t, "c-1", got.ID)
	assert.Equal(t, "a@acme.test", got.Email)
	assert.Equal(t, "Sydney", got.Address.City)
	assert.Empty(t, got.Skip)

	var want customer
	require.NoError(t, json.Unmarshal([]byte(body), &want))
	assert.Equal(t, want, got, "field for field what encoding/json decodes")

	// Money decodes exactly, from a number or a numeric string.
	var money struct {
		Total decimal.Decimal            `json:"total"`
		Due   decimal.Decimal            `json:"due"`
		Lines map[string]decimal.Decimal `json:"lines"`
	}
	c, _ = newMock(t, always(200, `{"total": 1357.95, "due": "0.10", "lines": {"a": 0.1000000000000000055511151231257827}}`))
	require.NoError(t, c.Do(context.Background(), "GET", "/x", nil, &money))
	assert.Equal(t, "1357.95", money.Total.String())
	assert.Equal(t, "0.1", money.Due.String())
	assert.Equal(t, "0.1000000000000000055511151231257827", money.Lines["a"].String())
}

// encoding/json.Number is a number both ways, as encoding/json has it.
func TestDoJSONNumberAsEncodingJSON(t *testing.T) {
	type amount struct {
		N json.Number `json:"n"`
	}
	want, err := json.Marshal(amount{"12.50"})
	require.NoError(t, err)
	require.Equal(t, `{"n":12.50}`, string(want))
	c, api := newMock(t, always(200, `{"n": 12.50}`))
	var got amount
	require.NoError(t, c.Do(context.Background(), "POST", "/x", amount{"12.50"}, &got))
	assert.Equal(t, string(want), string(api.last(t).Body))
	assert.Equal(t, json.Number("12.50"), got.N)
}

// A body that cannot be what out is for (null, or a value of another kind,
// where out wants an object or an array) fails the call, saying what came
// back; outs that take any value (a pointer, an interface, raw JSON, a
// type that decodes itself) take it as encoding/json does.
func TestDoResultMustFitItsKind(t *testing.T) {
	call := func(body string, out any) error {
		c, _ := newMock(t, always(200, body))
		return c.Do(context.Background(), "GET", "/x", nil, out)
	}
	for _, tc := range []struct {
		body string
		out  any
		want string
	}{
		{`null`, new(customer), "want a JSON object, got null"},
		{`[{"id": "c-1"}]`, new(customer), `want a JSON object, got an array: [{"id":"c-1"}]`},
		{`"c-1"`, new(map[string]any), `want a JSON object, got a string: "c-1"`},
		{`null`, new(invoicing.Invoice), "want a JSON object, got null"},
		{`null`, new([]customer), "want a JSON array, got null"},
		{`{"items": []}`, new([2]int), `want a JSON array, got an object: {"items":[]}`},
	} {
		assert.EqualError(t, call(tc.body, tc.out), "invoicing: decoding GET /x response: "+tc.want, "%s into %T", tc.body, tc.out)
	}

	var anything any = "before"
	require.NoError(t, call(`null`, &anything))
	assert.Nil(t, anything)
	ptr := &customer{ID: "before"}
	require.NoError(t, call(`null`, &ptr))
	assert.Nil(t, ptr)
	var raw json.RawMessage
	require.NoError(t, call(`null`, &raw))
	assert.Equal(t, "null", string(raw))
	var amount decimal.Decimal
	require.NoError(t, call(`"12.50"`, &amount))
	assert.Equal(t, "12.5", amount.String())
	var text string
	require.NoError(t, call(`"paid"`, &text))
	assert.Equal(t, "paid", text)
}

func TestDoDecodeErrorIsNotRetried(t *testing.T) {
	c, api := newMock(t, always(200, `{"id": 7}`))
	var out struct {
		ID string `json:"id"`
	}
	err := c.Do(context.Background(), "GET", "/x", nil, &out)
	require.ErrorContains(t, err, "invoicing: decoding GET /x response: ")
	var e *invoicing.Error
	assert.False(t, errors.As(err, &e))
	assert.Len(t, api.requests(), 1)
}

// HEAD and GET are repeated after a 5xx; other methods only with
// WithIdempotentRetry; a 429 whatever the method.
func TestDoRetries(t *testing.T) {
	ctx := context.Background()
	c, api := newMock(t, always(503, `{"detail": "busy"}`))
	err := c.Do(ctx, "POST", "/credit-notes", map[string]string{"a": "b"}, nil)
	require.ErrorIs(t, err, invoicing.ErrServer)
	e := apiError(t, err)
	assert.Equal(t, "busy", e.Detail)
	assert.Equal(t, "POST", e.Method)
	assert.Equal(t, "/credit-notes", e.Path)
	assert.Len(t, api.requests(), 1, "a POST is not repeated")
	require.ErrorIs(t, c.Do(ctx, "GET", "/credit-notes", nil, nil), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1+4, "a GET is")
	require.ErrorIs(t, c.Do(ctx, "HEAD", "/credit-notes", nil, nil), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1+4+4, "so is a HEAD")
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		before := len(api.requests())
		require.ErrorIs(t, c.Do(ctx, m, "/credit-notes/x", nil, nil), invoicing.ErrServer)
		assert.Len(t, api.requests(), before+1, m)
		require.ErrorIs(t, c.Do(ctx, m, "/credit-notes/x", nil, nil, invoicing.WithIdempotentRetry()), invoicing.ErrServer)
		assert.Len(t, api.requests(), before+1+4, "%s with WithIdempotentRetry", m)
	}
	c, api = newMock(t, sequence(always(429, `{"detail": "slow down"}`), always(201, `{"id": "cn-2"}`)))
	var out map[string]string
	require.NoError(t, c.Do(ctx, "POST", "/credit-notes", map[string]string{"a": "b"}, &out))
	assert.Equal(t, "cn-2", out["id"])
	reqs := api.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Body, reqs[1].Body, "the same body, sent again")
}
