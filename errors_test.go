package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

var statusSentinels = []error{invoicing.ErrBadRequest, invoicing.ErrUnauthorized, invoicing.ErrForbidden, invoicing.ErrNotFound,
	invoicing.ErrConflict, invoicing.ErrValidation, invoicing.ErrRateLimited, invoicing.ErrServer,
	invoicing.ErrItemCodeExists, invoicing.ErrUnitPriceRequired, invoicing.ErrInvalidItemType,
	invoicing.ErrInvalidParams, invoicing.ErrInvalidOption, invoicing.ErrResponseTooLarge}

// Every non-2xx is an *Error matching the sentinel of its status, and no
// other.
func TestStatusErrorsMatchTheirSentinelOnly(t *testing.T) {
	for _, tc := range []struct {
		status int
		detail string
		match  []error
	}{
		{400, "some detail text", []error{invoicing.ErrBadRequest}},
		{401, "some detail text", []error{invoicing.ErrUnauthorized}},
		{403, "some detail text", []error{invoicing.ErrForbidden}},
		{404, "some detail text", []error{invoicing.ErrNotFound}},
		{409, "some detail text", []error{invoicing.ErrConflict}},
		{422, "some detail text", []error{invoicing.ErrValidation}},
		{429, "some detail text", []error{invoicing.ErrRateLimited}},
		{500, "some detail text", []error{invoicing.ErrServer}},
		{501, "some detail text", []error{invoicing.ErrServer}},
		{503, "some detail text", []error{invoicing.ErrServer}},
		{599, "some detail text", []error{invoicing.ErrServer}},
		{405, "some detail text", nil},
		{418, "some detail text", nil},
		{302, "some detail text", nil},
		{409, "Item code already exists", []error{invoicing.ErrConflict, invoicing.ErrItemCodeExists}},
		{422, "Item code already exists", []error{invoicing.ErrValidation}},
		{409, "item code already exists", []error{invoicing.ErrConflict}},
		{422, "unit_price is required for SALES and PURCHASE items", []error{invoicing.ErrValidation, invoicing.ErrUnitPriceRequired}},
		{400, "unit_price is required for SALES and PURCHASE items", []error{invoicing.ErrBadRequest}},
		{422, "item_type must be one of: SALES, PURCHASE, TEXT", []error{invoicing.ErrValidation, invoicing.ErrInvalidItemType}},
		{409, "item_type must be one of: SALES, PURCHASE, TEXT", []error{invoicing.ErrConflict}},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.detail), func(t *testing.T) {
			c, api := newMock(t, always(tc.status, `{"detail": "`+tc.detail+`"}`), invoicing.WithMaxRetries(0))
			err := getInvoice(c)
			e := apiError(t, err)
			for _, s := range statusSentinels {
				want := false
				for _, m := range tc.match {
					want = want || m == s
				}
				assert.Equal(t, want, errors.Is(err, s), "%v", s)
			}
			assert.False(t, errors.Is(err, nil))
			assert.Equal(t, tc.status, e.StatusCode)
			assert.Equal(t, tc.detail, e.Detail)
			assert.Equal(t, "GET", e.Method)
			assert.Equal(t, "/invoices/"+idInvoice, e.Path)
			assert.Contains(t, err.Error(), tc.detail)
			assert.Len(t, api.requests(), 1)

			// Wrapped, it still matches.
			wrapped := fmt.Errorf("syncing: %w", err)
			for _, m := range tc.match {
				assert.ErrorIs(t, wrapped, m)
			}
			var again *invoicing.Error
			require.ErrorAs(t, wrapped, &again)
			assert.Same(t, e, again)
		})
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *invoicing.Error
		want string
	}{
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 404}, Method: "GET", Path: "/invoices/x", Detail: "Invoice not found"},
			`invoicing: GET /invoices/x: 404 Not Found: "Invoice not found"`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 502, Attempts: 1}, Method: "GET", Path: "/x", Detail: "Bad Gateway"},
			`invoicing: GET /x: 502 Bad Gateway`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 500}, Method: "POST", Path: "/x"},
			`invoicing: POST /x: 500 Internal Server Error`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 404}, Detail: "gone"},
			`invoicing: 404 Not Found: "gone"`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 599}, Method: "GET", Path: "/x", Detail: "odd"},
			`invoicing: GET /x: 599: "odd"`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 429, Attempts: 4}, Method: "GET", Path: "/x", Detail: "slow", RetryAfter: 2 * time.Minute},
			`invoicing: GET /x: 429 Too Many Requests: "slow" (retry after 2m0s; after 4 attempts)`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 503, Attempts: 2}, Method: "GET", Path: "/x", Detail: "down"},
			`invoicing: GET /x: 503 Service Unavailable: "down" (after 2 attempts)`},
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 429}, Method: "GET", Path: "/x", RetryAfter: 1500 * time.Millisecond},
			`invoicing: GET /x: 429 Too Many Requests (retry after 1.5s)`},
		// The service's text cannot forge log lines: it is quoted.
		{&invoicing.Error{Response: invoicing.Response{StatusCode: 404}, Method: "GET", Path: "/x", Detail: "a\ninvoicing: GET /y: 200 OK\x1b[2K\u202e\""},
			`invoicing: GET /x: 404 Not Found: "a\ninvoicing: GET /y: 200 OK\x1b[2K\u202e\""`},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}

