package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const testSecret = "248dc250456cf874a398a6eb149d1ba97a83a8037aceca937f2955a4354c900b"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "webhooks", "testdata", name))
	require.NoError(t, err)
	return b
}

func delivery(secret string, eventType webhooks.EventType, id string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	ts, sig := webhooks.Sign(secret, time.Now(), body)
	r.Header.Set(webhooks.HeaderEvent, string(eventType))
	r.Header.Set(webhooks.HeaderDelivery, id)
	r.Header.Set(webhooks.HeaderTimestamp, ts)
	r.Header.Set(webhooks.HeaderSignature, sig)
	return r
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestHandlerPrintsOneLinePerEvent(t *testing.T) {
	var out bytes.Buffer
	h, err := newHandler(testSecret, &out, discard)
	require.NoError(t, err)

	for _, d := range []struct {
		file string
		typ  webhooks.EventType
		id   string
	}{
		{"quote.accepted.json", webhooks.EventQuoteAccepted, "d-1"},
		{"quote.accepted.json", webhooks.EventQuoteAccepted, "d-1"}, // repeat: acknowledged, not printed
		{"quote.accepted.no_invoice.json", webhooks.EventQuoteAccepted, "d-2"},
		{"payment.received.json", webhooks.EventPaymentReceived, "d-3"},
		{"payment.received.minimal.json", webhooks.EventPaymentReceived, "d-4"},
		{"invoice.created.json", webhooks.EventInvoiceCreated, "d-5"},
		{"contact.created.json", webhooks.EventContactCreated, "d-6"},
		{"test.json", webhooks.EventTest, "d-7"},
		{"test.json", "credit_note.created", "d-8"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, delivery(testSecret, d.typ, d.id, fixture(t, d.file)))
		require.Equal(t, http.StatusOK, w.Code, d.file)
	}
	want := []string{
		`quote.accepted delivery=d-1 quote=QU-0137 client="Harbour Lane Bakery Pty Ltd" status=accepted total="7120.34 AUD" accepted_by="Jane M. Citizen" invoice=INV-0412 invoice_status=awaiting_payment`,
		`quote.accepted delivery=d-2 quote=QU-0137 client="Harbour Lane Bakery Pty Ltd" status=accepted total="6053.34 AUD" accepted_by="Jane Citizen" invoice=none`,
		`payment.received delivery=d-3 payment=f2a9c4e7-0b3d-4e18-96c5-8d1a7f3b2e60 invoice_id=e5b3f1d2-9c84-4a7b-b6e0-2d1f8a3c5e97 invoice=INV-0412 amount=500.00 method=bank_transfer`,
		`payment.received delivery=d-4 payment=0c7e5a3b-9d1f-4b26-8e4a-f6b2c9d0a713 invoice_id=e5b3f1d2-9c84-4a7b-b6e0-2d1f8a3c5e97 amount=1012.50 method=card`,
		`invoice.created delivery=d-5 invoice=INV-0412 client=3f6c2a91-8b47-4e0d-a5c3-19d7e8f2b640 total=1375.00 status=awaiting_payment`,
		`contact.created delivery=d-6 contact=a41d7e2c-6b90-4f35-8e1a-c27b5d903f48 type=supplier name="Coastal Paper Supplies"`,
		`test delivery=d-7 business=b7e1c0a4-5d3f-4a8e-9c21-6f0e2d4b8a13 message="This is a test webhook from the invoicing service."`,
		`credit_note.created delivery=d-8 unknown_event_bytes=174`,
	}
	assert.Equal(t, strings.Join(want, "\n")+"\n", out.String())
}

func TestHandlerRefusesBadSignature(t *testing.T) {
	var out, logs bytes.Buffer
	h, err := newHandler(testSecret, &out, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, delivery("not the secret", webhooks.EventTest, "d-1", fixture(t, "test.json")))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Empty(t, out.String())
	assert.Contains(t, logs.String(), "signature mismatch")
	assert.NotContains(t, logs.String(), testSecret)
}

func TestNewHandlerRefusesEmptySecret(t *testing.T) {
	_, err := newHandler("", io.Discard, discard)
	require.ErrorIs(t, err, webhooks.ErrEmptySecret)
}

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.Buffer
	var logs testkit.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", testSecret, &out, slog.New(slog.NewTextHandler(&logs, nil))) }()

	// The listening address is logged once the listener is open.
	var url string
	require.Eventually(t, func() bool {
		_, rest, ok := strings.Cut(logs.String(), "url=")
		url, _, _ = strings.Cut(rest, "\n")
		return ok
	}, 5*time.Second, 10*time.Millisecond)

	r := delivery(testSecret, webhooks.EventTest, "d-1", fixture(t, "test.json"))
	req, err := http.NewRequest(http.MethodPost, url+"hooks", bytes.NewReader(fixture(t, "test.json")))
	require.NoError(t, err)
	req.Header = r.Header
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, out.String(), "test delivery=d-1 ")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}
