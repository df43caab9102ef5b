package invoicingtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/codec"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The control protocol: the bodies the control endpoints take and answer
// (see "Control endpoints" in the package documentation), each written by
// one type that the server and ControlClient share.

// ControlInfo is the answer of GET /_mock (ControlClient.Info).
type ControlInfo struct {
	// Mock is true: the answer is a fake's.
	Mock bool `json:"mock"`
	// BusinessID is the business's id (Server.BusinessID): SeedBusinessID,
	// or on a MultiServer that of the business the key belongs to.
	BusinessID string `json:"business_id"`
	// Business is the name of that business on a MultiServer (the
	// business the request's key chose); "" on a server made by NewServer.
	Business string `json:"business,omitempty"`
	// Now is the time on the server's Clock, to the second, in UTC.
	Now time.Time `json:"now"`
	// Today is the business's date on that clock (in UTC).
	Today invoicing.Date `json:"today"`
	// Webhooks are the webhook endpoints, in the order they were added,
	// without their secrets.
	Webhooks []ControlWebhook `json:"webhooks"`
	// LastEventSeq numbers the last event the server raised (0: none yet);
	// ControlClient.Events(ctx, n) lists the events raised after the nth.
	LastEventSeq int `json:"last_event_seq"`
}

// ControlWebhook is a webhook endpoint as the control endpoints show it.
type ControlWebhook struct {
	// ID identifies the endpoint (WebhookEndpoint.ID).
	ID string `json:"id"`
	// URL is where its deliveries go.
	URL string `json:"url"`
	// Events are the event types it receives, in the order of AllEvents;
	// nil when it receives every event.
	Events []webhooks.EventType `json:"events"`
	// Paused is true while the endpoint receives nothing.
	Paused bool `json:"paused"`
	// Secret is the signing secret, shown only by the answers that set it
	// (AddWebhook, SetWebhookSecret); "" elsewhere.
	Secret string `json:"secret,omitempty"`
	// PreviousSecret is the secret SetWebhookSecret replaced, so that a
	// program that changed it for a while can put it back; "" elsewhere.
	PreviousSecret string `json:"previous_secret,omitempty"`
}

// Subscribed reports whether the endpoint receives the event type.
func (w *ControlWebhook) Subscribed(event webhooks.EventType) bool {
	return w.Events == nil || slices.Contains(w.Events, event)
}

// ControlWebhookRequest is the body of POST /_mock/webhooks
// (ControlClient.AddWebhook).
type ControlWebhookRequest struct {
	// URL is the endpoint's destination, an absolute http or https URL.
	URL string `json:"url,omitzero"`
	// Events are the event types it receives, among AllEvents; nil for
	// every event (an empty list is refused).
	Events []webhooks.EventType `json:"events,omitzero"`
	// Secret is the signing secret, 64 hexadecimal characters; "" for a new
	// random one, or in AddWebhook for the business's webhook secret
	// (Server.SetWebhookSecret) when it has one.
	Secret string `json:"secret,omitzero"`
}

// ControlEvents is the answer of GET /_mock/events (ControlClient.Events).
type ControlEvents struct {
	// Events are the events asked for, oldest first.
	Events []ControlEvent `json:"events"`
	// LastEventSeq numbers the last event the server raised.
	LastEventSeq int `json:"last_event_seq"`
}

// ControlEvent is an event the server raised, API calls included, with its
// payload and its deliveries as they stand.
type ControlEvent struct {
	// Seq numbers the event, from 1, in the order raised.
	Seq int `json:"seq"`
	// Type is the event type.
	Type webhooks.EventType `json:"type"`
	// At is when it was raised, on the server's Clock, to the second, in
	// UTC.
	At time.Time `json:"at"`
	// Body is the payload, as delivered.
	Body jsontext.Value `json:"body"`
	// Deliveries are its deliveries, one per endpoint that receives it.
	Deliveries []ControlDelivery `json:"deliveries"`
}

// ControlResult is the answer of a control action (ControlClient's
// SendInvoice, RecordPayment, AcceptQuote, ...): the records it touched
// and the events it raised, each with its deliveries, whose first attempts
// were made before the answer was written.
type ControlResult struct {
	// PaymentID is the payment RecordPayment recorded.
	PaymentID string `json:"payment_id,omitempty"`
	// InvoiceID is the invoice acted on, or the one AcceptQuote's
	// conversion made.
	InvoiceID string `json:"invoice_id,omitempty"`
	// QuoteID is the quote acted on.
	QuoteID string `json:"quote_id,omitempty"`
	// BillID is the bill acted on.
	BillID string `json:"bill_id,omitempty"`
	// InvoiceNumber and InvoiceStatus describe the invoice AcceptQuote's
	// conversion made; empty when it made none.
	InvoiceNumber string                  `json:"invoice_number,omitempty"`
	InvoiceStatus invoicing.InvoiceStatus `json:"invoice_status,omitempty"`
	// Events are the events raised, in order; empty for a change the
	// service documents no event for (DeclineQuote).
	Events []ControlEventReport `json:"events"`
}