func TestErrorMessageEscapesServerText(t *testing.T) {
	detail := "Invoice not found\ninvoicing: GET /x: 200 OK\x1b[2K\u202e"
	c, _ := newMock(t, always(404, `{"detail": "Invoice not found\ninvoicing: GET /x: 200 OK\u001b[2K\u202e"}`))
	err := getInvoice(c)
	e := apiError(t, err)
	assert.Equal(t, detail, e.Detail, "Detail is verbatim")
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	assert.NotContains(t, msg, "\x1b")
	assert.NotContains(t, msg, "\u202e")
	assert.Contains(t, msg, `404 Not Found: "Invoice not found\ninvoicing: GET /x: 200 OK\x1b[2K\u202e"`)
}

// A base URL without /api/v1/external meets the service's 404 for a path it
// does not have ({"detail": "Not Found"}, or a proxy's page): the error says
// what the base URL must end in, and shows the one used.
func TestNotFoundFromABaseURLWithoutThePrefixSaysSo(t *testing.T) {
	const host = "https://api.invoicing.test"
	for _, body := range []string{`{"detail": "Not Found"}`, `<html>404 Not Found</html>`, ``} {
		for _, base := range []string{host, host + "/api/v1", host + "/", host + "/api/v1/external/v2"} {
			c, _ := newMock(t, &mockAPI{base: base, handler: always(404, body)})
			err := getInvoice(c)
			require.ErrorIs(t, err, invoicing.ErrNotFound)
			want := "invoicing: GET /invoices/" + idInvoice + ": 404 Not Found (the base URL must end in /api/v1/external; this Client uses " + strings.TrimRight(base, "/") + ")"
			assert.Equal(t, want, err.Error(), base)
			for range c.Invoices.List(context.Background(), nil) {
				break
			}
		}
	}
	// With the prefix, a 404 is about the record: no advice; nor for a 404
	// with the service's detail.
	c, _ := newMock(t, always(404, `{"detail": "Not Found"}`))
	assert.Equal(t, "invoicing: GET /invoices/"+idInvoice+": 404 Not Found", getInvoice(c).Error())
	c, _ = newMock(t, &mockAPI{base: host, handler: always(404, `{"detail": "Invoice not found"}`)})
	assert.Equal(t, "invoicing: GET /invoices/"+idInvoice+`: 404 Not Found: "Invoice not found"`, getInvoice(c).Error())
}

// An error after retries says how many attempts were made, for a status
// and for a network failure alike.
func TestErrorAfterRetriesCountsAttempts(t *testing.T) {
	c, _ := newMock(t, always(503, `{"detail": "maintenance"}`))
	assert.EqualError(t, getInvoice(c), "invoicing: GET /invoices/"+idInvoice+`: 503 Service Unavailable: "maintenance" (after 4 attempts)`)
	c, _ = newMock(t, always(503, `{"detail": "maintenance"}`), invoicing.WithMaxRetries(0))
	assert.EqualError(t, getInvoice(c), "invoicing: GET /invoices/"+idInvoice+`: 503 Service Unavailable: "maintenance"`, "one attempt: nothing to count")

	down, _ := newMock(t, func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") },
		invoicing.WithMaxRetries(2))
	err := getInvoice(down)
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "connection refused (after 3 attempts)"), err.Error())
	assert.True(t, strings.HasPrefix(err.Error(), "invoicing: GET /invoices/"+idInvoice+": "), err.Error())
}

