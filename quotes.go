package invoicing

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// QuoteService reads and creates quotes (scopes quotes:read and
// quotes:write).
//
//gen:service path=/quotes key=quotes record=Quote noun=quote list=QuoteListParams get pdf=Quote
type QuoteService service

// Quote is a sales quote. For an accepted quote the totals and lines are the
// client's saved agreement (excluded optional lines omitted, chosen
// quantities); other quotes keep their offered lines.
//
//codec:record
//mirror:table name=quotes order=9 lines=quote_lines parent=quote_id
type Quote struct {
	ID          string      `json:"id"`
	QuoteNumber string      `json:"quote_number"`
	Title       string      `json:"title"`
	ClientID    string      `json:"client_id"`
	ClientName  string      `json:"client_name"`
	Status      QuoteStatus `json:"status"`
	IssueDate   Date        `json:"issue_date"`
	// ValidUntil is the expiry date.
	ValidUntil Date `json:"valid_until"`
	// Subtotal is before tax; Total includes tax.
	Subtotal  decimal.Decimal `json:"subtotal"`
	TaxTotal  decimal.Decimal `json:"tax_total"`
	Total     decimal.Decimal `json:"total"`
	Currency  string          `json:"currency"`
	Notes     string          `json:"notes"`
	LineItems []QuoteLineItem `json:"line_items"`
	CreatedAt time.Time       `json:"created_at"`
	// UpdatedAt is nil when the service sends null.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// QuoteLineItem is one line of a Quote.
//
//codec:record
type QuoteLineItem struct {
	ID string `json:"id"`
	// ItemID, ItemCode and ItemName are set only when the line is linked to
	// a catalog item ("" otherwise). ItemID is kept as the service sends it.
	ItemID      string          `json:"item_id,omitempty"`
	ItemCode    string          `json:"item_code,omitempty"`
	ItemName    string          `json:"item_name,omitempty"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	// UnitPrice is the price per unit before tax.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// Amount is the line total including tax and discounts; TaxAmount is its
	// tax (a line of 100 with a 1% tax code: Amount 101, TaxAmount 1).
	Amount    decimal.Decimal `json:"amount"`
	TaxAmount decimal.Decimal `json:"tax_amount"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// QuoteListParams filters GET /quotes. Zero fields are not sent.
type QuoteListParams struct {
	ListParams
	Status   QuoteStatus `query:"status"`
	ClientID string      `query:"client_id"`
	// FromDate and ToDate bound the quotes' dates; a ToDate before
	// FromDate is a *ParamError.
	FromDate Date `query:"from_date"`
	ToDate   Date `query:"to_date"`
}

// QuoteCreateParams is the body of POST /quotes. Empty optional fields are
// not sent. The service numbers the quote and always creates it as draft.
//
//codec:params
type QuoteCreateParams struct {
	// ClientID is required and must belong to the business.
	ClientID string `json:"client_id"`
	// Title defaults to the first line's description, or "Quote".
	Title string `json:"title,omitempty"`
	// IssueDate defaults to today.
	IssueDate Date `json:"issue_date,omitzero"`
	// ValidUntil is the expiry date; when set, ValidDays is ignored.
	ValidUntil Date `json:"valid_until,omitzero"`
	// ValidDays counts from IssueDate; nil means not sent.
	ValidDays *int `json:"valid_days,omitempty"`
	// Currency defaults to AUD.
	Currency string `json:"currency,omitempty"`
	// Notes are private notes.
	Notes            string `json:"notes,omitempty"`
	DefaultAccountID string `json:"default_account_id,omitempty"`
	DefaultTaxCodeID string `json:"default_tax_code_id,omitempty"`
	// LineItems are required: at least one.
	LineItems []LineItemParams `json:"line_items"`
	// Extra holds body members the SDK does not model, sent after the
	// typed fields in name order (decimal.Decimal values as exact numbers,
	// at any depth). A name a typed field also sends is a *ParamError; one
	// whose typed field is empty (so not sent) may be used.
	Extra map[string]any `json:",embed"`
}

func (p *QuoteCreateParams) validate() error {
	if p == nil {
		return paramErr("params", "Quotes.Create needs a *QuoteCreateParams with ClientID and at least one of LineItems, got nil")
	}
	if err := requireString("client_id", p.ClientID); err != nil {
		return err
	}
	if p.ValidDays != nil && *p.ValidDays < 0 {
		return paramErr("valid_days", "must not be negative")
	}
	return validateLines(p.LineItems, p.DefaultAccountID, p.DefaultTaxCodeID)
}

// Create creates a draft quote and returns it as GET would. A request that
// cannot succeed (no client, no lines, a line without account or tax code)
// is a *ParamError returned before sending. Creates are never repeated
// after a 5xx or a network error (only after a 429).
func (s *QuoteService) Create(ctx context.Context, p *QuoteCreateParams, opts ...RequestOption) (*Quote, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	q, _, err := create[Quote](ctx, s.c, "/quotes", p, false, opts)
	return q, err
}
