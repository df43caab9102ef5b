package invoicingtest

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// QuoteConversion is the business's on-acceptance preference: how an
// accepted quote is turned into an invoice.
type QuoteConversion int

const (
	// ConvertToDraftInvoice is the preference "create draft invoice":
	// acceptance creates a draft invoice.
	ConvertToDraftInvoice QuoteConversion = iota
	// ConvertToAwaitingPaymentInvoice is the preference "send approved
	// invoice": acceptance creates an awaiting_payment invoice with a public
	// payment link (invoice_share_url).
	ConvertToAwaitingPaymentInvoice
	// ConversionFails makes auto-conversion fail: no invoice is created and
	// quote.accepted carries no invoice fields.
	ConversionFails
)

// SetQuoteConversion changes the business's on-acceptance rule.
func (s *Server) SetQuoteConversion(m QuoteConversion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conversion = m
}

// Recipient is a contact a quote is sent to, who may view or accept it.
type Recipient struct {
	// ContactID is the contact's id; it may be empty for a viewer who is
	// not a contact.
	ContactID string `json:"contact_id"`
	// Name is the person's name as shown in events.
	Name string `json:"name"`
	// Email is the person's email address as shown in events.
	Email string `json:"email"`
	// Type is "to" (the default) or "cc".
	Type string `json:"type"`
	// QuoteContactID identifies the recipient on the quote; SendQuote
	// assigns it.
	QuoteContactID string `json:"quote_contact_id"`
}

// QuoteLineOptions are the interactive options of a quote line, which the
// create endpoint cannot set.
type QuoteLineOptions struct {
	// Optional lets the client exclude the line when accepting.
	Optional bool
	// QuantityEditable lets the client choose the quantity when accepting.
	QuantityEditable bool
}

// SetQuoteLineOptions sets the interactive options of a line of a quote
// that is not accepted.
func (s *Server) SetQuoteLineOptions(quoteID, lineID string, o QuoteLineOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.quoteFor(quoteID)
	if err != nil {
		return err
	}
	if q.Status == invoicing.QuoteStatusAccepted {
		return fmt.Errorf("%w: quote %s is accepted", ErrInvalidState, q.Number)
	}
	for i := range q.Lines {
		if q.Lines[i].ID == lineID {
			q.Lines[i].Optional = o.Optional
			q.Lines[i].QuantityEditable = o.QuantityEditable
			return nil
		}
	}
	return fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.Number, lineID)
}

// SendQuote sends a draft or sent quote to recipients (by default the
// client, as "to"), giving it a customer share link; the quote becomes sent
// and quote.sent fires.
func (s *Server) SendQuote(quoteID string, recipients ...Recipient) error {
	_, err := s.act(func() ([]event, error) { return s.sendQuote(quoteID, recipients) })
	return err
}

// sendQuote sends the quote and returns the event to publish. The caller
// holds s.mu.
func (s *Server) sendQuote(quoteID string, recipients []Recipient) ([]event, error) {
	q, err := s.quoteFor(quoteID)
	if err == nil && q.Status != invoicing.QuoteStatusDraft && q.Status != invoicing.QuoteStatusSent {
		err = fmt.Errorf("%w: quote %s is %s", ErrInvalidState, q.Number, q.Status)
	}
	if err != nil {
		return nil, err
	}
	if len(recipients) == 0 {
		c := s.data.clients.get(q.ClientID)
		recipients = []Recipient{{ContactID: c.ID, Name: c.Name, Email: c.Email}}
	}
	q.Recipients = nil
	for _, r := range recipients {
		if r.Type == "" {
			r.Type = "to"
		}
		r.QuoteContactID = uuid.NewString()
		q.Recipients = append(q.Recipients, r)
	}
	if q.ShareToken == "" {
		q.ShareToken = randomHex(16)
	}
	now := s.now()
	q.Status = invoicing.QuoteStatusSent
	q.UpdatedAt = &now
	return []event{s.quoteEvent(webhooks.EventQuoteSent, q, jsonobj.Field{Key: "sent_at", Value: formatTime(now)})}, nil
}

// ViewQuote records that a recipient opened the quote's share link, which
// needs the quote to have been sent. viewer defaults to the first
// recipient. quote.viewed fires with viewed_at (this view), view_count
// (views so far, this one included), last_viewed_at (equal to viewed_at:
// the latest view is this one) and viewer. The status does not change.
func (s *Server) ViewQuote(quoteID string, viewer *Recipient) error {
	_, err := s.act(func() ([]event, error) { return s.viewQuote(quoteID, viewer) })
	return err
}