// ControlEventReport is an event a control action raised, with its
// deliveries.
type ControlEventReport struct {
	// Type is the event type.
	Type webhooks.EventType `json:"type"`
	// Deliveries are its deliveries, one per endpoint that receives it
	// (none when no endpoint does).
	Deliveries []ControlDelivery `json:"deliveries"`
}

// ControlDelivery is a delivery as it stands: its status and the outcome of
// its latest attempt.
type ControlDelivery struct {
	// DeliveryID is the X-Service-Delivery id.
	DeliveryID string `json:"delivery_id"`
	// EndpointID and URL name the endpoint it goes to.
	EndpointID string `json:"endpoint_id"`
	URL        string `json:"url"`
	// Status is DeliveryPending (a retry is scheduled), DeliverySucceeded
	// or DeliveryFailed.
	Status string `json:"status"`
	// StatusCode is the receiver's answer to the latest attempt; 0 when no
	// response came (or no attempt was made yet).
	StatusCode int `json:"status_code"`
	// Error is why no response came; "" otherwise.
	Error string `json:"error,omitempty"`
}

// ControlAdvance is the answer of POST /_mock/clock/advance
// (ControlClient.AdvanceClock).
type ControlAdvance struct {
	// Now is the time on the server's Clock after the advance, to the
	// second, in UTC.
	Now time.Time `json:"now"`
	// Today is the business's date then.
	Today invoicing.Date `json:"today"`
	// OverdueInvoices are the invoices that read overdue now and did not
	// before.
	OverdueInvoices []string `json:"overdue_invoices"`
	// ExpiredQuotes are the quotes the advance expired.
	ExpiredQuotes []string `json:"expired_quotes"`
}

// invoiceChangeBody is the body of PATCH /_mock/invoices/{id}.
type invoiceChangeBody struct {
	Notes   *string `json:"notes,omitzero"`
	DueDate *string `json:"due_date,omitzero"` // YYYY-MM-DD
}

// paymentBody is the body of POST /_mock/invoices/{id}/payments.
type paymentBody struct {
	Amount        looseDecimal `json:"amount,omitzero"`
	PaymentMethod string       `json:"payment_method,omitzero"`
	ReceivedAt    string       `json:"received_at,omitzero"` // RFC 3339
}

// acceptBody is the body of POST /_mock/quotes/{id}/accept.
type acceptBody struct {
	AcceptedBy string `json:"accepted_by,omitzero"`
}

// advanceBody is the body of POST /_mock/clock/advance.
type advanceBody struct {
	By string `json:"by"`
}

// ErrNoControl is returned (wrapped) by ControlClient.Info when a 2xx answer
// is not the control endpoints': something other than a fake made
// WithControl answers at the base URL. (A fake without them, like the real
// service, answers 404: a *ControlError.)
var ErrNoControl = errors.New("invoicingtest: no control endpoints at this base URL")

// ControlError is a non-2xx answer of a control endpoint: its status and
// the text of its {"detail"} body (see "Control endpoints" in the package
// documentation for what each status means). Its message is written for
// the users of a mock: "the mock answered 409 Conflict: <detail>".
type ControlError struct {
	// StatusCode is the HTTP status, such as 409 for an action the
	// record's status does not allow.
	StatusCode int
	// Detail is the body's detail; "" when it had none.
	Detail string
}

