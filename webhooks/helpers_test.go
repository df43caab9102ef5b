package webhooks_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// testSecret is a signing secret in the service's format (64 hex characters),
// made with `openssl rand -hex 32` for these tests only.
const testSecret = "248dc250456cf874a398a6eb149d1ba97a83a8037aceca937f2955a4354c900b"

// testTimestamp is the signing time of the known-answer vectors:
// 2026-03-05T09:14:21Z.
const testTimestamp = "1772702061"

var testNow = time.Unix(1772702061, 0)

// hmacSignature computes the signature header for ts and body directly with
// crypto/hmac, independently of the package.
func hmacSignature(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// signedHeader returns the four delivery headers for body, signed at ts with
// secret by hmacSignature.
func signedHeader(secret, ts string, eventType webhooks.EventType, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Service-Event", string(eventType))
	h.Set("X-Service-Delivery", "dlv_01HQ7Z3K8M2N4P6R8T0V")
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Signature", hmacSignature(secret, ts, body))
	return h
}

// signedRequest returns a POST carrying body and the headers of signedHeader.
func signedRequest(secret, ts string, eventType webhooks.EventType, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	r.Header = signedHeader(secret, ts, eventType, body)
	return r
}

// newVerifier returns a Verifier for testSecret whose clock is testNow.
func newVerifier(t testing.TB, opts ...webhooks.Option) *webhooks.Verifier {
	t.Helper()
	return newVerifierFor(t, testSecret, opts...)
}

// newVerifierFor returns a Verifier for secret whose clock is testNow.
func newVerifierFor(t testing.TB, secret string, opts ...webhooks.Option) *webhooks.Verifier {
	t.Helper()
	v, err := webhooks.NewVerifier(secret, append([]webhooks.Option{webhooks.WithClock(func() time.Time { return testNow })}, opts...)...)
	require.NoError(t, err)
	return v
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// fixtureNames returns the names of the JSON files of testdata/.
func fixtureNames(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(tb, err)
	names := make([]string, len(files))
	for i, file := range files {
		names[i] = filepath.Base(file)
	}
	return names
}

// fixtures maps every fixture file to the event type it is a body of.
var fixtures = map[string]webhooks.EventType{
	"invoice.created.json":           webhooks.EventInvoiceCreated,
	"invoice.sent.json":              webhooks.EventInvoiceSent,
	"invoice.updated.json":           webhooks.EventInvoiceUpdated,
	"invoice.paid.json":              webhooks.EventInvoicePaid,
	"bill.created.json":              webhooks.EventBillCreated,
	"bill.approved.json":             webhooks.EventBillApproved,
	"contact.created.json":           webhooks.EventContactCreated,
	"payment.received.json":          webhooks.EventPaymentReceived,
	"payment.received.minimal.json":  webhooks.EventPaymentReceived,
	"quote.created.json":             webhooks.EventQuoteCreated,
	"quote.sent.json":                webhooks.EventQuoteSent,
	"quote.viewed.json":              webhooks.EventQuoteViewed,
	"quote.accepted.json":            webhooks.EventQuoteAccepted,
	"quote.accepted.no_invoice.json": webhooks.EventQuoteAccepted,
	"quote.unaccepted.json":          webhooks.EventQuoteUnaccepted,
	"test.json":                      webhooks.EventTest,
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func ptr[T any](v T) *T { return &v }

func datetime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// mustParse parses body as eventType, failing t if Parse refuses it.
func mustParse(t testing.TB, eventType webhooks.EventType, body []byte) webhooks.Event {
	t.Helper()
	e, err := webhooks.Parse(eventType, body)
	require.NoError(t, err)
	return e
}

// parseAs parses body as an event of type typ, which must give a *T.
func parseAs[T any](t *testing.T, typ webhooks.EventType, body []byte) *T {
	t.Helper()
	e, err := webhooks.Parse(typ, body)
	require.NoError(t, err)
	v, ok := any(e).(*T)
	require.True(t, ok, "%s parses to %T", typ, e)
	return v
}
