package invoicing

import (
	"net/url"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// BillService reads and creates bills, the business's purchase invoices from
// suppliers (GET /bills, GET /bills/{id}, POST /bills). The service
// documents bills only in outline; see the package documentation for what
// that means for these types.
//
//gen:service path=/bills key=bills record=Bill noun=bill list=BillListParams get create=BillCreateParams
type BillService service

// Bill is a bill from a supplier. Money is exact; amounts are in Currency.
//
// The service documents bills only in outline; see the package
// documentation for what that means for these fields. BillNumber,
// SupplierID, Status, Total and CreatedAt are named as in the bill.created
// webhook, the other fields as on Invoice. A member the SDK has no field for
// is kept in Extra (b.Extra.Get("reference", &ref)); a field the service
// does not send is left zero (b.Has tells absent from zero).
//
//codec:record lenient
//mirror:table name=bills order=8 lines=bill_lines parent=bill_id
type Bill struct {
	// ID identifies the bill, a UUID.
	ID string `json:"id"`
	// BillNumber is the supplier's bill number.
	BillNumber string `json:"bill_number"`
	// SupplierID is the id of the supplier the bill is from (see
	// Client.Suppliers).
	SupplierID string `json:"supplier_id"`
	// SupplierName is the supplier's name.
	SupplierName string `json:"supplier_name"`
	// Status is the bill's status.
	Status BillStatus `json:"status"`
	// IssueDate is the bill's date.
	IssueDate Date `json:"issue_date"`
	// DueDate is when payment is due.
	DueDate Date `json:"due_date"`
	// Currency is a currency code such as "AUD".
	Currency string `json:"currency"`
	// Subtotal is the bill's total before tax.
	Subtotal decimal.Decimal `json:"subtotal"`
	// TaxTotal is the total tax.
	TaxTotal decimal.Decimal `json:"tax_total"`
	// Total is the bill's total including tax.
	Total decimal.Decimal `json:"total"`
	// LineItems are the bill's lines, which Get returns with the bill.
	LineItems []BillLineItem `json:"line_items"`
	// CreatedAt is when the bill was created.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the bill was last updated; nil when the service
	// sends null or nothing.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// BillLineItem is one line of a Bill, with fields named as on
// InvoiceLineItem. A member the SDK has no field for is kept in Extra.
//
//codec:record lenient
type BillLineItem struct {
	// ID identifies the line.
	ID string `json:"id"`
	// Description is the line's text.
	Description string `json:"description"`
	// Quantity is the number of units.
	Quantity decimal.Decimal `json:"quantity"`
	// UnitPrice is the price per unit before tax.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// Amount is the line total including tax, as for invoices.
	Amount decimal.Decimal `json:"amount"`
	// TaxAmount is the line's tax.
	TaxAmount decimal.Decimal `json:"tax_amount"`
	// AccountID is the expense account; nil when the service sends null or
	// nothing.
	AccountID *string `json:"account_id"`
	// TaxCodeID is the tax code; nil when the service sends null or nothing.
	TaxCodeID *string `json:"tax_code_id"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// BillListParams filters GET /bills. The typed filters are named as the
// invoice list's; others go in Extra. Zero fields are not sent.
type BillListParams struct {
	ListParams
	// Status is sent as status.
	Status BillStatus `query:"status"`
	// SupplierID is sent as supplier_id.
	SupplierID string `query:"supplier_id"`
	// Extra holds query parameters the SDK does not know (from_date, say),
	// sent as given. A name a typed field also sets, page or page_size is a
	// *ParamError.
	Extra url.Values
}

// BillCreateParams is the body of POST /bills, which creates a bill with its
// line items. Its fields are named as on InvoiceCreateParams, and empty ones
// are not sent. Unlike an invoice create, the SDK checks none of the
// requirements (a supplier, at least one line, an account and a tax code on
// each line or through the defaults): the service reports what it
// requires, as *Error.
//
//codec:params
type BillCreateParams struct {
	// SupplierID is the id of the supplier the bill is from.
	SupplierID string `json:"supplier_id,omitempty"`
	// BillNumber is the supplier's bill number (bill_number, as in the
	// bill.created webhook).
	BillNumber string `json:"bill_number,omitempty"`
	// IssueDate is the bill's date.
	IssueDate Date `json:"issue_date,omitzero"`
	// DueDate is when payment is due.
	DueDate Date `json:"due_date,omitzero"`
	// Currency is a currency code such as "AUD".
	Currency string `json:"currency,omitempty"`
	// DefaultAccountID is the account (for a bill, an expense account)
	// applied to lines without AccountID.
	DefaultAccountID string `json:"default_account_id,omitempty"`
	// DefaultTaxCodeID is the tax code applied to lines without TaxCodeID.
	DefaultTaxCodeID string `json:"default_tax_code_id,omitempty"`
	// Status is the status to create the bill in, where the service lets
	// the caller choose it (as POST /invoices does); the SDK does not check
	// it.
	Status BillStatus `json:"status,omitempty"`
	// LineItems are the bill's lines, encoded as for invoices (unit_price
	// always sent as an exact number); not sent when empty.
	LineItems []LineItemParams `json:"line_items,omitempty"`
	// Extra holds body members the SDK does not model (a reference, say),
	// sent after the typed fields in name order (decimal.Decimal values as
	// exact numbers, at any depth). A name a typed field also sends is a
	// *ParamError; one whose typed field is empty may be used (e.g.
	// line_items in a shape LineItemParams cannot express).
	Extra map[string]any `json:",embed"`
}
