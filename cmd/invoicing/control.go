package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// The mock's control endpoints live under the API's base URL at this
// prefix, which the API never uses: the real service answers 404 there.
// They make the changes the API cannot (send, pay, void, accept, advance
// the clock), so that the events they raise are real.
const controlPrefix = "/_mock"

// controlTimeout bounds one control call. Deliveries are synchronous on
// the mock, and a receiver may take up to the 30 s the service allows for
// each of the events one action raises.
const controlTimeout = 2 * time.Minute

// errNotMock is the error (wrapped) of a base URL that is not a mock's.
var errNotMock = errors.New("not an invoicing mock")

// errNotMockAnswer is the error (wrapped) of a 2xx answer to a control
// call that is not the JSON the mock writes.
var errNotMockAnswer = errors.New("not what the mock writes")

// mockControl calls the control endpoints of the mock at base (an API base
// URL) with the API key key.
type mockControl struct {
	base, key string
	hc        *http.Client
	info      mockInfo
}

// mockInfo is what GET /_mock answers.
type mockInfo struct {
	Mock       bool              `json:"mock"`
	BusinessID string            `json:"business_id"`
	Now        time.Time         `json:"now"`
	Today      string            `json:"today"`
	Webhooks   []mockWebhookInfo `json:"webhooks"`
	// LastEventSeq numbers the last event the mock raised (0: none yet);
	// GET /_mock/events?after=N lists those after N.
	LastEventSeq int `json:"last_event_seq"`
}

// mockWebhookInfo is one webhook endpoint of the mock; Events is nil for
// every event. Secret is set only in the answer that created or rotated it.
type mockWebhookInfo struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Paused bool     `json:"paused"`
	Secret string   `json:"secret,omitempty"`
}

// subscribed reports whether the endpoint receives event.
func (w mockWebhookInfo) subscribed(event string) bool {
	if w.Events == nil {
		return true
	}
	for _, e := range w.Events {
		if e == event {
			return true
		}
	}
	return false
}

// actionResult is what a control action answers: the records it touched
// and the events it raised, each with its deliveries.
type actionResult struct {
	InvoiceID     string        `json:"invoice_id,omitempty"`
	InvoiceNumber string        `json:"invoice_number,omitempty"`
	InvoiceStatus string        `json:"invoice_status,omitempty"`
	QuoteID       string        `json:"quote_id,omitempty"`
	BillID        string        `json:"bill_id,omitempty"`
	PaymentID     string        `json:"payment_id,omitempty"`
	Events        []eventReport `json:"events"`
}

// eventReport is one event an action raised and its deliveries, whose
// first attempts were made before the action answered.
type eventReport struct {
	Type       string           `json:"type"`
	Deliveries []deliveryReport `json:"deliveries"`
}

// deliveryReport is one delivery of an event to an endpoint.
type deliveryReport struct {
	DeliveryID string `json:"delivery_id"`
	EndpointID string `json:"endpoint_id"`
	URL        string `json:"url"`
	Status     string `json:"status"`      // succeeded, pending (a retry is scheduled) or failed
	StatusCode int    `json:"status_code"` // 0 when no response came
	Error      string `json:"error,omitempty"`
}

// advanceResult is what POST /_mock/clock/advance answers.
type advanceResult struct {
	Now             time.Time `json:"now"`
	Today           string    `json:"today"`
	OverdueInvoices []string  `json:"overdue_invoices"`
	ExpiredQuotes   []string  `json:"expired_quotes"`
}

// controlError is an error answer of the mock (or of whatever answered).
type controlError struct {
	status int
	detail string
}

func (e *controlError) Error() string {
	if e.detail == "" {
		return fmt.Sprintf("the mock answered %d %s", e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("the mock answered %d %s: %s", e.status, http.StatusText(e.status), e.detail)
}

// probeMock returns a control client for the service the environment
// names when it is a mock, and an error wrapping errNotMock when it
// answers but is not one. Missing configuration is a usage error of cmd.
func (c *cli) probeMock(ctx context.Context, cmd string) (*mockControl, error) {
	// The same configuration, checked the same way, as the reads.
	if _, err := c.apiClient(cmd); err != nil {
		return nil, err
	}
	m := &mockControl{
		base: strings.TrimRight(c.getenv(envBaseURL), "/"),
		key:  c.getenv(envAPIKey),
		hc:   &http.Client{Timeout: controlTimeout},
	}
	err := m.call(ctx, http.MethodGet, "", nil, &m.info)
	var ce *controlError
	switch {
	case errors.As(err, &ce) && (ce.status == http.StatusUnauthorized || ce.status == http.StatusForbidden):
		// A mock with a wrong key, or a service that checks keys first.
		return nil, fmt.Errorf("%s: %s answered %d to the mock's control endpoint: if it is a mock, set %s to the full key it printed", cmd, m.base, ce.status, envAPIKey)
	case errors.As(err, &ce), errors.Is(err, errNotMockAnswer):
		return nil, fmt.Errorf("%s: %s is %w (%v)", cmd, m.base, errNotMock, err)
	case err != nil:
		return nil, fmt.Errorf("%s: cannot reach %s (%s): is the mock running? (%w)", cmd, m.base, envBaseURL, err)
	case !m.info.Mock:
		return nil, fmt.Errorf("%s: %s is %w", cmd, m.base, errNotMock)
	}
	return m, nil
}

// call sends one control request (path after the prefix, body encoded as
// JSON unless nil) and decodes a 2xx answer into out unless nil.
func (m *mockControl) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body, jsonopt.Encode)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+controlPrefix+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+m.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(b, &e, jsonopt.Decode)
		return &controlError{status: resp.StatusCode, detail: e.Detail}
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out, jsonopt.Decode); err != nil {
		return fmt.Errorf("the answer to %s %s is %w: %v", method, controlPrefix+path, errNotMockAnswer, err)
	}
	return nil
}