// viewQuote records the view and returns the event to publish. The caller
// holds s.mu.
func (s *Server) viewQuote(quoteID string, viewer *Recipient) ([]event, error) {
	q, err := s.quoteFor(quoteID)
	if err == nil && q.ShareToken == "" {
		err = fmt.Errorf("%w: quote %s has no share link yet; send it first", ErrInvalidState, q.Number)
	}
	if err != nil {
		return nil, err
	}
	v := q.Recipients[0]
	if viewer != nil {
		v = *viewer
		if v.Type == "" {
			v.Type = "to"
		}
	}
	now := s.now()
	q.ViewCount++
	q.LastViewedAt = &now
	ev := s.quoteEvent(webhooks.EventQuoteViewed, q,
		jsonobj.Field{Key: "viewed_at", Value: formatTime(now)},
		jsonobj.Field{Key: "view_count", Value: q.ViewCount},
		jsonobj.Field{Key: "last_viewed_at", Value: formatTime(now)},
		jsonobj.Field{Key: "viewer", Value: contactJSONForEvent(v)},
	)
	return []event{ev}, nil
}

// AcceptOptions describe how a quote is accepted.
type AcceptOptions struct {
	// ByStaff records acceptance by staff on the client's behalf:
	// quote.accepted then has no accepting_contact, and the quote needs no
	// share link. Otherwise a recipient accepts through the share link,
	// which needs the quote to have been sent.
	ByStaff bool
	// Contact is the recipient who accepts through the share link; default
	// the quote's first recipient. Ignored when ByStaff.
	Contact *Recipient
	// AcceptedBy is the name recorded at acceptance; default the accepting
	// contact's name, or "Staff" when ByStaff.
	AcceptedBy string
	// Comments and OrderNumber are the acceptance comments and the client's
	// order number.
	Comments    string
	OrderNumber string
	// Exclude lists the ids of optional lines the client left out.
	Exclude []string
	// Quantities maps the ids of quantity-editable lines to the quantities
	// the client chose.
	Quantities map[string]decimal.Decimal
}

// AcceptResult is what AcceptQuote did.
type AcceptResult struct {
	// InvoiceID and InvoiceNumber identify the invoice auto-conversion
	// created; empty when the business's rule is ConversionFails.
	InvoiceID     string
	InvoiceNumber string
}

// AcceptQuote accepts a draft or sent quote. The quote becomes accepted and
// shows only the accepted selection (excluded optional lines omitted, chosen
// quantities applied) in the API and in webhooks; unless the business's rule
// is ConversionFails an invoice with those lines is created (draft or
// awaiting_payment, see QuoteConversion). quote.accepted fires, then
// invoice.created for the new invoice.
func (s *Server) AcceptQuote(quoteID string, o AcceptOptions) (AcceptResult, error) {
	var res AcceptResult
	_, err := s.act(func() (events []event, err error) {
		res, events, err = s.acceptQuote(quoteID, o)
		return events, err
	})
	return res, err
}

// acceptQuote accepts the quote and returns what it did and the events to
// publish. The caller holds s.mu.
func (s *Server) acceptQuote(quoteID string, o AcceptOptions) (AcceptResult, []event, error) {
	q, err := s.quoteFor(quoteID)
	if err != nil {
		return AcceptResult{}, nil, err
	}
	if q.Status != invoicing.QuoteStatusDraft && q.Status != invoicing.QuoteStatusSent {
		return AcceptResult{}, nil, fmt.Errorf("%w: quote %s is %s; only draft or sent quotes can be accepted", ErrInvalidState, q.Number, q.Status)
	}
	if !o.ByStaff && q.ShareToken == "" {
		return AcceptResult{}, nil, fmt.Errorf("%w: quote %s has no share link; send it first or accept with ByStaff", ErrInvalidState, q.Number)
	}
	lines, selections, err := acceptedLines(q, o)
	if err != nil {
		return AcceptResult{}, nil, err
	}
	now := s.now()
	acc := &acceptance{
		Lines: lines, PreviousStatus: q.Status, ByStaff: o.ByStaff,
		AcceptedBy: o.AcceptedBy, AcceptedAt: now,
		Comments: o.Comments, OrderNumber: o.OrderNumber, Selections: selections,
	}
	if !o.ByStaff {
		c := q.Recipients[0]
		if o.Contact != nil {
			c = *o.Contact
		}
		acc.Contact = &c
		if acc.AcceptedBy == "" {
			acc.AcceptedBy = c.Name
		}
	} else if acc.AcceptedBy == "" {
		acc.AcceptedBy = "Staff"
	}
	q.Status = invoicing.QuoteStatusAccepted
	q.Acceptance = acc
	q.UpdatedAt = &now

	var inv *invoice
	if s.conversion != ConversionFails {
		inv = s.invoiceFromQuote(q)
		acc.InvoiceID = inv.ID
	}

	recipients := make([]jsonobj.Object, 0, len(q.Recipients))
	for _, r := range q.Recipients {
		recipients = append(recipients, recipientJSON(r))
	}
	extra := []jsonobj.Field{{Key: "recipients", Value: recipients}}
	if acc.Contact != nil {
		extra = append(extra, jsonobj.Field{Key: "accepting_contact", Value: contactJSONForEvent(*acc.Contact)})
	}
	extra = append(extra,
		jsonobj.Field{Key: "accepted_by", Value: acc.AcceptedBy},
		jsonobj.Field{Key: "accepted_at", Value: formatTime(now)},
		jsonobj.Field{Key: "acceptance_comments", Value: acc.Comments},
		jsonobj.Field{Key: "acceptance_order_number", Value: acc.OrderNumber},
		jsonobj.Field{Key: "interactive_selections", Value: selections},
	)
	var res AcceptResult
	if inv != nil {
		res = AcceptResult{InvoiceID: inv.ID, InvoiceNumber: inv.Number}
		extra = append(extra,
			jsonobj.Field{Key: "invoice_id", Value: inv.ID},
			jsonobj.Field{Key: "invoice_number", Value: inv.Number},
			jsonobj.Field{Key: "invoice_status", Value: inv.statusOn(s.today())},
			jsonobj.Field{Key: "invoice_admin_url", Value: s.root + "/app/invoices/" + inv.ID},
		)
		if inv.ShareToken != "" {
			extra = append(extra, jsonobj.Field{Key: "invoice_share_url", Value: s.root + "/pay/" + inv.ShareToken})
		}
	}
	events := []event{s.quoteEvent(webhooks.EventQuoteAccepted, q, extra...)}
	if inv != nil {
		events = append(events, s.invoiceEvent(webhooks.EventInvoiceCreated, inv))
	}
	return res, events, nil
}

