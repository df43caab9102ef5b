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
			assert.Equal(t, expectedEvents[name], d.Event)
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
	assert.Equal(t, expectedEvents["payment.received.json"], d.Event)

	sig := header.Get(webhooks.HeaderSignature)
	last := "0"
	if strings.HasSuffix(sig, "0") {
		last = "1"
	}
	header.Set(webhooks.HeaderSignature, sig[:len(sig)-1]+last)
	_, err = v.ParseDelivery(header, body)
	require.ErrorIs(t, err, webhooks.ErrSignatureMismatch)
}
