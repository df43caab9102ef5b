package webhooks_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

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
		w := httptest.NewRecorder()
		got = nil
		h.ServeHTTP(w, r)
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

// A receiver's test: a sample invoice.paid, signed as the service signs it,
// through the receiver's handler.
func ExampleSampleBody() {
	const secret = exampleSecret
	v, err := webhooks.NewVerifier(secret)
	if err != nil {
		panic(err)
	}
	h := webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			fmt.Println(d.Type, e.InvoiceNumber, e.AmountPaid.StringFixed(2))
		}
		return nil
	})

	body, err := webhooks.SampleBody(webhooks.EventInvoicePaid, time.Now())
	if err != nil {
		panic(err)
	}
	r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, Body: body}.Request("/webhooks")
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// invoice.paid INV-0412 1512.50
	// 200
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
