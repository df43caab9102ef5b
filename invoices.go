package invoicing

import (
	"context"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// InvoiceService reads and creates sales invoices (scopes invoices:read and
// invoices:write).
//
//gen:service path=/invoices key=invoices record=Invoice noun=invoice list=InvoiceListParams get pdf=Invoice
type InvoiceService service

// Invoice is a sales invoice. Money is exact; amounts are in Currency.
//
//codec:record
//mirror:table name=invoices order=10 lines=invoice_lines parent=invoice_id
type Invoice struct {
	ID            string        `json:"id"`
	InvoiceNumber string        `json:"invoice_number"`
	ClientID      string        `json:"client_id"`
	ClientName    string        `json:"client_name"`
	Status        InvoiceStatus `json:"status"`
	IssueDate     Date          `json:"issue_date"`
	DueDate       Date          `json:"due_date"`
	// Subtotal is before tax; TaxTotal is the tax; Total includes tax.
	Subtotal   decimal.Decimal `json:"subtotal"`
	TaxTotal   decimal.Decimal `json:"tax_total"`
	Total      decimal.Decimal `json:"total"`
	AmountPaid decimal.Decimal `json:"amount_paid"`
	AmountDue  decimal.Decimal `json:"amount_due"`
	// Currency is a currency code such as "AUD".
	Currency string `json:"currency"`
	// Notes are shown on the invoice.
	Notes string `json:"notes"`
	// Reference is the external reference given at creation. The service
	// documents it as a request field only; it is filled when the service
	// returns it, and empty otherwise.
	Reference string            `json:"reference,omitempty"`
	LineItems []InvoiceLineItem `json:"line_items"`
	CreatedAt time.Time         `json:"created_at"`
	// UpdatedAt is nil when the invoice was never updated.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// InvoiceLineItem is one line of an Invoice.
//
//codec:record
type InvoiceLineItem struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	// UnitPrice is the price per unit before tax.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// Amount is the line total: quantity × unit price + tax.
	Amount    decimal.Decimal `json:"amount"`
	TaxAmount decimal.Decimal `json:"tax_amount"`
	// AccountID is the revenue account; nil when the service sent null (it
	// may in a create response).
	AccountID *string `json:"account_id"`
	// TaxCodeID is the tax code; nil when the service sent null.
	TaxCodeID *string `json:"tax_code_id"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// InvoiceListParams filters GET /invoices. Zero fields are not sent.
type InvoiceListParams struct {
	ListParams
	Status   InvoiceStatus `query:"status"`
	ClientID string        `query:"client_id"`
	// FromDate and ToDate bound the invoices' dates (inclusive, as the
	// service defines them); a ToDate before FromDate is a *ParamError.
	FromDate Date `query:"from_date"`
	ToDate   Date `query:"to_date"`
}

// InvoiceCreateParams is the body of POST /invoices. Empty optional fields
// are not sent, and the service applies its defaults.
//
//codec:params
type InvoiceCreateParams struct {
	// ClientID is required and must belong to the business.
	ClientID string `json:"client_id"`
	// IssueDate defaults to today.
	IssueDate Date `json:"issue_date,omitzero"`
	DueDate   Date `json:"due_date,omitzero"`
	// PaymentTermsDays (days until due) is used when DueDate is not set; nil
	// means not sent.
	PaymentTermsDays *int `json:"payment_terms_days,omitempty"`
	// Currency defaults to AUD.
	Currency string `json:"currency,omitempty"`
	Notes    string `json:"notes,omitempty"`
	// Reference is an external reference and the idempotency key for
	// imports: creating again with the same reference returns the existing
	// invoice (InvoiceCreateResult.Created is false). A create carrying a
	// reference is also retried after a 5xx or a network error; one without
	// is never repeated.
	Reference string `json:"reference,omitempty"`
	// InvoiceNumber is used as given; a number already used by the business
	// fails with ErrConflict. Generated when empty.
	InvoiceNumber string `json:"invoice_number,omitempty"`
	// DefaultAccountID applies to lines without AccountID.
	DefaultAccountID string `json:"default_account_id,omitempty"`
	// DefaultTaxCodeID applies to lines without TaxCodeID.
	DefaultTaxCodeID string `json:"default_tax_code_id,omitempty"`
	// Status is InvoiceStatusDraft (the default) or InvoiceStatusAwaitingPayment.
	Status InvoiceStatus `json:"status,omitempty"`
	// LineItems are required: at least one.
	LineItems []LineItemParams `json:"line_items"`
	// Extra holds body members the SDK does not model, sent after the
	// typed fields in name order (decimal.Decimal values as exact numbers,
	// at any depth). A name a typed field also sends is a *ParamError; one
	// whose typed field is empty (so not sent) may be used.
	Extra map[string]any `json:",embed"`
}

func (p *InvoiceCreateParams) validate() error {
	if p == nil {
		return paramErr("params", "Invoices.Create needs a *InvoiceCreateParams with ClientID and at least one of LineItems, got nil")
	}
	if err := requireString("client_id", p.ClientID); err != nil {
		return err
	}
	switch p.Status {
	case "", InvoiceStatusDraft, InvoiceStatusAwaitingPayment:
	default:
		return paramErr("status", "must be draft or awaiting_payment")
	}
	if p.PaymentTermsDays != nil && *p.PaymentTermsDays < 0 {
		return paramErr("payment_terms_days", "must not be negative")
	}
	return validateLines(p.LineItems, p.DefaultAccountID, p.DefaultTaxCodeID)
}

// InvoiceCreateResult is the outcome of InvoiceService.Create.
type InvoiceCreateResult struct {
	*Invoice
	// Created is true when the service created the invoice (HTTP 201) and
	// false when it returned the existing invoice that already carried the
	// request's Reference (HTTP 200).
	Created bool
}

// Create creates an invoice. With a Reference already used by the business it
// returns the existing invoice with Created false instead of a duplicate. A
// duplicate InvoiceNumber is ErrConflict; a request that cannot succeed (no
// client, no lines, a line without account or tax code) is a *ParamError
// returned before anything is sent.
func (s *InvoiceService) Create(ctx context.Context, p *InvoiceCreateParams, opts ...RequestOption) (*InvoiceCreateResult, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	inv, status, err := create[Invoice](ctx, s.c, "/invoices", p, p.Reference != "", opts)
	if err != nil {
		return nil, err
	}
	return &InvoiceCreateResult{Invoice: inv, Created: status == http.StatusCreated}, nil
}