func TestValidationErrorWithAnArrayDetail(t *testing.T) {
	c, _ := newMock(t, always(422, fixture(t, "error_422_array.json")))
	_, err := c.Quotes.Create(context.Background(), svcValidQuote())
	require.ErrorIs(t, err, invoicing.ErrValidation)
	e := apiError(t, err)
	require.Len(t, e.Problems, 2)
	assert.Equal(t, invoicing.Problem{Loc: []string{"body", "line_items", "0", "unit_price"}, Msg: "field required", Type: "value_error.missing"}, e.Problems[0])
	assert.Equal(t, "line_items.0.unit_price", e.Problems[0].Field())
	assert.Equal(t, "client_id", e.Problems[1].Field())
	assert.Equal(t, "line_items.0.unit_price: field required; client_id: field required", e.Detail)
	assert.Equal(t, fixture(t, "error_422_array.json"), string(e.Body))

	c, _ = newMock(t, always(422, `{"detail": [{"loc": ["query", "page_size"], "msg": "too big", "type": "x"},
		{"loc": ["path", "id"], "msg": "bad id"}, {"loc": [], "msg": "whole request"}, {"loc": ["body"], "msg": "no body"},
		{"loc": ["body", "line_items", -1, 2.5, true], "msg": "odd"}, {"msg": "no loc"}]}`))
	err = getInvoice(c)
	e = apiError(t, err)
	require.Len(t, e.Problems, 6)
	fields := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		fields[i] = p.Field()
	}
	assert.Equal(t, []string{"page_size", "id", "", "body", "line_items.-1.2.5.true", ""}, fields)
	assert.Equal(t, "page_size: too big; id: bad id; whole request; body: no body; line_items.-1.2.5.true: odd; no loc", e.Detail)
}

// A body that is not the documented {detail} leaves Detail to the status
// text (or to the detail's own JSON text when it is not a string), and
// keeps the body.
func TestMalformedErrorBodies(t *testing.T) {
	for _, tc := range []struct{ body, detail string }{
		{`{"detail": "plain"}`, "plain"},
		{"  \n{\"detail\": \"padded\"}\n", "padded"},
		{`{"detail": ""}`, "Bad Request"},
		{`{"detail": null}`, "Bad Request"},
		{`{"detail": 42}`, "42"},
		{`{"detail": true}`, "true"},
		{`{"detail": {"code": 7, "why": "x"}}`, `{"code": 7, "why": "x"}`},
		{`{"detail": ["a", "b"]}`, "Bad Request"},
		{`{"detail": [1, 2]}`, "Bad Request"},
		{`{"detail": "truncated`, "Bad Request"},
		{`{"detail": "x"`, "Bad Request"},
		{`{"message": "not ours"}`, "Bad Request"},
		{`{}`, "Bad Request"},
		{`[]`, "Bad Request"},
		{`"detail"`, "Bad Request"},
		{``, "Bad Request"},
		{`<html><body>Bad Request</body></html>`, "Bad Request"},
		{"{\"detail\": \"\xff\xfe\"}", "\ufffd\ufffd"}, // as encoding/json reads invalid UTF-8
	} {
		c, _ := newMock(t, always(400, tc.body))
		err := getInvoice(c)
		require.ErrorIs(t, err, invoicing.ErrBadRequest, tc.body)
		e := apiError(t, err)
		assert.Equal(t, tc.detail, e.Detail, tc.body)
		assert.Nil(t, e.Problems, tc.body)
		assert.Equal(t, tc.body, string(e.Body), tc.body)
	}
}

