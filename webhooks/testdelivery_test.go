package webhooks_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestTestDeliveryHeader(t *testing.T) {
	body := fixture(t, "invoice.paid.json")
	td := webhooks.TestDelivery{
		Secret: testSecret, Type: webhooks.EventInvoicePaid, DeliveryID: "dlv-9",
		Timestamp: testNow.Add(700 * time.Millisecond), Body: body,
	}
	want := signedHeader(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)
	want.Set(webhooks.HeaderDelivery, "dlv-9")
	want.Set("User-Agent", "Service-Webhooks/1.0")
	assert.Equal(t, want, td.Header(), "what the service sends, signed as the test's own HMAC does")
}

func TestTestDeliveryDefaults(t *testing.T) {
	td := webhooks.TestDelivery{Secret: testSecret, Type: webhooks.EventTest, Body: fixture(t, "test.json")}
	before := time.Now().Unix()
	h1, h2 := td.Header(), td.Header()
	after := time.Now().Unix()

	id := h1.Get(webhooks.HeaderDelivery)
	assert.NotEmpty(t, id)
	assert.NotEqual(t, id, h2.Get(webhooks.HeaderDelivery), "a fresh id each time")
	ts, err := strconv.ParseInt(h1.Get(webhooks.HeaderTimestamp), 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ts, before)
	assert.LessOrEqual(t, ts, after)

	// Verified by a Verifier on the real clock.
	v, err := webhooks.NewVerifier(testSecret)
	require.NoError(t, err)
	d, err := v.ParseDelivery(h1, td.Body)
	require.NoError(t, err)
	assert.Equal(t, id, d.ID)
	assert.Equal(t, expectedEvents["test.json"], d.Event)
}

func TestTestDeliveryRequest(t *testing.T) {
	body := fixture(t, "quote.accepted.json")
	td := webhooks.TestDelivery{Secret: testSecret, Type: webhooks.EventQuoteAccepted, DeliveryID: "dlv-1", Timestamp: testNow, Body: body}

	t.Run("to a handler", func(t *testing.T) {
		rec := &recorder{}
		h := webhooks.Handler(newVerifier(t), rec.handle)
		r, err := td.Request("/webhooks")
		require.NoError(t, err)
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, int64(len(body)), r.ContentLength)
		require.Equal(t, http.StatusOK, serve(h, r).Code)
		require.Equal(t, 1, rec.calls())
		assert.Equal(t, "dlv-1", rec.got[0].ID)
		assertSameEvent(t, expectedEvents["quote.accepted.json"], rec.got[0].Event)

		// Another secret is refused.
		td := td
		td.Secret = "another secret"
		r, err = td.Request("/webhooks")
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, serve(h, r).Code)
	})

	t.Run("over HTTP", func(t *testing.T) {
		var got http.Header
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Clone()
			b, _ := io.ReadAll(r.Body)
			if string(b) != string(body) {
				w.WriteHeader(http.StatusBadRequest)
			}
		}))
		defer srv.Close()
		r, err := td.Request(srv.URL + "/hooks")
		require.NoError(t, err)
		resp, err := srv.Client().Do(r)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "Service-Webhooks/1.0", got.Get("User-Agent"))
		assert.Equal(t, "application/json", got.Get("Content-Type"))
		assert.NoError(t, newVerifier(t).Verify(got, body))
	})

	t.Run("bad URL", func(t *testing.T) {
		_, err := td.Request("http://[::1")
		require.Error(t, err)
	})
}
