package invoicingtest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/cliflag"
	"github.com/invoicing-api/invoicing-go/internal/codec"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// controlPath is where the control endpoints live under BasePath: a path
// the API never uses.
const controlPath = "/_mock"

// WithControl makes the server answer the mock-only control endpoints under
// BasePath + "/_mock" (srv.URL + "/_mock/..."), through which programs that
// cannot call the helpers (the CLI's `invoicing mock`, tools in other
// languages) make the same changes: send, pay and void invoices, send, view,
// accept and decline quotes, approve bills, manage webhook endpoints and
// advance the clock. They need a key with every scope (FullKey). Without
// this option those paths answer 404 like any unknown path, as the real
// service does. See "Control endpoints" in the package documentation.
func WithControl() Option { return func(cfg *config) { cfg.control = true } }

// controlRoutes adds the control endpoints (paths relative to controlPath).
func (s *Server) controlRoutes(add func(method, path string, h http.HandlerFunc)) {
	add("GET", "", s.controlInfo)
	add("GET", "/events", s.controlEvents)
	add("POST", "/webhooks", s.controlAddWebhook)
	add("DELETE", "/webhooks/{id}", s.controlDeleteWebhook)
	add("POST", "/webhooks/{id}/secret", s.controlWebhookSecret)
	add("POST", "/webhooks/{id}/test", s.controlTestWebhook)

	add("PATCH", "/invoices/{id}", s.controlUpdateInvoice)
	add("POST", "/invoices/{id}/send", s.invoiceAction(s.sendInvoice))
	add("POST", "/invoices/{id}/void", s.invoiceAction(func(id string) ([]event, error) {
		return s.updateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})
	}))
	add("POST", "/invoices/{id}/payments", s.controlPayment)

	add("POST", "/quotes/{id}/send", s.quoteAction(func(id string) ([]event, error) { return s.sendQuote(id, nil) }))
	add("POST", "/quotes/{id}/view", s.quoteAction(func(id string) ([]event, error) { return s.viewQuote(id, nil) }))
	add("POST", "/quotes/{id}/accept", s.controlAcceptQuote)
	add("POST", "/quotes/{id}/decline", s.quoteAction(func(id string) ([]event, error) {
		return nil, s.closeQuote(id, invoicing.QuoteStatusDeclined)
	}))
	add("POST", "/quotes/{id}/unaccept", s.quoteAction(s.unacceptQuote))

	add("POST", "/bills/{id}/approve", s.action("Bill", func(id string, a *ControlResult) ([]event, error) {
		a.BillID = id
		return s.approveBill(id)
	}))

	add("POST", "/clock/advance", s.controlAdvance)
}

// controlInfo serves GET /_mock: the server's clock and webhook endpoints.
func (s *Server) controlInfo(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	now := controlTime(s.now())
	info := ControlInfo{
		Mock: true, BusinessID: s.businessID, Business: s.name, Now: now, Today: invoicing.DateOf(now),
		Webhooks: make([]ControlWebhook, 0, len(s.endpoints)), LastEventSeq: len(s.events),
	}
	for _, ep := range s.endpoints {
		info.Webhooks = append(info.Webhooks, ep.view(false))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, info)
}

// controlTime is a time as the control endpoints show it: to the second,
// in UTC.
func controlTime(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// view shows the endpoint, with its secret when withSecret. The caller
// holds s.mu.
func (ep *WebhookEndpoint) view(withSecret bool) ControlWebhook {
	v := ControlWebhook{ID: ep.id, URL: ep.url, Paused: ep.paused}
	if ep.events != nil {
		v.Events = []webhooks.EventType{}
		for _, e := range AllEvents() {
			if ep.events[e] {
				v.Events = append(v.Events, e)
			}
		}
	}
	if withSecret {
		v.Secret = ep.secret
	}
	return v
}

// controlEvents serves GET /_mock/events?after=N: the events raised after
// the Nth (all of them without after), oldest first, each with its body and
// deliveries. Programs read last_event_seq (here or from GET /_mock) before
// an API call to find the events it raised afterwards.
func (s *Server) controlEvents(w http.ResponseWriter, r *http.Request) {
	after := 0
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, badRequest("after must be an integer of at least 0"))
			return
		}
		after = n
	}
	s.mu.Lock()
	feed := ControlEvents{Events: []ControlEvent{}, LastEventSeq: len(s.events)}
	for _, e := range s.events[min(after, len(s.events)):] {
		rep := e.report()
		feed.Events = append(feed.Events, ControlEvent{
			Seq: e.seq, Type: e.name, At: controlTime(e.at), Body: jsontext.Value(e.body), Deliveries: rep.Deliveries,
		})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, feed)
}

