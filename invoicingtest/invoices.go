package invoicingtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// invoiceStatuses are the invoice statuses of API.md section 3.1, the
// values of the status filter of GET /invoices.
var invoiceStatuses = []invoicing.InvoiceStatus{
	invoicing.InvoiceStatusDraft, invoicing.InvoiceStatusAwaitingPayment, invoicing.InvoiceStatusPaid,
	invoicing.InvoiceStatusOverdue, invoicing.InvoiceStatusVoided,
}

const (
	defaultCurrency = "AUD"
	// defaultTermsDays is the business's default payment terms, used for
	// due_date when a create request gives neither due_date nor
	// payment_terms_days (and for invoices converted from quotes).
	defaultTermsDays = 30
	// defaultValidDays is the default validity of a quote, used for
	// valid_until when a create request gives neither valid_until nor
	// valid_days.
	defaultValidDays = 30
)

// invoiceRequest is the body of POST /invoices.
type invoiceRequest struct {
	ClientID         string                  `json:"client_id"`
	IssueDate        string                  `json:"issue_date"`
	DueDate          string                  `json:"due_date"`
	PaymentTermsDays *int                    `json:"payment_terms_days"`
	Currency         string                  `json:"currency"`
	Notes            string                  `json:"notes"`
	Reference        string                  `json:"reference"`
	InvoiceNumber    string                  `json:"invoice_number"`
	DefaultAccountID string                  `json:"default_account_id"`
	DefaultTaxCodeID string                  `json:"default_tax_code_id"`
	Status           invoicing.InvoiceStatus `json:"status"`
	LineItems        []*lineRequest          `json:"line_items"`
}

