package invoicingtest

import (
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// quoteEvent builds a quote event payload: the quote fields of API.md 6.3
// followed by the event's own fields. The caller holds s.mu.
func (s *Server) quoteEvent(name webhooks.EventType, q *quote, extra ...jsonobj.Field) event {
	return s.newEvent(name, s.quoteFields(q).With(extra...))
}

// quoteFields are the fields every quote event carries. Line items and
// totals are those the API shows: the accepted selection for an accepted
// quote, every offered line otherwise. Decimals are strings. The caller
// holds s.mu.
func (s *Server) quoteFields(q *quote) jsonobj.Object {
	c := s.data.clients.get(q.ClientID)
	var name, email string
	var addr Address
	if c != nil {
		name, email, addr = c.Name, c.Email, c.Address
	}
	lines := q.effectiveLines()
	subtotal, tax, total := sumLines(lines)
	items := make([]jsonobj.Object, 0, len(lines))
	for _, l := range lines {
		title := l.Description
		var itemCode *string // null on lines not linked to a catalog item
		if l.ItemID != "" {
			title, itemCode = l.ItemName, &l.ItemCode
		}
		items = append(items, jsonobj.Object{
			{Key: "id", Value: l.ID},
			{Key: "item_code", Value: itemCode},
			{Key: "title", Value: title},
			{Key: "description", Value: l.Description},
			{Key: "quantity", Value: numberString(l.Quantity)},
			{Key: "unit_price", Value: moneyString(l.UnitPrice)},
			{Key: "subtotal", Value: moneyString(l.net)},
			{Key: "tax_rate", Value: numberString(l.TaxRate)},
			{Key: "tax_amount", Value: moneyString(l.tax)},
			{Key: "total", Value: moneyString(l.amount)},
			{Key: "optional", Value: l.Optional},
		})
	}
	fields := jsonobj.Object{
		{Key: "quote_id", Value: q.ID},
		{Key: "quote_number", Value: q.Number},
		{Key: "title", Value: q.Title},
		{Key: "client_id", Value: q.ClientID},
		{Key: "client_name", Value: name},
		{Key: "client_email", Value: email},
		{Key: "client_address", Value: jsonobj.Object{
			{Key: "address_line1", Value: addr.Line1},
			{Key: "address_line2", Value: addr.Line2},
			{Key: "city", Value: addr.City},
			{Key: "state", Value: addr.State},
			{Key: "postcode", Value: addr.Postcode},
			{Key: "country", Value: addr.Country},
		}},
	}
	if q.ShareToken != "" {
		fields = append(fields, jsonobj.Field{Key: "quote_public_url", Value: s.quotePublicURL(q)})
	}
	return append(fields,
		jsonobj.Field{Key: "quote_admin_url", Value: s.root + "/app/quotes/" + q.ID},
		jsonobj.Field{Key: "status", Value: q.Status},
		jsonobj.Field{Key: "issue_date", Value: q.IssueDate.String()},
		jsonobj.Field{Key: "valid_until", Value: q.ValidUntil.String()},
		jsonobj.Field{Key: "currency", Value: q.Currency},
		jsonobj.Field{Key: "subtotal", Value: moneyString(subtotal)},
		jsonobj.Field{Key: "tax_amount", Value: moneyString(tax)},
		jsonobj.Field{Key: "total", Value: moneyString(total)},
		jsonobj.Field{Key: "line_items", Value: items},
	)
}

// quotePublicURL is the customer share link of a quote that has a share
// token.
func (s *Server) quotePublicURL(q *quote) string {
	return s.root + "/share/quotes/" + q.ShareToken
}

// recipientJSON is a quote recipient in quote.accepted's recipients.
func recipientJSON(r Recipient) jsonobj.Object {
	return jsonobj.Object{
		{Key: "quote_contact_id", Value: r.QuoteContactID},
		{Key: "contact_id", Value: nullString(r.ContactID)},
		{Key: "contact_name", Value: r.Name},
		{Key: "contact_email", Value: r.Email},
		{Key: "contact_type", Value: r.Type},
	}
}

// contactJSONForEvent is a person in accepting_contact and viewer.
func contactJSONForEvent(r Recipient) jsonobj.Object {
	return jsonobj.Object{
		{Key: "contact_id", Value: nullString(r.ContactID)},
		{Key: "contact_name", Value: r.Name},
		{Key: "contact_email", Value: r.Email},
		{Key: "contact_type", Value: r.Type},
	}
}