// controlAddWebhook serves POST /_mock/webhooks: 201 with the new endpoint
// and its secret (the one given, else the business's webhook secret, else a
// new one).
func (s *Server) controlAddWebhook(w http.ResponseWriter, r *http.Request) {
	var req ControlWebhookRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := checkWebhookURL(req.URL); err != nil {
		writeError(w, err)
		return
	}
	events, err := checkEvents(req.Events)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := checkSecret(req.Secret); err != nil {
		writeError(w, err)
		return
	}
	secret := req.Secret
	if secret == "" {
		secret = s.newEndpointSecret()
	}
	var set map[webhooks.EventType]bool
	if events != nil {
		set = subscription("POST /_mock/webhooks", events)
	}
	ep := s.addEndpoint(req.URL, set, secret)
	s.mu.Lock()
	v := ep.view(true)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, v)
}

// checkWebhookURL requires an absolute http or https URL with a host.
func checkWebhookURL(raw string) *apiError {
	if raw == "" {
		return invalid("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("url must be an absolute http:// or https:// URL, got %q", raw)
	}
	return nil
}

// checkEvents checks the events of a webhook request: nil (every event)
// when none are given, a 422 naming an event outside AllEvents (and the one
// meant, if one is close, as the CLI suggests it) or an empty list.
func checkEvents(events []webhooks.EventType) ([]webhooks.EventType, *apiError) {
	if events == nil {
		return nil, nil
	}
	if len(events) == 0 {
		return nil, invalid("events must name at least one event; leave it out to receive every event")
	}
	known := AllEvents()
	for _, e := range events {
		if !slices.Contains(known, e) {
			names := make([]string, len(known))
			for i, k := range known {
				names[i] = string(k)
			}
			return nil, invalid("unknown event %q%s; endpoints subscribe to %s", e, cliflag.DidYouMean(string(e), names), joinComma(known))
		}
	}
	return events, nil
}

// checkSecret returns a 422 unless secret is "" (none given) or 64
// hexadecimal characters.
func checkSecret(secret string) *apiError {
	if secret != "" && !validSecret(secret) {
		return invalid("secret must be %d hexadecimal characters, got %d characters", secretLength, len(secret))
	}
	return nil
}

// endpointFor finds a webhook endpoint (not deleted) by the path's id, or
// writes a 404. The caller must not hold s.mu.
func (s *Server) endpointFor(w http.ResponseWriter, r *http.Request) *WebhookEndpoint {
	id := r.PathValue("id")
	s.mu.Lock()
	i := slices.IndexFunc(s.endpoints, func(ep *WebhookEndpoint) bool { return ep.id == id })
	var ep *WebhookEndpoint
	if i >= 0 {
		ep = s.endpoints[i]
	}
	s.mu.Unlock()
	if ep == nil {
		writeError(w, notFound("Webhook endpoint"))
	}
	return ep
}

// controlWebhookSecret serves POST /_mock/webhooks/{id}/secret: the
// endpoint signs with the secret given (else a new one) from now on, and
// the old one is invalid at once, as with RotateSecret. The answer shows
// both, so that a program that changed it for a while can put it back.
func (s *Server) controlWebhookSecret(w http.ResponseWriter, r *http.Request) {
	var req ControlWebhookRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := checkSecret(req.Secret); err != nil {
		writeError(w, err)
		return
	}
	secret := req.Secret
	if secret == "" {
		secret = randomHex(32)
	}
	ep := s.endpointFor(w, r)
	if ep == nil {
		return
	}
	s.mu.Lock()
	previous := ep.secret
	ep.secret = secret
	v := ep.view(true)
	s.mu.Unlock()
	v.PreviousSecret = previous
	writeJSON(w, http.StatusOK, v)
}

// controlDeleteWebhook serves DELETE /_mock/webhooks/{id}: 204.
func (s *Server) controlDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := decodeOptionalBody(r, &struct{}{}); err != nil {
		writeError(w, err)
		return
	}
	if ep := s.endpointFor(w, r); ep != nil {
		ep.Delete()
		w.WriteHeader(http.StatusNoContent)
	}
}