func (e *ControlError) Error() string {
	s := fmt.Sprintf("the mock answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// ControlClient calls the control endpoints of a server made WithControl,
// for a program that cannot call the helpers: another process (the CLI's
// `invoicing trigger`, a test of a system that runs against `invoicing
// mock`). Its methods make the helpers' changes, whose events the fake then
// signs and delivers, and return the endpoints' answers decoded; a non-2xx
// answer is a *ControlError. It is safe for concurrent use.
type ControlClient struct {
	base, key string // base ends in controlPath
	hc        *http.Client
}

// NewControlClient returns a client of the control endpoints of the fake
// whose base URL (Server.URL, ending in /api/v1/external) is baseURL, sending
// key, which needs every scope (Server.FullKey), with hc (nil:
// http.DefaultClient). An action answers once the first attempt of every
// delivery of its events is made, which a receiver may take up to the 30
// seconds the service waits for: bound the calls with their context or
// with hc's Timeout.
func NewControlClient(baseURL, key string, hc *http.Client) *ControlClient {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &ControlClient{base: strings.TrimRight(baseURL, "/") + controlPath, key: key, hc: hc}
}

// Info reads the server's clock, webhook endpoints and last event number
// (GET /_mock). A 2xx answer that is not a fake's is an error wrapping
// ErrNoControl.
func (c *ControlClient) Info(ctx context.Context) (*ControlInfo, error) {
	info, err := controlCall[ControlInfo](ctx, c, http.MethodGet, "", nil)
	if err == nil && !info.Mock {
		err = fmt.Errorf("%w: its answer to GET %s lacks \"mock\": true", ErrNoControl, controlPath)
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

// Events lists the events raised after the nth (all of them for 0), oldest
// first, with their bodies and deliveries (GET /_mock/events?after=n). Read
// ControlInfo.LastEventSeq before a change to find the events it raised.
func (c *ControlClient) Events(ctx context.Context, after int) (*ControlEvents, error) {
	return controlCall[ControlEvents](ctx, c, http.MethodGet, "/events?after="+strconv.Itoa(after), nil)
}

// AddWebhook adds a webhook endpoint (POST /_mock/webhooks) and returns it
// with its secret.
func (c *ControlClient) AddWebhook(ctx context.Context, w ControlWebhookRequest) (*ControlWebhook, error) {
	return controlCall[ControlWebhook](ctx, c, http.MethodPost, "/webhooks", w)
}

// SetWebhookSecret makes the endpoint sign with secret from now on (a new
// random one when secret is ""), the old one invalid at once, as
// WebhookEndpoint.RotateSecret does (POST /_mock/webhooks/{id}/secret). It
// returns the endpoint with its secret and the one replaced
// (PreviousSecret).
func (c *ControlClient) SetWebhookSecret(ctx context.Context, id, secret string) (*ControlWebhook, error) {
	return controlCall[ControlWebhook](ctx, c, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/secret", ControlWebhookRequest{Secret: secret})
}

// DeleteWebhook deletes the endpoint (DELETE /_mock/webhooks/{id}).
func (c *ControlClient) DeleteWebhook(ctx context.Context, id string) error {
	_, err := controlCall[struct{}](ctx, c, http.MethodDelete, "/webhooks/"+url.PathEscape(id), nil)
	return err
}

// TestWebhook sends the endpoint a test delivery, tried once (POST
// /_mock/webhooks/{id}/test), as WebhookEndpoint.Test does.
func (c *ControlClient) TestWebhook(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/webhooks/"+url.PathEscape(id)+"/test", nil)
}

// SendInvoice sends the invoice, as Server.SendInvoice does (POST
// /_mock/invoices/{id}/send).
func (c *ControlClient) SendInvoice(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/invoices/"+url.PathEscape(id)+"/send", nil)
}

// UpdateInvoice changes the invoice's notes or due date, as
// Server.UpdateInvoice does (PATCH /_mock/invoices/{id}). The control
// endpoints set no status but voided (VoidInvoice): u.Status must be empty.
func (c *ControlClient) UpdateInvoice(ctx context.Context, id string, u InvoiceUpdate) (*ControlResult, error) {
	if u.Status != "" {
		return nil, fmt.Errorf("invoicingtest: ControlClient.UpdateInvoice sets no status (%s); VoidInvoice voids", u.Status)
	}
	body := invoiceChangeBody{Notes: u.Notes}
	if !u.DueDate.IsZero() {
		due := formatDate(dateOf(u.DueDate))
		body.DueDate = &due
	}
	return controlCall[ControlResult](ctx, c, http.MethodPatch, "/invoices/"+url.PathEscape(id), body)
}

// VoidInvoice voids the invoice, as Server.UpdateInvoice to voided does
// (POST /_mock/invoices/{id}/void).
func (c *ControlClient) VoidInvoice(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/invoices/"+url.PathEscape(id)+"/void", nil)
}

// RecordPayment allocates a payment to the invoice, as Server.RecordPayment
// does (POST /_mock/invoices/{id}/payments), except that a zero Amount pays
// the whole amount due. The amount may have at most two decimal places.
func (c *ControlClient) RecordPayment(ctx context.Context, id string, p Payment) (*ControlResult, error) {
	body := paymentBody{PaymentMethod: p.Method}
	if !p.Amount.IsZero() {
		body.Amount = looseDecimal{text: codec.FormatDecimal(p.Amount), set: true}
	}
	if !p.ReceivedAt.IsZero() {
		body.ReceivedAt = p.ReceivedAt.Format(time.RFC3339Nano)
	}
	return controlCall[ControlResult](ctx, c, http.MethodPost, "/invoices/"+url.PathEscape(id)+"/payments", body)
}

// SendQuote sends the quote to its client, as Server.SendQuote does
// without recipients (POST /_mock/quotes/{id}/send).
func (c *ControlClient) SendQuote(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/quotes/"+url.PathEscape(id)+"/send", nil)
}

// ViewQuote has the quote's first recipient view it, as Server.ViewQuote
// does (POST /_mock/quotes/{id}/view).
func (c *ControlClient) ViewQuote(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/quotes/"+url.PathEscape(id)+"/view", nil)
}

// AcceptQuote accepts the quote, as Server.AcceptQuote does (POST
// /_mock/quotes/{id}/accept): by its first recipient through the share link
// once it was sent, else by staff, recording acceptedBy as who accepted
// ("": the recipient's name, or Staff). The result names the invoice the
// conversion made, if any.
func (c *ControlClient) AcceptQuote(ctx context.Context, id, acceptedBy string) (*ControlResult, error) {
	return c.act(ctx, "/quotes/"+url.PathEscape(id)+"/accept", acceptBody{AcceptedBy: acceptedBy})
}

// DeclineQuote declines the quote, as Server.DeclineQuote does (POST
// /_mock/quotes/{id}/decline); no event fires.
func (c *ControlClient) DeclineQuote(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/quotes/"+url.PathEscape(id)+"/decline", nil)
}

// UnacceptQuote withdraws the quote's acceptance, as Server.UnacceptQuote
// does (POST /_mock/quotes/{id}/unaccept).
func (c *ControlClient) UnacceptQuote(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/quotes/"+url.PathEscape(id)+"/unaccept", nil)
}

// ApproveBill approves the bill, as Server.ApproveBill does (POST
// /_mock/bills/{id}/approve).
func (c *ControlClient) ApproveBill(ctx context.Context, id string) (*ControlResult, error) {
	return c.act(ctx, "/bills/"+url.PathEscape(id)+"/approve", nil)
}

// AdvanceClock advances the server's clock by by, a Go duration ("36h")
// optionally preceded by whole days ("15d", "1d12h"), making the webhook
// retries that fall due and expiring the quotes past valid_until (POST
// /_mock/clock/advance). A clock that cannot be advanced (SystemClock)
// answers 409, a malformed or out-of-range by 422.
func (c *ControlClient) AdvanceClock(ctx context.Context, by string) (*ControlAdvance, error) {
	return controlCall[ControlAdvance](ctx, c, http.MethodPost, "/clock/advance", advanceBody{By: by})
}

// act makes a control action: a POST of body (nil: none) to path.
func (c *ControlClient) act(ctx context.Context, path string, body any) (*ControlResult, error) {
	return controlCall[ControlResult](ctx, c, http.MethodPost, path, body)
}

// maxControlAnswer caps the answers read.
const maxControlAnswer = 16 << 20

// controlCall sends one control request (path after /_mock; body encoded
// as JSON unless nil) and decodes a 2xx answer into an A; a non-2xx answer
// is a *ControlError.
func controlCall[A any](ctx context.Context, c *ControlClient, method, path string, body any) (*A, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body, jsonopt.Encode)
		if err != nil {
			return nil, fmt.Errorf("invoicingtest: encoding %s %s%s: %w", method, controlPath, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("invoicingtest: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoicingtest: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer))
	if err != nil {
		return nil, fmt.Errorf("invoicingtest: reading the answer to %s %s%s: %w", method, controlPath, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e errorBody
		_ = json.Unmarshal(b, &e, jsonopt.Decode) // a body that is not {"detail"} leaves it empty
		return nil, &ControlError{StatusCode: resp.StatusCode, Detail: e.Detail}
	}
	answer := new(A)
	if len(bytes.TrimSpace(b)) == 0 && resp.StatusCode == http.StatusNoContent {
		return answer, nil
	}
	if err := json.Unmarshal(b, answer, jsonopt.Decode); err != nil {
		return nil, fmt.Errorf("%w: its answer to %s %s%s is not theirs: %w", ErrNoControl, method, controlPath, path, err)
	}
	return answer, nil
}
