package webhooks_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestReadEveryFixture(t *testing.T) {
	v := newVerifier(t)
	for name, eventType := range fixtures {
		t.Run(name, func(t *testing.T) {
			body := fixture(t, name)
			d, err := v.Read(signedRequest(testSecret, testTimestamp, eventType, body))
			require.NoError(t, err)
			assert.Equal(t, "dlv_01HQ7Z3K8M2N4P6R8T0V", d.ID)
			assert.Equal(t, eventType, d.Type)
			assert.Equal(t, testNow.UTC(), d.Timestamp)
			assert.Equal(t, body, d.Body)
			assertSameEvent(t, expectedEvents[name], d.Event)
		})
	}
}

func TestReadUnknownEventType(t *testing.T) {
	v := newVerifier(t)
	body := []byte(`{"credit_note_id": "cn-1"}`)
	d, err := v.Read(signedRequest(testSecret, testTimestamp, "credit_note.created", body))
	require.NoError(t, err)
	assert.Equal(t, &webhooks.RawEvent{Type: "credit_note.created", Body: body}, d.Event)
}

func TestReadMissingEventOrDeliveryHeader(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "invoice.created.json")
	for _, name := range []string{webhooks.HeaderEvent, webhooks.HeaderDelivery} {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventInvoiceCreated, body)
		r.Header.Del(name)
		_, err := v.Read(r)
		require.ErrorIs(t, err, webhooks.ErrMissingHeader)
		require.ErrorContains(t, err, name)
	}
}

func TestReadVerifiesBeforeParsing(t *testing.T) {
	v := newVerifier(t)
	body := []byte(`{"total": "not money"}`)
	r := signedRequest("wrong secret", testTimestamp, webhooks.EventInvoiceCreated, body)
	_, err := v.Read(r)
	require.ErrorIs(t, err, webhooks.ErrSignatureMismatch)
	require.NotErrorIs(t, err, webhooks.ErrInvalidPayload)

	// Correctly signed, the same body fails to parse.
	_, err = v.Read(signedRequest(testSecret, testTimestamp, webhooks.EventInvoiceCreated, body))
	require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReadBodyLimit(t *testing.T) {
	v := newVerifier(t, webhooks.WithMaxBodyBytes(1024))
	big := bytes.Repeat([]byte("x"), 4096)

	t.Run("declared length over the limit is refused unread", func(t *testing.T) {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, big)
		counter := &countingReader{r: r.Body}
		r.Body = io.NopCloser(counter)
		_, err := v.Read(r)
		require.ErrorIs(t, err, webhooks.ErrBodyTooLarge)
		assert.Zero(t, counter.n)
	})
	t.Run("unknown length stops reading after the limit", func(t *testing.T) {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, big)
		counter := &countingReader{r: bytes.NewReader(big)}
		r.Body, r.ContentLength = io.NopCloser(counter), -1
		_, err := v.Read(r)
		require.ErrorIs(t, err, webhooks.ErrBodyTooLarge)
		assert.LessOrEqual(t, counter.n, 1025+512)
	})
	t.Run("a lying Content-Length", func(t *testing.T) {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, big)
		r.ContentLength = 10
		_, err := v.Read(r)
		require.ErrorIs(t, err, webhooks.ErrBodyTooLarge)
	})
	t.Run("http.MaxBytesReader of the caller", func(t *testing.T) {
		body := fixture(t, "test.json")
		r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 10)
		r.ContentLength = -1
		_, err := v.Read(r)
		require.ErrorIs(t, err, webhooks.ErrBodyTooLarge)
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		body := append([]byte(`{"event": "test", "message": "`), bytes.Repeat([]byte("m"), 1024-32)...)
		body = append(body, `"}`...)
		require.Len(t, body, 1024)
		d, err := v.Read(signedRequest(testSecret, testTimestamp, webhooks.EventTest, body))
		require.NoError(t, err)
		assert.Len(t, d.Event.(*webhooks.Test).Message, 1024-32)
	})
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadBodyError(t *testing.T) {
	v := newVerifier(t)
	r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, fixture(t, "test.json"))
	r.Body = io.NopCloser(failingReader{})
	_, err := v.Read(r)
	require.ErrorContains(t, err, "connection reset")
	require.NotErrorIs(t, err, webhooks.ErrBodyTooLarge)
}

func TestReadEmptyBody(t *testing.T) {
	v := newVerifier(t)
	r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, nil)
	r.Body = http.NoBody
	_, err := v.Read(r)
	require.ErrorIs(t, err, webhooks.ErrInvalidPayload, "an empty body is correctly signed but is not an event")
}

func TestParseDelivery(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "payment.received.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventPaymentReceived, body)
	d, err := v.ParseDelivery(header, body)
	require.NoError(t, err)
	assert.Equal(t, expectedEvents["payment.received.json"], d.Event, "a canonical body: the event built in code")

	sig := header.Get(webhooks.HeaderSignature)
	last := "0"
	if strings.HasSuffix(sig, "0") {
		last = "1"
	}
	header.Set(webhooks.HeaderSignature, sig[:len(sig)-1]+last)
	_, err = v.ParseDelivery(header, body)
	require.ErrorIs(t, err, webhooks.ErrSignatureMismatch)
}

