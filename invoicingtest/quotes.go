package invoicingtest

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// quoteStatuses are the quote statuses of API.md section 3.1, the values of
// the status filter of GET /quotes.
var quoteStatuses = []invoicing.QuoteStatus{
	invoicing.QuoteStatusDraft, invoicing.QuoteStatusSent, invoicing.QuoteStatusAccepted,
	invoicing.QuoteStatusDeclined, invoicing.QuoteStatusExpired,
}

// quoteRequest is the body of POST /quotes.
type quoteRequest struct {
	ClientID         string         `json:"client_id"`
	Title            string         `json:"title"`
	IssueDate        string         `json:"issue_date"`
	ValidUntil       string         `json:"valid_until"`
	ValidDays        *int           `json:"valid_days"`
	Currency         string         `json:"currency"`
	Notes            string         `json:"notes"`
	DefaultAccountID string         `json:"default_account_id"`
	DefaultTaxCodeID string         `json:"default_tax_code_id"`
	LineItems        []*lineRequest `json:"line_items"`
}

// quoteJSON is a quote as the API shows it (API.md 2.3).
type quoteJSON struct {
	ID          string                `json:"id"`
	QuoteNumber string                `json:"quote_number"`
	Title       string                `json:"title"`
	ClientID    string                `json:"client_id"`
	ClientName  string                `json:"client_name"`
	Status      invoicing.QuoteStatus `json:"status"`
	IssueDate   date                  `json:"issue_date"`
	ValidUntil  date                  `json:"valid_until"`
	Subtotal    money                 `json:"subtotal"`
	TaxTotal    money                 `json:"tax_total"`
	Total       money                 `json:"total"`
	Currency    string                `json:"currency"`
	Notes       string                `json:"notes"`
	LineItems   []quoteLineJSON       `json:"line_items"`
	CreatedAt   datetime              `json:"created_at"`
	UpdatedAt   *datetime             `json:"updated_at"`
}

// quoteLineJSON is a quote line; item_id, item_code and item_name appear
// only when the line is linked to a catalog item.
type quoteLineJSON struct {
	ID          string  `json:"id"`
	ItemID      *string `json:"item_id,omitzero"`
	ItemCode    *string `json:"item_code,omitzero"`
	ItemName    *string `json:"item_name,omitzero"`
	Description string  `json:"description"`
	Quantity    number  `json:"quantity"`
	UnitPrice   money   `json:"unit_price"`
	Amount      money   `json:"amount"`
	TaxAmount   money   `json:"tax_amount"`
}

// quoteView shows a quote; an accepted quote shows the accepted selection.
// The caller holds s.mu.
func (s *Server) quoteView(q *quote) quoteJSON {
	lines := q.effectiveLines()
	subtotal, tax, total := sumLines(lines)
	views := make([]quoteLineJSON, 0, len(lines))
	for _, l := range lines {
		v := quoteLineJSON{
			ID: l.ID, Description: l.Description, Quantity: number(l.Quantity), UnitPrice: money(l.UnitPrice),
			Amount: money(l.amount), TaxAmount: money(l.tax),
		}
		if l.ItemID != "" {
			v.ItemID, v.ItemCode, v.ItemName = &l.ItemID, &l.ItemCode, &l.ItemName
		}
		views = append(views, v)
	}
	return quoteJSON{
		ID: q.ID, QuoteNumber: q.Number, Title: q.Title,
		ClientID: q.ClientID, ClientName: s.clientName(q.ClientID), Status: q.Status,
		IssueDate: q.IssueDate, ValidUntil: q.ValidUntil,
		Subtotal: money(subtotal), TaxTotal: money(tax), Total: money(total),
		Currency: q.Currency, Notes: q.Notes, LineItems: views,
		CreatedAt: datetime(q.CreatedAt), UpdatedAt: (*datetime)(q.UpdatedAt),
	}
}

// quoteFilter reads the filters of GET /quotes: status, client_id,
// from_date and to_date (on issue_date, both inclusive).
func quoteFilter(query url.Values) (func(*quote) bool, *apiError) {
	f, err := parseDocQuery(query, quoteStatuses)
	if err != nil || !f.filters() {
		return nil, err
	}
	return func(q *quote) bool { return f.keep(q.Status, q.ClientID, time.Time(q.IssueDate)) }, nil
}

// quoteCreated builds quote.created. The caller holds s.mu.
func (s *Server) quoteCreated(q *quote) event {
	return s.quoteEvent(webhooks.EventQuoteCreated, q, jsonobj.Field{Key: "created_at", Value: formatTime(q.CreatedAt)})
}

// insertQuote applies the rules of POST /quotes and stores the quote. The
// caller holds s.mu.
func (s *Server) insertQuote(req *quoteRequest) (*quote, *apiError) {
	if err := s.checkClient(req.ClientID); err != nil {
		return nil, err
	}
	for i, l := range req.LineItems {
		if len(l.OwnID) > 0 {
			return nil, invalid("line_items[%d]: id must not be sent; use item_id to link a catalog item", i)
		}
	}
	currency, err := checkCurrency(req.Currency)
	if err != nil {
		return nil, err
	}
	issue, validUntil, err := s.quoteDates(req)
	if err != nil {
		return nil, err
	}
	lines, err := s.buildLines(req.LineItems, lineDefaults{req.DefaultAccountID, req.DefaultTaxCodeID})
	if err != nil {
		return nil, err
	}
	title := strings.TrimSpace(req.Title)
	if title == "" {
		title = strings.TrimSpace(lines[0].Description)
	}
	if title == "" {
		title = "Quote"
	}
	q := &quote{
		ID: uuid.NewString(), Number: s.nextQuoteNumber(), Title: title,
		ClientID: req.ClientID, Status: invoicing.QuoteStatusDraft,
		IssueDate: date(issue), ValidUntil: date(validUntil), Currency: currency, Notes: req.Notes,
		Lines: lines, CreatedAt: s.now(),
	}
	s.data.quotes.add(q.ID, q)
	return q, nil
}

// quoteDates works out issue_date (default today) and valid_until (given,
// else issue_date + valid_days, else issue_date + 30 days).
func (s *Server) quoteDates(req *quoteRequest) (issue, validUntil time.Time, err *apiError) {
	issue, err = optionalDate("issue_date", req.IssueDate, s.today())
	if err != nil {
		return issue, validUntil, err
	}
	days := defaultValidDays
	if req.ValidDays != nil && req.ValidUntil == "" {
		days = *req.ValidDays
		if days < 0 || days > 3650 {
			return issue, validUntil, invalid("valid_days must be from 0 to 3650")
		}
	}
	validUntil, err = optionalDate("valid_until", req.ValidUntil, issue.AddDate(0, 0, days))
	if err != nil {
		return issue, validUntil, err
	}
	if validUntil.Before(issue) {
		return issue, validUntil, invalid("valid_until must not be before issue_date")
	}
	return issue, validUntil, nil
}

// nextQuoteNumber generates QU-0001, QU-0002, ... The caller holds s.mu.
func (s *Server) nextQuoteNumber() string {
	s.data.quoteSeq++
	return fmt.Sprintf("QU-%04d", s.data.quoteSeq)
}
