package invoicing

import (
	"context"
	"iter"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// BillService reads and creates bills, the business's purchase invoices from
// suppliers (GET /bills, GET /bills/{id}, POST /bills). API.md lists these
// endpoints without their fields, parameters or scopes; see Bill and the
// params types for what the SDK guesses.
type BillService service

// BillStatus is the status of a bill. API.md shows neither the states of a
// bill nor their values (only the events bill.created and bill.approved):
// the constants are guesses. Values the SDK does not know are kept as they
// are, so compare against the constants rather than switching exhaustively.
type BillStatus string

// Bill statuses guessed by the SDK (API.md does not list them).
const (
	BillStatusDraft            BillStatus = "draft"
	BillStatusAwaitingApproval BillStatus = "awaiting_approval"
	BillStatusApproved         BillStatus = "approved"
	BillStatusPaid             BillStatus = "paid"
)

// Known reports whether s is one of the statuses the SDK guesses.
func (s BillStatus) Known() bool {
	switch s {
	case BillStatusDraft, BillStatusAwaitingApproval, BillStatusApproved, BillStatusPaid:
		return true
	}
	return false
}

// Bill is a bill from a supplier. Money is exact; amounts are in Currency.
//
// API.md does not show the fields of a bill: bill_number, supplier_id, total
// and status come from the bill.created event, and the rest are guesses
// modelled on Invoice. Every field the service sends is kept in the
// embedded RawObject (b.Get("reference", &ref)); a field the service does
// not send is left zero (b.Has tells absent from zero).
type Bill struct {
	RawObject
	// ID identifies the bill (API.md: path ids are UUIDs).
	ID uuid.UUID `json:"id"`
	// BillNumber is the supplier's bill number (as in bill.created).
	BillNumber string `json:"bill_number"`
	// SupplierID is the supplier's id (as in bill.created).
	SupplierID string `json:"supplier_id"`
	// SupplierName is the supplier's name; this field is a guess.
	SupplierName string `json:"supplier_name"`
	// Status is the bill's status (as in bill.created; its values are
	// guesses).
	Status BillStatus `json:"status"`
	// IssueDate is the bill's date; this field is a guess.
	IssueDate Date `json:"issue_date"`
	// DueDate is when payment is due; this field is a guess.
	DueDate Date `json:"due_date"`
	// Currency is a currency code such as "AUD"; this field is a guess.
	Currency string `json:"currency"`
	// Subtotal is before tax; this field is a guess.
	Subtotal decimal.Decimal `json:"subtotal"`
	// TaxTotal is the total tax; this field is a guess.
	TaxTotal decimal.Decimal `json:"tax_total"`
	// Total includes tax (as in bill.created).
	Total decimal.Decimal `json:"total"`
	// LineItems are the bill's lines (API.md: "one bill with line items";
	// the key "line_items" is a guess).
	LineItems []BillLineItem `json:"line_items"`
	// CreatedAt is when the bill was created (as in bill.created).
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is nil when the service sends null or nothing; this field is
	// a guess.
	UpdatedAt *time.Time `json:"updated_at"`
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (b *Bill) UnmarshalJSON(data []byte) error {
	type alias Bill
	return decodeRaw(data, &b.RawObject, (*alias)(b))
}

// MarshalJSON writes the object exactly as the service sent it (so nothing
// is lost; edits to the typed fields are not reflected), or the typed
// fields for a Bill not decoded from JSON.
func (b Bill) MarshalJSON() ([]byte, error) {
	type alias Bill
	return encodeRaw(b.RawObject, alias(b))
}

// BillLineItem is one line of a Bill. API.md does not show it: the fields
// are guesses modelled on InvoiceLineItem, and the whole line is kept in the
// embedded RawObject.
type BillLineItem struct {
	RawObject
	// ID identifies the line.
	ID string `json:"id"`
	// Description is the line's text.
	Description string `json:"description"`
	// Quantity is the number of units.
	Quantity decimal.Decimal `json:"quantity"`
	// UnitPrice is the price per unit before tax.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// Amount is the line total including tax (as for invoices; a guess).
	Amount decimal.Decimal `json:"amount"`
	// TaxAmount is the line's tax.
	TaxAmount decimal.Decimal `json:"tax_amount"`
	// AccountID is the expense account; nil when the service sends null or
	// nothing.
	AccountID *string `json:"account_id"`
	// TaxCodeID is the tax code; nil when the service sends null or nothing.
	TaxCodeID *string `json:"tax_code_id"`
}

// UnmarshalJSON decodes the typed fields and keeps the whole line in
// RawObject.
func (l *BillLineItem) UnmarshalJSON(b []byte) error {
	type alias BillLineItem
	return decodeRaw(b, &l.RawObject, (*alias)(l))
}

// MarshalJSON writes the line exactly as the service sent it, or the typed
// fields for a line not decoded from JSON.
func (l BillLineItem) MarshalJSON() ([]byte, error) {
	type alias BillLineItem
	return encodeRaw(l.RawObject, alias(l))
}

// BillListParams filters GET /bills. API.md shows no filters for bills: the
// typed ones are guesses (modelled on the invoice list); others go in Extra.
// Zero fields are not sent.
type BillListParams struct {
	ListParams
	// Status is sent as status (a guess).
	Status BillStatus
	// SupplierID is sent as supplier_id (a guess).
	SupplierID string
	// Extra holds query parameters the SDK does not know (from_date, say),
	// sent as given. A name a typed field also sets, page or page_size is a
	// *ParamError.
	Extra url.Values
}

func (p *BillListParams) encode(q url.Values) error {
	setString(q, "status", p.Status)
	setString(q, "supplier_id", p.SupplierID)
	return mergeListQuery(q, p.Extra)
}

type billList struct {
	listEnvelope[Bill]
	Bills []Bill `json:"bills"`
}

func (l *billList) page() *Page[Bill] { return l.pageOf(l.Bills) }

// BillCreateParams is the body of POST /bills. API.md says only that a bill
// is created with line items: the fields are guesses modelled on
// InvoiceCreateParams, and empty ones are not sent. The SDK does not enforce
// the guessed requirements (a supplier, at least one line, an account and a
// tax code on each line or through the defaults): the service reports what
// it actually requires, as *Error.
type BillCreateParams struct {
	// SupplierID is the supplier the bill is from; presumably required.
	SupplierID string `json:"supplier_id,omitempty"`
	// BillNumber is the supplier's bill number (as in bill.created).
	BillNumber string `json:"bill_number,omitempty"`
	// IssueDate is the bill's date; this field is a guess.
	IssueDate Date `json:"issue_date,omitzero"`
	// DueDate is when payment is due; this field is a guess.
	DueDate Date `json:"due_date,omitzero"`
	// Currency is a currency code; this field is a guess.
	Currency string `json:"currency,omitempty"`
	// DefaultAccountID applies to lines without AccountID (for a bill, an
	// expense account); this field is a guess.
	DefaultAccountID string `json:"default_account_id,omitempty"`
	// DefaultTaxCodeID applies to lines without TaxCodeID; this field is a
	// guess.
	DefaultTaxCodeID string `json:"default_tax_code_id,omitempty"`
	// Status is the status to create the bill in, when the service allows
	// choosing it (as POST /invoices does); this field is a guess, not
	// checked by the SDK.
	Status BillStatus `json:"status,omitempty"`
	// LineItems are the bill's lines, encoded as for invoices (unit_price
	// always sent as an exact number); not sent when empty.
	LineItems []LineItemParams `json:"line_items,omitempty"`
	// Extra holds body fields the SDK does not know (a reference, say), added
	// after the typed fields. A key a typed field also sends is a
	// *ParamError; a key whose typed field is empty may be used (e.g.
	// line_items in a shape LineItemParams cannot express). Top-level
	// decimal.Decimal values are sent as exact JSON numbers.
	Extra map[string]any `json:"-"`
}

// MarshalJSON encodes the typed fields followed by Extra; see Extra for the
// rules.
func (p BillCreateParams) MarshalJSON() ([]byte, error) {
	type alias BillCreateParams
	return encodeBody(alias(p), p.Extra)
}

func (p *BillCreateParams) body() ([]byte, error) {
	if p == nil {
		return nil, paramErr("params", "is nil")
	}
	return p.MarshalJSON()
}

// List iterates over every bill matching p (nil for all), fetching pages of
// 100 lazily. The records are read from the key "bills" (a guess) or
// "items". Stop early with break; a failure is yielded as the last error.
func (s *BillService) List(ctx context.Context, p *BillListParams) iter.Seq2[*Bill, error] {
	return listAll[Bill, billList](ctx, s.c, "/bills", orNew(p))
}

// ListPage fetches one page of bills matching p (nil for the first page with
// the service's default size).
func (s *BillService) ListPage(ctx context.Context, p *BillListParams) (*Page[Bill], error) {
	return listPage[Bill, billList](ctx, s.c, "/bills", orNew(p))
}

// Get fetches one bill with its line items. An unknown id is ErrNotFound; an
// id that is not a UUID is a *ParamError.
func (s *BillService) Get(ctx context.Context, id string) (*Bill, error) {
	return getOne[Bill](ctx, s.c, "/bills", id)
}

// Create creates a bill and returns it as the service does (201). The SDK
// checks nothing but a nil p and Extra's clashes; the service's validation
// errors come back as *Error (ErrValidation). Creates are never repeated
// after a 5xx or a network error.
func (s *BillService) Create(ctx context.Context, p *BillCreateParams) (*Bill, error) {
	b, err := p.body()
	if err != nil {
		return nil, err
	}
	return createOne[Bill](ctx, s.c, "/bills", b)
}
