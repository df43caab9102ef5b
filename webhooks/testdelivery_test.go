package webhooks_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
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

// knownEventTypes are the thirteen event types and test.
var knownEventTypes = []webhooks.EventType{
	webhooks.EventInvoiceCreated, webhooks.EventInvoiceSent, webhooks.EventInvoiceUpdated, webhooks.EventInvoicePaid,
	webhooks.EventBillCreated, webhooks.EventBillApproved, webhooks.EventContactCreated, webhooks.EventPaymentReceived,
	webhooks.EventQuoteCreated, webhooks.EventQuoteSent, webhooks.EventQuoteViewed, webhooks.EventQuoteAccepted,
	webhooks.EventQuoteUnaccepted, webhooks.EventTest,
}

// TestSampleBodyHasTheDocumentedFields compares each sample body's fields,
// at the top and in nested objects, with the fixture of the same event,
// which follows the service's payload tables. The insides of
// interactive_selections (a map keyed by ids) and of previous_acceptance
// (whose shape the service does not show) are left out.
func TestSampleBodyHasTheDocumentedFields(t *testing.T) {
	for _, event := range knownEventTypes {
		sample, err := webhooks.SampleBody(event, testNow)
		require.NoError(t, err)
		assert.Equal(t, fieldPaths(t, fixture(t, string(event)+".json")), fieldPaths(t, sample), event)
	}
}

// A sample signed with TestDelivery reaches a Handler as its typed event,
// dated at the time asked for.
func TestSampleBodyIsReceivedAsItsTypedEvent(t *testing.T) {
	var got *webhooks.Delivery
	h := webhooks.Handler(newVerifier(t), func(_ context.Context, d *webhooks.Delivery) error {
		got = d
		return nil
	})
	at := testNow.Add(-90 * time.Minute).In(time.FixedZone("AEST", 10*60*60))
	for _, event := range knownEventTypes {
		body, err := webhooks.SampleBody(event, at)
		require.NoError(t, err)
		r, err := webhooks.TestDelivery{Secret: testSecret, Type: event, Timestamp: testNow, Body: body}.Request("/webhooks")
		require.NoError(t, err)
		got = nil
		w := serve(h, r)
		require.Equal(t, 200, w.Code, "%s: %s", event, body)
		require.NotNil(t, got)
		assert.Equal(t, event, got.Event.EventType(), "%T", got.Event)
		if event != webhooks.EventTest {
			assert.True(t, strings.HasSuffix(got.EventKey(), "/"+at.UTC().Format(time.RFC3339)), "%s: the event's time is at, in UTC: %s", event, got.EventKey())
		}
	}

	ev, err := webhooks.Parse(webhooks.EventQuoteAccepted, must(webhooks.SampleBody(webhooks.EventQuoteAccepted, at)))
	require.NoError(t, err)
	accepted := ev.(*webhooks.QuoteAccepted)
	assert.Equal(t, "5609.34", accepted.Total.StringFixed(2), "the optional line the client excluded is left out")
	assert.Len(t, accepted.LineItems, 2)
	assert.NotNil(t, accepted.InvoiceID, "with the invoice of a successful conversion")
}

func TestSampleBodyHasFreshIDsEachCall(t *testing.T) {
	a, err := webhooks.Parse(webhooks.EventInvoicePaid, must(webhooks.SampleBody(webhooks.EventInvoicePaid, testNow)))
	require.NoError(t, err)
	b, err := webhooks.Parse(webhooks.EventInvoicePaid, must(webhooks.SampleBody(webhooks.EventInvoicePaid, testNow)))
	require.NoError(t, err)
	assert.NotEqual(t, a.(*webhooks.InvoicePaid).InvoiceID, b.(*webhooks.InvoicePaid).InvoiceID)
}

func TestSampleBodyRefusesAnUnknownEventType(t *testing.T) {
	body, err := webhooks.SampleBody("credit_note.created", testNow)
	assert.EqualError(t, err, `webhooks: no sample body for event type "credit_note.created"`)
	assert.Nil(t, body)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// fieldPaths lists the paths of every object member in a JSON document,
// with array elements folded into "[]".
func fieldPaths(t *testing.T, doc []byte) []string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				seen[prefix+k] = true
				if k != "interactive_selections" && k != "previous_acceptance" {
					walk(prefix+k+".", child)
				}
			}
		case []any:
			for _, child := range v {
				walk(prefix+"[].", child)
			}
		}
	}
	walk("", v)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