// acceptedLines applies the client's choices to the offered lines and
// returns the accepted lines and the raw selection map
// (interactive_selections). The map has one key, "section-0" (the fake's
// quotes have a single section and no packages), mapping each optional or
// quantity-editable line id to {"included": bool, "quantity": "n"}.
func acceptedLines(q *quote, o AcceptOptions) ([]line, map[string]any, error) {
	byID := map[string]line{}
	for _, l := range q.Lines {
		byID[l.ID] = l
	}
	excluded := map[string]bool{}
	for _, id := range o.Exclude {
		l, ok := byID[id]
		if !ok {
			return nil, nil, fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.Number, id)
		}
		if !l.Optional {
			return nil, nil, fmt.Errorf("%w: line %s of quote %s is not optional", ErrInvalidState, id, q.Number)
		}
		excluded[id] = true
	}
	ids := make([]string, 0, len(o.Quantities))
	for id := range o.Quantities {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		l, ok := byID[id]
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.Number, id)
		case !l.QuantityEditable:
			return nil, nil, fmt.Errorf("%w: the quantity of line %s of quote %s is not editable", ErrInvalidState, id, q.Number)
		case !o.Quantities[id].IsPositive():
			return nil, nil, fmt.Errorf("invoicingtest: accepted quantity of line %s must be greater than 0", id)
		}
	}
	var lines []line
	section := map[string]any{}
	for _, l := range q.Lines {
		if qty, ok := o.Quantities[l.ID]; ok {
			l = l.withQuantity(qty)
		}
		if l.Optional || l.QuantityEditable {
			section[l.ID] = map[string]any{"included": !excluded[l.ID], "quantity": numberText(l.Quantity)}
		}
		if !excluded[l.ID] {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, nil, fmt.Errorf("%w: every line of quote %s would be excluded", ErrInvalidState, q.Number)
	}
	return lines, map[string]any{"section-0": section}, nil
}

// invoiceFromQuote creates the invoice auto-conversion makes from an
// accepted quote: same client and currency, the accepted lines (new line
// ids), issued today, due after the default terms. The caller holds s.mu.
func (s *Server) invoiceFromQuote(q *quote) *invoice {
	lines := make([]line, len(q.Acceptance.Lines))
	for i, l := range q.Acceptance.Lines {
		l.ID = uuid.NewString()
		l.Optional, l.QuantityEditable = false, false
		lines[i] = l
	}
	today := s.today()
	inv := &invoice{
		ID: uuid.NewString(), Number: s.nextInvoiceNumber(), ClientID: q.ClientID,
		Status: invoicing.InvoiceStatusDraft, IssueDate: date(today), DueDate: date(today.AddDate(0, 0, defaultTermsDays)),
		Currency: q.Currency, Lines: lines, CreatedAt: s.now(),
	}
	if s.conversion == ConvertToAwaitingPaymentInvoice {
		inv.Status = invoicing.InvoiceStatusAwaitingPayment
		inv.ShareToken = randomHex(16)
	}
	s.data.invoices.add(inv.ID, inv)
	return inv
}

