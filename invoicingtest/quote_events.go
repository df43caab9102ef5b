package invoicingtest

import "github.com/invoicing-api/invoicing-go/webhooks"

// quoteEvent builds a quote event payload: the quote fields of API.md 6.3
// followed by the event's own fields. The caller holds s.mu.
func (s *Server) quoteEvent(name webhooks.EventType, q *quote, extra ...field) event {
	return s.newEvent(name, s.quoteFields(q).with(extra...))
}

// quoteFields are the fields every quote event carries. Line items and
// totals are those the API shows: the accepted selection for an accepted
// quote, every offered line otherwise. Decimals are strings. The caller
// holds s.mu.
func (s *Server) quoteFields(q *quote) orderedObject {
	c := s.data.clients.get(q.clientID)
	var name, email string
	var addr Address
	if c != nil {
		name, email, addr = c.Name, c.Email, c.Address
	}
	lines := q.effectiveLines()
	subtotal, tax, total := sumLines(lines)
	items := make([]orderedObject, 0, len(lines))
	for _, l := range lines {
		title := l.description
		var itemCode *string // null on lines not linked to a catalog item
		if l.itemID != "" {
			title, itemCode = l.itemName, &l.itemCode
		}
		items = append(items, orderedObject{
			{"id", l.id},
			{"item_code", itemCode},
			{"title", title},
			{"description", l.description},
			{"quantity", numberString(l.quantity)},
			{"unit_price", moneyString(l.unitPrice)},
			{"subtotal", moneyString(l.net)},
			{"tax_rate", numberString(l.taxRate)},
			{"tax_amount", moneyString(l.tax)},
			{"total", moneyString(l.amount())},
			{"optional", l.optional},
		})
	}
	fields := orderedObject{
		{"quote_id", q.id},
		{"quote_number", q.number},
		{"title", q.title},
		{"client_id", q.clientID},
		{"client_name", name},
		{"client_email", email},
		{"client_address", orderedObject{
			{"address_line1", addr.Line1},
			{"address_line2", addr.Line2},
			{"city", addr.City},
			{"state", addr.State},
			{"postcode", addr.Postcode},
			{"country", addr.Country},
		}},
	}
	if q.shareToken != "" {
		fields = append(fields, field{"quote_public_url", s.quotePublicURL(q)})
	}
	return append(fields,
		field{"quote_admin_url", s.root + "/app/quotes/" + q.id},
		field{"status", q.status},
		field{"issue_date", formatDate(q.issueDate)},
		field{"valid_until", formatDate(q.validUntil)},
		field{"currency", q.currency},
		field{"subtotal", moneyString(subtotal)},
		field{"tax_amount", moneyString(tax)},
		field{"total", moneyString(total)},
		field{"line_items", items},
	)
}

// quotePublicURL is the customer share link of a quote that has a share
// token.
func (s *Server) quotePublicURL(q *quote) string {
	return s.root + "/share/quotes/" + q.shareToken
}

// recipientJSON is a quote recipient in quote.accepted's recipients.
func recipientJSON(r Recipient) orderedObject {
	return orderedObject{
		{"quote_contact_id", r.QuoteContactID},
		{"contact_id", nullable(r.ContactID)},
		{"contact_name", r.Name},
		{"contact_email", r.Email},
		{"contact_type", r.Type},
	}
}

// contactJSONForEvent is a person in accepting_contact and viewer.
func contactJSONForEvent(r Recipient) orderedObject {
	return orderedObject{
		{"contact_id", nullable(r.ContactID)},
		{"contact_name", r.Name},
		{"contact_email", r.Email},
		{"contact_type", r.Type},
	}
}
