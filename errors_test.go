package invoicing_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestStatusErrorsMatchSentinels(t *testing.T) {
	cases := []struct {
		status   int
		sentinel error
	}{
		{400, invoicing.ErrBadRequest},
		{401, invoicing.ErrUnauthorized},
		{403, invoicing.ErrForbidden},
		{404, invoicing.ErrNotFound},
		{409, invoicing.ErrConflict},
		{422, invoicing.ErrValidation},
		{500, invoicing.ErrServer},
		{503, invoicing.ErrServer},
	}
	all := []error{invoicing.ErrBadRequest, invoicing.ErrUnauthorized, invoicing.ErrForbidden, invoicing.ErrNotFound,
		invoicing.ErrConflict, invoicing.ErrValidation, invoicing.ErrRateLimited, invoicing.ErrServer}
	for _, tc := range cases {
		c, api := newTestAPI(t, always(tc.status, `{"detail": "some detail text"}`), invoicing.WithMaxRetries(0))
		_, err := c.Invoices.Get(context.Background(), invoiceID)
		require.Error(t, err)
		for _, s := range all {
			assert.Equal(t, s == tc.sentinel, errors.Is(err, s), "status %d vs %v", tc.status, s)
		}
		var apiErr *invoicing.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, tc.status, apiErr.StatusCode)
		assert.Equal(t, "some detail text", apiErr.Detail)
		assert.Equal(t, "GET", apiErr.Method)
		assert.Equal(t, "/invoices/"+invoiceID, apiErr.Path)
		assert.Contains(t, err.Error(), "some detail text")
		assert.Len(t, api.requests(), 1)
	}
}

func TestUnauthorizedAndForbidden(t *testing.T) {
	c, _ := newTestAPI(t, always(401, `{"detail": "Invalid API key"}`))
	_, err := c.Items.Get(context.Background(), invoiceID)
	assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
	assert.EqualError(t, err, "invoicing: GET /items/"+invoiceID+": 401 Unauthorized: \"Invalid API key\"")

	c, api := newTestAPI(t, always(403, `{"detail": "Missing required scope: items:write"}`))
	_, err = c.Items.Create(context.Background(), &invoicing.ItemCreateParams{Name: "x", AccountID: "a", TaxCodeID: "t", UnitPrice: invoicing.Ptr(dec("1"))})
	assert.ErrorIs(t, err, invoicing.ErrForbidden)
	assert.Len(t, api.requests(), 1)
}

func TestValidationErrorWithArrayDetail(t *testing.T) {
	c, _ := newTestAPI(t, always(422, fixture(t, "error_422_array.json")))
	_, err := c.Quotes.Create(context.Background(), validQuote())
	require.ErrorIs(t, err, invoicing.ErrValidation)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	require.Len(t, apiErr.Problems, 2)
	assert.Equal(t, []string{"body", "line_items", "0", "unit_price"}, apiErr.Problems[0].Loc)
	assert.Equal(t, "line_items.0.unit_price", apiErr.Problems[0].Field())
	assert.Equal(t, "field required", apiErr.Problems[0].Msg)
	assert.Equal(t, "value_error.missing", apiErr.Problems[0].Type)
	assert.Equal(t, "line_items.0.unit_price: field required; client_id: field required", apiErr.Detail)
}

func TestHTMLErrorPageStillGivesUsefulError(t *testing.T) {
	html := fixture(t, "error_502.html")
	c, api := newTestAPI(t, always(502, html, "Content-Type", "text/html"), invoicing.WithMaxRetries(1))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrServer)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 502, apiErr.StatusCode)
	assert.Equal(t, "Bad Gateway", apiErr.Detail)
	assert.Equal(t, html, string(apiErr.Body))
	assert.Equal(t, "text/html", apiErr.Header.Get("Content-Type"))
	assert.Equal(t, "invoicing: GET /invoices/"+invoiceID+": 502 Bad Gateway (after 2 attempts)", err.Error())
	assert.Len(t, api.requests(), 2, "a GET is retried after a 5xx")
}

func TestErrorBodyIsCapped(t *testing.T) {
	huge := `{"detail": "` + strings.Repeat("x", 1<<20) + `"}`
	c, _ := newTestAPI(t, always(400, huge))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Len(t, apiErr.Body, 64<<10)
	assert.Equal(t, "Bad Request", apiErr.Detail, "a truncated body has no parseable detail")
}

func TestMalformedJSONResponse(t *testing.T) {
	for name, body := range map[string]string{
		"truncated": `{"id": "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", "total": 1`,
		"html":      `<html>ok</html>`,
		"bad money": `{"total": "twelve"}`,
		"bad date":  `{"issue_date": "01/11/2026"}`,
		"empty":     ``,
	} {
		c, _ := newTestAPI(t, always(200, body))
		_, err := c.Invoices.Get(context.Background(), invoiceID)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "invoicing: decoding GET /invoices/"+invoiceID+" response", name)
		var apiErr *invoicing.Error
		assert.False(t, errors.As(err, &apiErr), "a decode failure is not an API error")
	}
}

func TestResponseTooLarge(t *testing.T) {
	big := `{"invoice_number": "` + strings.Repeat("9", 4096) + `"}`
	c, _ := newTestAPI(t, always(200, big), invoicing.WithMaxResponseBytes(1024))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	assert.ErrorIs(t, err, invoicing.ErrResponseTooLarge)

	// Without a Content-Length (chunked) the cap holds too.
	c, _ = newTestAPI(t, func(w http.ResponseWriter, _ *http.Request) {
		for range 8 {
			_, _ = w.Write([]byte(strings.Repeat(" ", 512)))
			w.(http.Flusher).Flush()
		}
	}, invoicing.WithMaxResponseBytes(1024))
	_, err = c.Invoices.Get(context.Background(), invoiceID)
	assert.ErrorIs(t, err, invoicing.ErrResponseTooLarge)
}

func TestAPIKeyNeverInErrorsOrLogs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, _ := newTestAPI(t, sequence(always(503, `{"detail": "down"}`), always(401, `{"detail": "Invalid API key"}`)),
		invoicing.WithLogger(logger))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrUnauthorized)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.NotContains(t, err.Error(), testKey)
	assert.NotContains(t, string(apiErr.Body), testKey)
	assert.NotContains(t, logs.String(), testKey)
	assert.Contains(t, logs.String(), "invoicing: retrying")
	assert.Contains(t, logs.String(), "status=401")
	for _, s := range []string{c.String(), c.GoString()} {
		assert.NotContains(t, s, testKey)
	}

	// Transport errors do not carry it either.
	c2, err := invoicing.NewClient("http://127.0.0.1:1"+prefix, testKey, invoicing.WithMaxRetries(0))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c2.Invoices.Get(ctx, invoiceID)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), testKey)
	assert.Contains(t, err.Error(), "invoicing: GET /invoices/"+invoiceID)
}