// invoiceJSON is an invoice as the API shows it (API.md 2.1).
type invoiceJSON struct {
	ID            string                  `json:"id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	ClientName    string                  `json:"client_name"`
	Status        invoicing.InvoiceStatus `json:"status"`
	IssueDate     date                    `json:"issue_date"`
	DueDate       date                    `json:"due_date"`
	Subtotal      money                   `json:"subtotal"`
	TaxTotal      money                   `json:"tax_total"`
	Total         money                   `json:"total"`
	AmountPaid    money                   `json:"amount_paid"`
	AmountDue     money                   `json:"amount_due"`
	Currency      string                  `json:"currency"`
	Notes         string                  `json:"notes"`
	LineItems     []lineJSON              `json:"line_items"`
	CreatedAt     datetime                `json:"created_at"`
	UpdatedAt     *datetime               `json:"updated_at"`
}

// invoiceView shows an invoice as it stands on the server's date today.
// The caller holds s.mu.
func (s *Server) invoiceView(inv *invoice) invoiceJSON {
	return s.invoiceViewOn(inv, s.today())
}

// invoiceViewOn shows an invoice as it stands on the date today. The caller
// holds s.mu.
func (s *Server) invoiceViewOn(inv *invoice, today time.Time) invoiceJSON {
	subtotal, tax, total := sumLines(inv.Lines)
	due := total
	if !inv.amountPaid.IsZero() { // decimal's Sub would rescale and allocate
		due = total.Sub(inv.amountPaid)
	}
	return invoiceJSON{
		ID: inv.ID, InvoiceNumber: inv.Number,
		ClientID: inv.ClientID, ClientName: s.clientName(inv.ClientID),
		Status:    inv.statusOn(today),
		IssueDate: inv.IssueDate, DueDate: inv.DueDate,
		Subtotal: money(subtotal), TaxTotal: money(tax), Total: money(total),
		AmountPaid: money(inv.amountPaid), AmountDue: money(due),
		Currency: inv.Currency, Notes: inv.Notes,
		LineItems: lineViews(inv.Lines),
		CreatedAt: datetime(inv.CreatedAt), UpdatedAt: (*datetime)(inv.UpdatedAt),
	}
}

// listInvoices serves GET /invoices with the filters status (the status
// the invoices show today: an overdue invoice matches overdue),
// client_id, from_date and to_date (on issue_date, both inclusive).
func (s *Server) listInvoices(w http.ResponseWriter, r *http.Request) {
	today := s.today() // one date for the filter and every record shown
	filter := func(q url.Values) (func(*invoice) bool, *apiError) {
		f, err := parseDocQuery(q, invoiceStatuses)
		if err != nil || !f.filters() {
			return nil, err
		}
		return func(inv *invoice) bool { return f.keep(inv.statusOn(today), inv.ClientID, time.Time(inv.IssueDate)) }, nil
	}
	view := func(inv *invoice) invoiceJSON { return s.invoiceViewOn(inv, today) }
	listHandler(s, "invoices", &s.data.invoices, filter, view)(w, r)
}

// invoiceCreated builds invoice.created. The caller holds s.mu.
func (s *Server) invoiceCreated(inv *invoice) event {
	return s.invoiceEvent(webhooks.EventInvoiceCreated, inv)
}

// existingInvoice returns the invoice already created with the request's
// reference, if any: POST /invoices answers it again (200) instead of
// creating another. The caller holds s.mu.
func (s *Server) existingInvoice(req *invoiceRequest) *invoice {
	reference := strings.TrimSpace(req.Reference)
	if reference == "" {
		return nil
	}
	return s.data.invoices.first(func(inv *invoice) bool { return inv.Reference == reference })
}

// insertInvoice applies the rules of POST /invoices and stores the invoice.
// The caller holds s.mu, and has checked that the reference (if any) is not
// used yet (existingInvoice).
func (s *Server) insertInvoice(req *invoiceRequest) (*invoice, *apiError) {
	if err := s.checkClient(req.ClientID); err != nil {
		return nil, err
	}
	status := req.Status
	if status == "" {
		status = invoicing.InvoiceStatusDraft
	}
	if status != invoicing.InvoiceStatusDraft && status != invoicing.InvoiceStatusAwaitingPayment {
		return nil, invalid("status must be one of: draft, awaiting_payment")
	}
	currency, err := checkCurrency(req.Currency)
	if err != nil {
		return nil, err
	}
	issue, due, err := s.invoiceDates(req)
	if err != nil {
		return nil, err
	}
	lines, err := s.buildLines(req.LineItems, lineDefaults{req.DefaultAccountID, req.DefaultTaxCodeID})
	if err != nil {
		return nil, err
	}
	number := strings.TrimSpace(req.InvoiceNumber)
	if number != "" && s.invoiceByNumber(number) != nil {
		return nil, conflict("Invoice number already exists")
	}
	if number == "" {
		number = s.nextInvoiceNumber()
	}
	inv := &invoice{
		ID: uuid.NewString(), Number: number, ClientID: req.ClientID, Status: status,
		IssueDate: date(issue), DueDate: date(due), Currency: currency, Notes: req.Notes,
		Reference: strings.TrimSpace(req.Reference), Lines: lines, CreatedAt: s.now(),
	}
	s.data.invoices.add(inv.ID, inv)
	return inv, nil
}

// invoiceDates works out issue_date (default today) and due_date (given,
// else issue_date + payment_terms_days, else issue_date + 30 days).
func (s *Server) invoiceDates(req *invoiceRequest) (issue, due time.Time, err *apiError) {
	issue, err = optionalDate("issue_date", req.IssueDate, s.today())
	if err != nil {
		return issue, due, err
	}
	terms := defaultTermsDays
	if req.PaymentTermsDays != nil {
		terms = *req.PaymentTermsDays
		if terms < 0 || terms > 3650 {
			return issue, due, invalid("payment_terms_days must be from 0 to 3650")
		}
	}
	due, err = optionalDate("due_date", req.DueDate, issue.AddDate(0, 0, terms))
	if err != nil {
		return issue, due, err
	}
	if due.Before(issue) {
		return issue, due, invalid("due_date must not be before issue_date")
	}
	return issue, due, nil
}

// optionalDate parses a YYYY-MM-DD body field, or returns def when it is
// empty. A malformed date is a 422.
func optionalDate(field, value string, def time.Time) (time.Time, *apiError) {
	if value == "" {
		return def, nil
	}
	d, err := parseDate(value)
	if err != nil {
		return d, invalid("%s must be a date in YYYY-MM-DD form", field)
	}
	return d, nil
}

// checkClient reports a 422 unless id names a client of the business. The
// caller holds s.mu.
func (s *Server) checkClient(id string) *apiError {
	if id == "" {
		return invalid("client_id is required")
	}
	if s.data.clients.get(id) == nil {
		return invalid("client_id %s does not belong to the business", id)
	}
	return nil
}

// checkCurrency defaults the currency to AUD and requires three capital
// letters (the shape of an ISO 4217 code).
func checkCurrency(c string) (string, *apiError) {
	if c == "" {
		return defaultCurrency, nil
	}
	if len(c) != 3 || strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return "", invalid("currency must be a three-letter ISO 4217 code such as AUD")
	}
	return c, nil
}

func (s *Server) invoiceByNumber(number string) *invoice {
	return s.data.invoices.first(func(inv *invoice) bool { return inv.Number == number })
}

// nextInvoiceNumber generates INV-0001, INV-0002, ..., skipping numbers
// that callers supplied themselves. The caller holds s.mu.
func (s *Server) nextInvoiceNumber() string {
	for {
		s.data.invoiceSeq++
		n := fmt.Sprintf("INV-%04d", s.data.invoiceSeq)
		if s.invoiceByNumber(n) == nil {
			return n
		}
	}
}

// invoiceEvent builds the invoice.created or invoice.updated payload. The
// caller holds s.mu.
func (s *Server) invoiceEvent(name webhooks.EventType, inv *invoice) event {
	at := inv.CreatedAt
	stampKey := "created_at"
	if name == webhooks.EventInvoiceUpdated {
		stampKey = "updated_at"
		if inv.UpdatedAt != nil {
			at = *inv.UpdatedAt
		}
	}
	return s.newEvent(name, jsonobj.Object{
		{Key: "invoice_id", Value: inv.ID},
		{Key: "invoice_number", Value: inv.Number},
		{Key: "client_id", Value: inv.ClientID},
		{Key: "reference", Value: nullString(inv.Reference)},
		{Key: "total", Value: moneyString(inv.total())},
		{Key: "status", Value: inv.statusOn(s.today())},
		{Key: stampKey, Value: formatTime(at)},
	})
}