// UnacceptQuote withdraws the acceptance of an accepted quote (undo
// acceptance). The quote returns to the status it had before acceptance
// (draft or sent) and to its offered lines; the invoice conversion created
// is kept. quote.unaccepted fires with previous_status "accepted",
// unaccepted_at and previous_acceptance, an object with accepted_by,
// accepted_at, acceptance_comments, acceptance_order_number,
// accepting_contact (when a recipient accepted), interactive_selections
// and invoice_id (when an invoice was created).
func (s *Server) UnacceptQuote(quoteID string) error {
	_, err := s.act(func() ([]event, error) { return s.unacceptQuote(quoteID) })
	return err
}

// unacceptQuote withdraws the acceptance and returns the event to publish.
// The caller holds s.mu.
func (s *Server) unacceptQuote(quoteID string) ([]event, error) {
	q, err := s.quoteFor(quoteID)
	if err == nil && (q.Status != invoicing.QuoteStatusAccepted || q.Acceptance == nil) {
		err = fmt.Errorf("%w: quote %s is %s, not accepted", ErrInvalidState, q.Number, q.Status)
	}
	if err != nil {
		return nil, err
	}
	acc := q.Acceptance
	previous := jsonobj.Object{
		{Key: "accepted_by", Value: acc.AcceptedBy},
		{Key: "accepted_at", Value: formatTime(acc.AcceptedAt)},
		{Key: "acceptance_comments", Value: acc.Comments},
		{Key: "acceptance_order_number", Value: acc.OrderNumber},
	}
	if acc.Contact != nil {
		previous = append(previous, jsonobj.Field{Key: "accepting_contact", Value: contactJSONForEvent(*acc.Contact)})
	}
	previous = append(previous, jsonobj.Field{Key: "interactive_selections", Value: acc.Selections})
	if acc.InvoiceID != "" {
		previous = append(previous, jsonobj.Field{Key: "invoice_id", Value: acc.InvoiceID})
	}
	now := s.now()
	q.Status = acc.PreviousStatus
	q.Acceptance = nil
	q.UpdatedAt = &now
	ev := s.quoteEvent(webhooks.EventQuoteUnaccepted, q,
		jsonobj.Field{Key: "previous_status", Value: invoicing.QuoteStatusAccepted},
		jsonobj.Field{Key: "unaccepted_at", Value: formatTime(now)},
		jsonobj.Field{Key: "previous_acceptance", Value: previous},
	)
	return []event{ev}, nil
}

// DeclineQuote marks a draft or sent quote declined. The service documents
// no event for it, so none fires.
func (s *Server) DeclineQuote(quoteID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeQuote(quoteID, invoicing.QuoteStatusDeclined)
}

// ExpireQuote marks a draft or sent quote expired. No event fires.
func (s *Server) ExpireQuote(quoteID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeQuote(quoteID, invoicing.QuoteStatusExpired)
}

// ExpireQuotes expires every draft or sent quote whose valid_until is
// before today (the date on the server's Clock, in UTC), as the service's
// daily job would, and returns their ids in order of quote number (nil when
// none). Their updated_at is set; no event is documented, none fires. The
// control endpoint POST /_mock/clock/advance calls it after advancing the
// clock.
func (s *Server) ExpireQuotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expireQuotes()
}

// expireQuotes is ExpireQuotes under s.mu.
func (s *Server) expireQuotes() []string {
	today, now := s.today(), s.now()
	var expired []*quote
	for _, q := range s.data.quotes.all() {
		if (q.Status == invoicing.QuoteStatusDraft || q.Status == invoicing.QuoteStatusSent) && time.Time(q.ValidUntil).Before(today) {
			q.Status = invoicing.QuoteStatusExpired
			q.UpdatedAt = &now
			expired = append(expired, q)
		}
	}
	// QU-0999 before QU-1000 before QU-10000.
	slices.SortStableFunc(expired, func(a, b *quote) int {
		return cmp.Or(cmp.Compare(len(a.Number), len(b.Number)), strings.Compare(a.Number, b.Number))
	})
	var ids []string
	for _, q := range expired {
		ids = append(ids, q.ID)
	}
	return ids
}

// closeQuote makes a draft or sent quote declined or expired. The caller
// holds s.mu.
func (s *Server) closeQuote(quoteID string, status invoicing.QuoteStatus) error {
	q, err := s.quoteFor(quoteID)
	if err != nil {
		return err
	}
	if q.Status != invoicing.QuoteStatusDraft && q.Status != invoicing.QuoteStatusSent {
		return fmt.Errorf("%w: quote %s is %s", ErrInvalidState, q.Number, q.Status)
	}
	now := s.now()
	q.Status = status
	q.UpdatedAt = &now
	return nil
}

// quoteFor finds a quote for a helper. The caller holds s.mu.
func (s *Server) quoteFor(id string) (*quote, error) { return s.data.quotes.find("quote", id) }
