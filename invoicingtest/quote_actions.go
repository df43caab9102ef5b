package invoicingtest

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

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
	ContactID string
	// Name and Email are the person's as shown in events.
	Name, Email string
	// Type is "to" (the default) or "cc".
	Type string
	// QuoteContactID identifies the recipient on the quote; SendQuote
	// assigns it.
	QuoteContactID string
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
	if q.status == invoicing.QuoteStatusAccepted {
		return fmt.Errorf("%w: quote %s is accepted", ErrInvalidState, q.number)
	}
	for i := range q.lines {
		if q.lines[i].id == lineID {
			q.lines[i].optional = o.Optional
			q.lines[i].quantityEditable = o.QuantityEditable
			return nil
		}
	}
	return fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.number, lineID)
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
	if err == nil && q.status != invoicing.QuoteStatusDraft && q.status != invoicing.QuoteStatusSent {
		err = fmt.Errorf("%w: quote %s is %s", ErrInvalidState, q.number, q.status)
	}
	if err != nil {
		return nil, err
	}
	if len(recipients) == 0 {
		c := s.data.clients.get(q.clientID)
		recipients = []Recipient{{ContactID: c.ID, Name: c.Name, Email: c.Email}}
	}
	q.recipients = nil
	for _, r := range recipients {
		if r.Type == "" {
			r.Type = "to"
		}
		r.QuoteContactID = uuid.NewString()
		q.recipients = append(q.recipients, r)
	}
	if q.shareToken == "" {
		q.shareToken = randomHex(16)
	}
	now := s.now()
	q.status = invoicing.QuoteStatusSent
	q.updatedAt = &now
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
	if err == nil && q.shareToken == "" {
		err = fmt.Errorf("%w: quote %s has no share link yet; send it first", ErrInvalidState, q.number)
	}
	if err != nil {
		return nil, err
	}
	v := q.recipients[0]
	if viewer != nil {
		v = *viewer
		if v.Type == "" {
			v.Type = "to"
		}
	}
	now := s.now()
	q.viewCount++
	q.lastViewedAt = &now
	ev := s.quoteEvent(webhooks.EventQuoteViewed, q,
		jsonobj.Field{Key: "viewed_at", Value: formatTime(now)},
		jsonobj.Field{Key: "view_count", Value: q.viewCount},
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
	if q.status != invoicing.QuoteStatusDraft && q.status != invoicing.QuoteStatusSent {
		return AcceptResult{}, nil, fmt.Errorf("%w: quote %s is %s; only draft or sent quotes can be accepted", ErrInvalidState, q.number, q.status)
	}
	if !o.ByStaff && q.shareToken == "" {
		return AcceptResult{}, nil, fmt.Errorf("%w: quote %s has no share link; send it first or accept with ByStaff", ErrInvalidState, q.number)
	}
	lines, selections, err := acceptedLines(q, o)
	if err != nil {
		return AcceptResult{}, nil, err
	}
	now := s.now()
	acc := &acceptance{
		lines: lines, previousStatus: q.status, byStaff: o.ByStaff,
		acceptedBy: o.AcceptedBy, acceptedAt: now,
		comments: o.Comments, orderNumber: o.OrderNumber, selections: selections,
	}
	if !o.ByStaff {
		c := q.recipients[0]
		if o.Contact != nil {
			c = *o.Contact
		}
		acc.contact = &c
		if acc.acceptedBy == "" {
			acc.acceptedBy = c.Name
		}
	} else if acc.acceptedBy == "" {
		acc.acceptedBy = "Staff"
	}
	q.status = invoicing.QuoteStatusAccepted
	q.acceptance = acc
	q.updatedAt = &now

	var inv *invoice
	if s.conversion != ConversionFails {
		inv = s.invoiceFromQuote(q)
		acc.invoiceID = inv.id
	}

	recipients := make([]jsonobj.Object, 0, len(q.recipients))
	for _, r := range q.recipients {
		recipients = append(recipients, recipientJSON(r))
	}
	extra := []jsonobj.Field{{Key: "recipients", Value: recipients}}
	if acc.contact != nil {
		extra = append(extra, jsonobj.Field{Key: "accepting_contact", Value: contactJSONForEvent(*acc.contact)})
	}
	extra = append(extra,
		jsonobj.Field{Key: "accepted_by", Value: acc.acceptedBy},
		jsonobj.Field{Key: "accepted_at", Value: formatTime(now)},
		jsonobj.Field{Key: "acceptance_comments", Value: acc.comments},
		jsonobj.Field{Key: "acceptance_order_number", Value: acc.orderNumber},
		jsonobj.Field{Key: "interactive_selections", Value: selections},
	)
	var res AcceptResult
	if inv != nil {
		res = AcceptResult{InvoiceID: inv.id, InvoiceNumber: inv.number}
		extra = append(extra,
			jsonobj.Field{Key: "invoice_id", Value: inv.id},
			jsonobj.Field{Key: "invoice_number", Value: inv.number},
			jsonobj.Field{Key: "invoice_status", Value: inv.statusOn(s.today())},
			jsonobj.Field{Key: "invoice_admin_url", Value: s.root + "/app/invoices/" + inv.id},
		)
		if inv.shareToken != "" {
			extra = append(extra, jsonobj.Field{Key: "invoice_share_url", Value: s.root + "/pay/" + inv.shareToken})
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
	for _, l := range q.lines {
		byID[l.id] = l
	}
	excluded := map[string]bool{}
	for _, id := range o.Exclude {
		l, ok := byID[id]
		if !ok {
			return nil, nil, fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.number, id)
		}
		if !l.optional {
			return nil, nil, fmt.Errorf("%w: line %s of quote %s is not optional", ErrInvalidState, id, q.number)
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
			return nil, nil, fmt.Errorf("%w: quote %s has no line %s", ErrNotFound, q.number, id)
		case !l.quantityEditable:
			return nil, nil, fmt.Errorf("%w: the quantity of line %s of quote %s is not editable", ErrInvalidState, id, q.number)
		case !o.Quantities[id].IsPositive():
			return nil, nil, fmt.Errorf("invoicingtest: accepted quantity of line %s must be greater than 0", id)
		}
	}
	var lines []line
	section := map[string]any{}
	for _, l := range q.lines {
		if qty, ok := o.Quantities[l.id]; ok {
			l = l.withQuantity(qty)
		}
		if l.optional || l.quantityEditable {
			section[l.id] = map[string]any{"included": !excluded[l.id], "quantity": numberText(l.quantity)}
		}
		if !excluded[l.id] {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, nil, fmt.Errorf("%w: every line of quote %s would be excluded", ErrInvalidState, q.number)
	}
	return lines, map[string]any{"section-0": section}, nil
}

// invoiceFromQuote creates the invoice auto-conversion makes from an
// accepted quote: same client and currency, the accepted lines (new line
// ids), issued today, due after the default terms. The caller holds s.mu.
func (s *Server) invoiceFromQuote(q *quote) *invoice {
	lines := make([]line, len(q.acceptance.lines))
	for i, l := range q.acceptance.lines {
		l.id = uuid.NewString()
		l.optional, l.quantityEditable = false, false
		lines[i] = l
	}
	today := s.today()
	inv := &invoice{
		id: uuid.NewString(), number: s.nextInvoiceNumber(), clientID: q.clientID,
		status: invoicing.InvoiceStatusDraft, issueDate: today, dueDate: today.AddDate(0, 0, defaultTermsDays),
		currency: q.currency, lines: lines, createdAt: s.now(),
	}
	if s.conversion == ConvertToAwaitingPaymentInvoice {
		inv.status = invoicing.InvoiceStatusAwaitingPayment
		inv.shareToken = randomHex(16)
	}
	s.data.invoices.add(inv.id, inv)
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
	if err == nil && (q.status != invoicing.QuoteStatusAccepted || q.acceptance == nil) {
		err = fmt.Errorf("%w: quote %s is %s, not accepted", ErrInvalidState, q.number, q.status)
	}
	if err != nil {
		return nil, err
	}
	acc := q.acceptance
	previous := jsonobj.Object{
		{Key: "accepted_by", Value: acc.acceptedBy},
		{Key: "accepted_at", Value: formatTime(acc.acceptedAt)},
		{Key: "acceptance_comments", Value: acc.comments},
		{Key: "acceptance_order_number", Value: acc.orderNumber},
	}
	if acc.contact != nil {
		previous = append(previous, jsonobj.Field{Key: "accepting_contact", Value: contactJSONForEvent(*acc.contact)})
	}
	previous = append(previous, jsonobj.Field{Key: "interactive_selections", Value: acc.selections})
	if acc.invoiceID != "" {
		previous = append(previous, jsonobj.Field{Key: "invoice_id", Value: acc.invoiceID})
	}
	now := s.now()
	q.status = acc.previousStatus
	q.acceptance = nil
	q.updatedAt = &now
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
		if (q.status == invoicing.QuoteStatusDraft || q.status == invoicing.QuoteStatusSent) && q.validUntil.Before(today) {
			q.status = invoicing.QuoteStatusExpired
			q.updatedAt = &now
			expired = append(expired, q)
		}
	}
	// QU-0999 before QU-1000 before QU-10000.
	slices.SortStableFunc(expired, func(a, b *quote) int {
		return cmp.Or(cmp.Compare(len(a.number), len(b.number)), strings.Compare(a.number, b.number))
	})
	var ids []string
	for _, q := range expired {
		ids = append(ids, q.id)
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
	if q.status != invoicing.QuoteStatusDraft && q.status != invoicing.QuoteStatusSent {
		return fmt.Errorf("%w: quote %s is %s", ErrInvalidState, q.number, q.status)
	}
	now := s.now()
	q.status = status
	q.updatedAt = &now
	return nil
}

// quoteFor finds a quote for a helper. The caller holds s.mu.
func (s *Server) quoteFor(id string) (*quote, error) { return s.data.quotes.find("quote", id) }