// controlTestWebhook serves POST /_mock/webhooks/{id}/test: one test
// delivery, tried once; 409 when the endpoint is paused.
func (s *Server) controlTestWebhook(w http.ResponseWriter, r *http.Request) {
	if err := decodeOptionalBody(r, &struct{}{}); err != nil {
		writeError(w, err)
		return
	}
	ep := s.endpointFor(w, r)
	if ep == nil {
		return
	}
	d, err := ep.test()
	if err != nil {
		writeError(w, actionError("Webhook endpoint", err))
		return
	}
	s.mu.Lock()
	rep := ControlEventReport{Type: webhooks.EventTest, Deliveries: []ControlDelivery{d.report(ep)}}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, ControlResult{Events: []ControlEventReport{rep}})
}

// action serves a control action that takes no body (any JSON object is
// ignored) on the record {id} of the kind what (Invoice, Quote, Bill):
// change, under s.mu, makes the change and fills in the answer's ids; the
// events it raised are published and the answer is 200 with them. A
// helper's error becomes a 404, 409 or 422 (actionError).
func (s *Server) action(what string, change func(id string, a *ControlResult) ([]event, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := decodeOptionalBody(r, &struct{}{}); err != nil {
			writeError(w, err)
			return
		}
		id := r.PathValue("id")
		s.runAction(w, what, http.StatusOK, func(a *ControlResult) ([]event, error) { return change(id, a) })
	}
}

// invoiceAction is an action on an invoice, answering its invoice_id.
func (s *Server) invoiceAction(change func(id string) ([]event, error)) http.HandlerFunc {
	return s.action("Invoice", func(id string, a *ControlResult) ([]event, error) {
		a.InvoiceID = id
		return change(id)
	})
}

// quoteAction is an action on a quote, answering its quote_id.
func (s *Server) quoteAction(change func(id string) ([]event, error)) http.HandlerFunc {
	return s.action("Quote", func(id string, a *ControlResult) ([]event, error) {
		a.QuoteID = id
		return change(id)
	})
}

// actionError turns a helper's error into a control answer: 404 "<what>
// not found" for ErrNotFound, 409 when the record's status (or the
// endpoint's) does not allow the action, 422 for a value the helper
// refused. The detail is the error's text without the package prefix.
func actionError(what string, err error) *apiError {
	detail := strings.TrimPrefix(err.Error(), "invoicingtest: ")
	switch {
	case errors.Is(err, ErrNotFound):
		return notFound(what)
	case errors.Is(err, ErrInvalidState), errors.Is(err, ErrPaused), errors.Is(err, ErrDeleted):
		return &apiError{http.StatusConflict, detail}
	}
	return invalid("%s", detail)
}

// controlUpdateInvoice serves PATCH /_mock/invoices/{id} {"notes"?,
// "due_date"?}: UpdateInvoice; 422 when neither is given.
func (s *Server) controlUpdateInvoice(w http.ResponseWriter, r *http.Request) {
	var req invoiceChangeBody
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	var u InvoiceUpdate
	u.Notes = req.Notes
	if req.DueDate != nil {
		d, err := parseDate(*req.DueDate)
		if err != nil {
			writeError(w, invalid("due_date must be a date in YYYY-MM-DD form"))
			return
		}
		u.DueDate = d
	}
	if u.Notes == nil && u.DueDate.IsZero() {
		writeError(w, invalid("give notes, due_date or both"))
		return
	}
	s.runAction(w, "Invoice", http.StatusOK, func(a *ControlResult) ([]event, error) {
		a.InvoiceID = r.PathValue("id")
		return s.updateInvoice(a.InvoiceID, u)
	})
}