func TestEventKey(t *testing.T) {
	v := newVerifier(t)
	read := func(eventType webhooks.EventType, deliveryID string, body []byte) *webhooks.Delivery {
		t.Helper()
		r := signedRequest(testSecret, testTimestamp, eventType, body)
		r.Header.Set(webhooks.HeaderDelivery, deliveryID)
		d, err := v.Read(r)
		require.NoError(t, err)
		return d
	}

	paid := fixture(t, "invoice.paid.json")
	d := read(webhooks.EventInvoicePaid, "d-1", paid)
	assert.Equal(t, "invoice.paid/e5b3f1d2-9c84-4a7b-b6e0-2d1f8a3c5e97/2026-03-20T23:05:44Z", d.EventKey())

	// The same body replayed under a new delivery id has the same key.
	replay := read(webhooks.EventInvoicePaid, "d-2", paid)
	assert.NotEqual(t, d.ID, replay.ID)
	assert.Equal(t, d.EventKey(), replay.EventKey())

	assert.Equal(t, "payment.received/f2a9c4e7-0b3d-4e18-96c5-8d1a7f3b2e60/2026-03-12T00:00:00Z",
		read(webhooks.EventPaymentReceived, "d-3", fixture(t, "payment.received.json")).EventKey())
	assert.Equal(t, "quote.viewed/9d2e4b71-3c5a-4f86-a0b9-7e1d6c8f2a35/2026-03-04T08:11:02Z",
		read(webhooks.EventQuoteViewed, "d-4", fixture(t, "quote.viewed.json")).EventKey())

	// One instant written in two zones is one key; fractions are kept.
	at := func(ts string) string {
		body := `{"invoice_id": "i-1", "amount_paid": "1.00", "paid_at": "` + ts + `"}`
		return read(webhooks.EventInvoicePaid, "d", []byte(body)).EventKey()
	}
	assert.Equal(t, at("2026-03-20T23:05:44Z"), at("2026-03-21T10:05:44+11:00"))
	assert.Equal(t, "invoice.paid/i-1/2026-03-20T23:05:44.25Z", at("2026-03-20T23:05:44.250+00:00"))
	assert.NotEqual(t, at("2026-03-20T23:05:44Z"), at("2026-03-20T23:05:45Z"))

	// Every documented event has a key, each fixture its own.
	keys := map[string]string{}
	for name, eventType := range fixtures {
		k := read(eventType, "d", fixture(t, name)).EventKey()
		if eventType == webhooks.EventTest {
			assert.Empty(t, k, "a test delivery has no key")
			continue
		}
		require.True(t, strings.HasPrefix(k, string(eventType)+"/"), k)
		keys[k] = name
	}
	assert.Len(t, keys, len(fixtures)-1)

	// No key without a typed event.
	assert.Empty(t, read("credit_note.created", "d", []byte(`{"credit_note_id": "cn-1"}`)).EventKey())
	assert.Empty(t, (&webhooks.Delivery{}).EventKey())
}

func TestRefusalStatusClassifiesReadErrors(t *testing.T) {
	v, err := webhooks.NewVerifier(testSecret, webhooks.WithMaxBodyBytes(1<<10), webhooks.WithoutTimestampCheck())
	require.NoError(t, err)
	body := []byte(`{"invoice_id": "i-1", "invoice_number": "INV-1", "client_id": "c-1", "sent_at": "2026-11-01T00:00:00Z"}`)
	signed := func(mutate func(*http.Request)) *http.Request {
		r, err := webhooks.TestDelivery{Secret: testSecret, Type: webhooks.EventInvoiceSent, Body: body}.Request("/hooks")
		require.NoError(t, err)
		mutate(r)
		return r
	}
	for _, tc := range []struct {
		name       string
		req        *http.Request
		status     int
		unverified bool
	}{
		{"no signature", signed(func(r *http.Request) { r.Header.Del(webhooks.HeaderSignature) }), 401, true},
		{"no timestamp", signed(func(r *http.Request) { r.Header.Del(webhooks.HeaderTimestamp) }), 401, true},
		{"wrong signature", signed(func(r *http.Request) { r.Header.Set(webhooks.HeaderSignature, "sha256="+strings.Repeat("0", 64)) }), 401, true},
		{"no event header", signed(func(r *http.Request) { r.Header.Del(webhooks.HeaderEvent) }), 400, false},
		{"no delivery header", signed(func(r *http.Request) { r.Header.Del(webhooks.HeaderDelivery) }), 400, false},
		{"body of another event", signed(func(r *http.Request) { r.Header.Set(webhooks.HeaderEvent, string(webhooks.EventBillCreated)) }), 400, false},
		{"too large", signed(func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(strings.Repeat(" ", 2<<10)))
			r.ContentLength = -1
		}), 413, false},
	} {
		_, err := v.Read(tc.req)
		require.Error(t, err, tc.name)
		assert.Equal(t, tc.status, webhooks.RefusalStatus(err), tc.name)
		assert.Equal(t, tc.unverified, errors.Is(err, webhooks.ErrNotVerified), tc.name)
	}
	require.ErrorIs(t, v.Verify(http.Header{}, body), webhooks.ErrMissingHeader, "the specific sentinel still matches")
	require.ErrorIs(t, v.Verify(http.Header{}, body), webhooks.ErrNotVerified)
}