// A status net/http has no text for (a proxy's 499, Cloudflare's 520)
// still gets a Detail.
func TestDetailOfAStatusWithoutText(t *testing.T) {
	for _, status := range []int{499, 520, 527} {
		c, _ := newMock(t, always(status, "<html>origin error</html>"), invoicing.WithMaxRetries(0))
		err := getInvoice(c)
		e := apiError(t, err)
		assert.Equal(t, fmt.Sprintf("HTTP %d", status), e.Detail)
		assert.Equal(t, fmt.Sprintf("invoicing: GET /invoices/%s: %d", idInvoice, status), err.Error())
	}
	c, _ := newMock(t, always(520, `{"detail": "origin down"}`), invoicing.WithMaxRetries(0))
	err := getInvoice(c)
	assert.Equal(t, "origin down", apiError(t, err).Detail)
	assert.Equal(t, "invoicing: GET /invoices/"+idInvoice+`: 520: "origin down"`, err.Error())
}

func TestErrorBodyIsCapped(t *testing.T) {
	huge := `{"detail": "` + strings.Repeat("x", 1<<20) + `"}`
	c, api := newMock(t, always(400, huge))
	e := apiError(t, getInvoice(c))
	assert.Len(t, e.Body, 64<<10)
	assert.Equal(t, huge[:64<<10], string(e.Body))
	assert.Equal(t, "Bad Request", e.Detail, "a truncated body has no parseable detail")
	assert.Len(t, api.requests(), 1)
}

func TestRetryAfterParsing(t *testing.T) {
	in := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	for _, tc := range []struct {
		header   string
		min, max time.Duration
	}{
		{"7", 7 * time.Second, 7 * time.Second},
		{"0", 0, 0},
		{"-3", 0, 0},
		{"soon", 0, 0},
		{"1.5", 0, 0},
		{"", 0, 0},
		{"99999999999", 365 * 24 * time.Hour, 365 * 24 * time.Hour},
		{"99999999999999999999", 365 * 24 * time.Hour, 365 * 24 * time.Hour}, // too large to parse: longer than any wait
		{"-99999999999999999999", 0, 0},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0, 0},  // past
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, 0}, // RFC 850, past
		{"Wed, 01 Oct 2200 00:00:00 GMT", 365 * 24 * time.Hour, 365 * 24 * time.Hour},
		{in(time.Hour), time.Hour - 2*time.Second, time.Hour},
		{"Wed, 32 Oct 2200 00:00:00 GMT", 0, 0},
	} {
		c, _ := newMock(t, always(429, `{}`, "Retry-After", tc.header), invoicing.WithMaxRetries(0))
		e := apiError(t, getInvoice(c))
		assert.GreaterOrEqual(t, e.RetryAfter, tc.min, "Retry-After %q", tc.header)
		assert.LessOrEqual(t, e.RetryAfter, tc.max, "Retry-After %q", tc.header)
		assert.Equal(t, "Too Many Requests", e.Detail)
	}
	// Any status may carry it.
	c, _ := newMock(t, always(503, `{}`, "Retry-After", "3"), invoicing.WithMaxRetries(0))
	assert.Equal(t, 3*time.Second, apiError(t, getInvoice(c)).RetryAfter)
}

func TestParamError(t *testing.T) {
	pe := &invoicing.ParamError{Field: "line_items[0].unit_price", Reason: "is required"}
	assert.EqualError(t, pe, "invoicing: invalid line_items[0].unit_price: is required")
	assert.ErrorIs(t, pe, invoicing.ErrInvalidParams)
	assert.NotErrorIs(t, pe, invoicing.ErrUnitPriceRequired)
	assert.NotErrorIs(t, pe, invoicing.ErrValidation)

	// A check that stands in for a documented service error matches it too.
	c, api := newMock(t, always(201, fixture(t, "item.json")))
	p := svcValidItem()
	p.UnitPrice = nil
	_, err := c.Items.Create(context.Background(), p)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "unit_price", pe.Field)
	assert.EqualError(t, err, "invoicing: invalid unit_price: is required for SALES and PURCHASE items")
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired)
	assert.NotErrorIs(t, err, invoicing.ErrValidation, "nothing was sent: no status")
	var e *invoicing.Error
	assert.False(t, errors.As(err, &e))

	p = svcValidItem()
	p.ItemType = "SERVICE"
	_, err = c.Items.Create(context.Background(), p)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "item_type", pe.Field)
	assert.ErrorIs(t, err, invoicing.ErrInvalidItemType)
	assert.NotErrorIs(t, err, invoicing.ErrUnitPriceRequired)
	assert.Empty(t, api.requests())

	assert.Empty(t, api.requests())
}