// runAction runs change under s.mu, publishes the events it raised and
// answers status with them, or the error (actionError).
func (s *Server) runAction(w http.ResponseWriter, what string, status int, change func(a *ControlResult) ([]event, error)) {
	var a ControlResult
	events, err := s.act(func() ([]event, error) { return change(&a) })
	if err != nil {
		writeError(w, actionError(what, err))
		return
	}
	a.Events = events
	writeJSON(w, status, a)
}

// looseDecimal is a decimal given as a JSON number or as a string holding
// one ("12.50"). Its text is checked by the handler (422), not while
// decoding; another JSON type is a 400.
type looseDecimal struct {
	text string
	set  bool
}

// MarshalJSONTo writes the text as a JSON number.
func (d looseDecimal) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(d.text))
}

// UnmarshalJSONFrom keeps the number's text or the string's content; null
// leaves it unset.
func (d *looseDecimal) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 'n':
		*d = looseDecimal{}
	case '0':
		*d = looseDecimal{text: string(v), set: true}
	case '"':
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return err
		}
		*d = looseDecimal{text: string(s), set: true}
	default:
		return errors.New("must be a decimal number or a string holding one")
	}
	return nil
}

// controlPayment serves POST /_mock/invoices/{id}/payments {"amount"?,
// "payment_method"?, "received_at"?}: RecordPayment, by default of the
// whole amount due, by bank transfer, now; 201.
func (s *Server) controlPayment(w http.ResponseWriter, r *http.Request) {
	var req paymentBody
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	p := Payment{Method: strings.TrimSpace(req.PaymentMethod)}
	if req.Amount.set {
		amount, err := paymentAmount(req.Amount.text)
		if err != nil {
			writeError(w, err)
			return
		}
		p.Amount = amount
	}
	if req.ReceivedAt != "" {
		at, err := time.Parse(time.RFC3339, req.ReceivedAt)
		if err != nil {
			writeError(w, invalid("received_at must be an RFC 3339 datetime such as 2026-03-10T09:30:00Z"))
			return
		}
		p.ReceivedAt = at
	}
	s.runAction(w, "Invoice", http.StatusCreated, func(a *ControlResult) ([]event, error) {
		a.InvoiceID = r.PathValue("id")
		if !req.Amount.set {
			if inv := s.data.invoices.get(a.InvoiceID); inv != nil {
				p.Amount = inv.amountDue()
			}
		}
		var events []event
		var err error
		a.PaymentID, events, err = s.recordPayment(a.InvoiceID, p)
		return events, err
	})
}

// paymentAmount parses a payment amount: a decimal with at most two
// decimal places, within the bounds of request decimals. Whether it is
// positive and at most the amount due is RecordPayment's check.
func paymentAmount(text string) (decimal.Decimal, *apiError) {
	d, err := codec.ParseDecimal([]byte(text))
	if err != nil {
		return d, invalid("amount must be a decimal number such as 12.50, got %q", text)
	}
	if msg := checkDecimal("amount", d); msg != "" {
		return d, invalid("%s", msg)
	}
	if -d.Normalize().Exponent() > 2 {
		return d, invalid("amount must have at most 2 decimal places, got %s", text)
	}
	return d, nil
}

// controlAcceptQuote serves POST /_mock/quotes/{id}/accept
// {"accepted_by"?}: AcceptQuote, by the quote's first recipient through
// its share link when it was sent, else by staff; the answer names the
// invoice conversion made, if any.
func (s *Server) controlAcceptQuote(w http.ResponseWriter, r *http.Request) {
	var req acceptBody
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	s.runAction(w, "Quote", http.StatusOK, func(a *ControlResult) ([]event, error) {
		a.QuoteID = r.PathValue("id")
		q, err := s.quoteFor(a.QuoteID)
		if err != nil {
			return nil, err
		}
		res, events, err := s.acceptQuote(a.QuoteID, AcceptOptions{ByStaff: q.ShareToken == "", AcceptedBy: req.AcceptedBy})
		if err != nil {
			return nil, err
		}
		if inv := s.data.invoices.get(res.InvoiceID); inv != nil {
			a.InvoiceID, a.InvoiceNumber, a.InvoiceStatus = inv.ID, inv.Number, inv.statusOn(s.today())
		}
		return events, nil
	})
}

// maxAdvance is the furthest one clock advance may go.
const maxAdvance = 3650 * 24 * time.Hour

// controlAdvance serves POST /_mock/clock/advance {"by": "15d"}: it
// advances the server's clock (running the webhook retries that fall due),
// then expires the quotes past their valid_until (ExpireQuotes), in every
// business of a MultiServer, which share the clock, and reports the
// business's invoices that became overdue and quotes expired. 409 when the
// clock has no Advance method (SystemClock).
func (s *Server) controlAdvance(w http.ResponseWriter, r *http.Request) {
	var req advanceBody
	if err := decodeOptionalBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	by, err := parseAdvance(req.By)
	if err != nil {
		writeError(w, err)
		return
	}
	clock, ok := s.clock.(interface{ Advance(time.Duration) })
	if !ok {
		writeError(w, conflict("the server's clock cannot be advanced"))
		return
	}

	s.mu.Lock()
	wasOverdue := map[string]bool{}
	for _, id := range s.overdueInvoices() {
		wasOverdue[id] = true
	}
	s.mu.Unlock()

	clock.Advance(by) // runs due retries, which take s.mu
	for _, other := range s.peers {
		if other != s {
			other.ExpireQuotes()
		}
	}

	s.mu.Lock()
	answer := ControlAdvance{OverdueInvoices: []string{}, ExpiredQuotes: []string{}}
	for _, id := range s.overdueInvoices() {
		if !wasOverdue[id] {
			answer.OverdueInvoices = append(answer.OverdueInvoices, id)
		}
	}
	answer.ExpiredQuotes = append(answer.ExpiredQuotes, s.expireQuotes()...)
	answer.Now = controlTime(s.now())
	answer.Today = invoicing.DateOf(answer.Now)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, answer)
}

// overdueInvoices returns the ids of the invoices that read overdue today,
// in creation order. The caller holds s.mu.
func (s *Server) overdueInvoices() []string {
	today := s.today()
	var ids []string
	for _, inv := range s.data.invoices.all() {
		if inv.statusOn(today) == invoicing.InvoiceStatusOverdue {
			ids = append(ids, inv.ID)
		}
	}
	return ids
}

// parseAdvance reads the "by" of a clock advance: a Go duration ("36h",
// "90m"), optionally preceded by a whole number of days ("15d", "1d12h");
// more than zero and at most 3650 days, else a 422.
func parseAdvance(by string) (time.Duration, *apiError) {
	bad := invalid("by must be a duration such as 36h, 15d or 1d12h, got %q", by)
	if by == "" {
		return 0, invalid("by is required: a duration such as 36h, 15d or 1d12h")
	}
	rest, days := by, time.Duration(0)
	if before, after, found := strings.Cut(by, "d"); found {
		n, err := strconv.ParseUint(before, 10, 32)
		if err != nil || strings.HasPrefix(after, "-") || strings.HasPrefix(after, "+") {
			return 0, bad
		}
		if n > uint64(maxAdvance/(24*time.Hour)) {
			return 0, invalid("by must be at most 3650 days")
		}
		days, rest = time.Duration(n)*24*time.Hour, after
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, bad
		}
	}
	switch total := days + d; {
	case d > maxAdvance || total > maxAdvance:
		return 0, invalid("by must be at most 3650 days")
	case total <= 0:
		return 0, invalid("by must be more than 0")
	default:
		return total, nil
	}
}
