package invoicingtest

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// store is the business's data. The Server's mutex guards it.
type store struct {
	clients      table[contact]
	suppliers    table[contact]
	accounts     table[Account]
	taxCodes     table[TaxCode]
	items        table[item]
	invoices     table[invoice]
	quotes       table[quote]
	bills        table[bill]
	bankAccounts table[BankAccount]
	bankTxns     table[BankTransaction]
	payments     []payment

	invoiceSeq, quoteSeq, billSeq int
}

// table holds records by id and in insertion order (the order lists use).
type table[T any] struct {
	byID  map[string]*T
	order []*T
}

// add stores v under id. It reports false, storing nothing, when id is
// already taken.
func (t *table[T]) add(id string, v *T) bool {
	if t.byID == nil {
		t.byID = map[string]*T{}
	}
	if _, dup := t.byID[id]; dup {
		return false
	}
	t.byID[id] = v
	t.order = append(t.order, v)
	return true
}

// get returns the record with the id, or nil.
func (t *table[T]) get(id string) *T { return t.byID[id] }

// all returns the records in insertion order.
func (t *table[T]) all() []*T { return t.order }

// find returns the record with the id for a helper, or an ErrNotFound that
// names it as a what.
func (t *table[T]) find(what, id string) (*T, error) {
	if v := t.get(id); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("%w: %s %s", ErrNotFound, what, id)
}

// first returns the first record, in insertion order, that match accepts,
// or nil.
func (t *table[T]) first(match func(*T) bool) *T {
	for _, v := range t.order {
		if match(v) {
			return v
		}
	}
	return nil
}

// The records below are saved as they are by SaveState: their JSON tags
// name the members of its document, whose decimals are strings (see
// stateOptions). The unexported fields follow from the others and are
// computed again by LoadState.

// contact is a client or a supplier.
type contact struct {
	Contact
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitzero"`
}

// item is a catalog item.
type item struct {
	ID          string             `json:"id"`
	Code        string             `json:"item_code"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	ItemType    invoicing.ItemType `json:"item_type"`
	UnitPrice   decimal.Decimal    `json:"unit_price"`
	IsTaxable   bool               `json:"is_taxable"`
	IsActive    bool               `json:"is_active"`
	AccountID   string             `json:"account_id"`
	TaxCodeID   string             `json:"tax_code_id"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   *time.Time         `json:"updated_at,omitzero"`
}

// line is a line of an invoice, quote or bill, with its amounts computed.
type line struct {
	ID          string          `json:"id"`
	ItemID      string          `json:"item_id,omitempty"`
	ItemCode    string          `json:"item_code,omitempty"`
	ItemName    string          `json:"item_name,omitempty"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	UnitPrice   decimal.Decimal `json:"unit_price"`
	TaxRate     decimal.Decimal `json:"tax_rate"`
	AccountID   string          `json:"account_id"`
	TaxCodeID   string          `json:"tax_code_id"`
	// net and tax are the amounts of lineAmounts; amount is their sum, the
	// line total including tax. setAmounts computes all three.
	net, tax, amount decimal.Decimal

	// Quote lines only: set with SetQuoteLineOptions.
	Optional         bool `json:"optional,omitzero"`
	QuantityEditable bool `json:"quantity_editable,omitzero"`
}

// setAmounts computes the line's net amount, tax and amount from its
// quantity, unit price and tax rate.
func (l *line) setAmounts() {
	l.net, l.tax = lineAmounts(l.Quantity, l.UnitPrice, l.TaxRate)
	l.amount = l.net.Add(l.tax)
}

// withQuantity returns the line with another quantity and its amounts
// recomputed.
func (l line) withQuantity(q decimal.Decimal) line {
	l.Quantity = q
	l.setAmounts()
	return l
}

// sumLines returns the subtotal (before tax), tax total and total of lines.
// The sums start from the first line's amounts, not from zero, which
// decimal would first rescale.
func sumLines(lines []line) (subtotal, taxTotal, total decimal.Decimal) {
	if len(lines) == 0 {
		return subtotal, taxTotal, total
	}
	subtotal, taxTotal, total = lines[0].net, lines[0].tax, lines[0].amount
	for _, l := range lines[1:] {
		subtotal = subtotal.Add(l.net)
		taxTotal = taxTotal.Add(l.tax)
		total = total.Add(l.amount)
	}
	return subtotal, taxTotal, total
}

// invoice is a sales invoice.
type invoice struct {
	ID         string                  `json:"id"`
	Number     string                  `json:"invoice_number"`
	ClientID   string                  `json:"client_id"`
	Status     invoicing.InvoiceStatus `json:"status"`
	IssueDate  date                    `json:"issue_date"`
	DueDate    date                    `json:"due_date"`
	Currency   string                  `json:"currency"`
	Notes      string                  `json:"notes"`
	Reference  string                  `json:"reference"`
	Lines      []line                  `json:"line_items"`
	amountPaid decimal.Decimal         // the sum of its payments
	CreatedAt  time.Time               `json:"created_at"`
	UpdatedAt  *time.Time              `json:"updated_at,omitzero"`
	ShareToken string                  `json:"share_token,omitempty"` // public payment link token; set once the invoice awaits payment
}

func (inv *invoice) total() decimal.Decimal {
	_, _, total := sumLines(inv.Lines)
	return total
}

func (inv *invoice) amountDue() decimal.Decimal { return inv.total().Sub(inv.amountPaid) }

// statusOn is the status the API shows for the invoice on the business's
// date today: overdue while it is awaiting payment, a balance remains and
// its due date is before today; otherwise the status it was given (see
// "Invoice statuses" in the package documentation).
func (inv *invoice) statusOn(today time.Time) invoicing.InvoiceStatus {
	if inv.Status == invoicing.InvoiceStatusAwaitingPayment && time.Time(inv.DueDate).Before(today) && inv.amountDue().IsPositive() {
		return invoicing.InvoiceStatusOverdue
	}
	return inv.Status
}

// quote is a quote with its sharing, viewing and acceptance history.
type quote struct {
	ID         string                `json:"id"`
	Number     string                `json:"quote_number"`
	Title      string                `json:"title"`
	ClientID   string                `json:"client_id"`
	Status     invoicing.QuoteStatus `json:"status"`
	IssueDate  date                  `json:"issue_date"`
	ValidUntil date                  `json:"valid_until"`
	Currency   string                `json:"currency"`
	Notes      string                `json:"notes"`
	Lines      []line                `json:"line_items"` // the offered lines, with all options
	CreatedAt  time.Time             `json:"created_at"`
	UpdatedAt  *time.Time            `json:"updated_at,omitzero"`

	ShareToken   string      `json:"share_token,omitempty"`
	Recipients   []Recipient `json:"recipients,omitempty"`
	ViewCount    int         `json:"view_count,omitzero"`
	LastViewedAt *time.Time  `json:"last_viewed_at,omitzero"`
	Acceptance   *acceptance `json:"acceptance,omitzero"` // while accepted
}

// effectiveLines are the lines the API and webhooks show: for an accepted
// quote the client's saved selection, otherwise every offered line.
func (q *quote) effectiveLines() []line {
	if q.Status == invoicing.QuoteStatusAccepted && q.Acceptance != nil {
		return q.Acceptance.Lines
	}
	return q.Lines
}

// acceptance is what was saved when a quote was accepted.
type acceptance struct {
	Lines          []line                `json:"line_items"`
	PreviousStatus invoicing.QuoteStatus `json:"previous_status"` // the quote's status before it was accepted
	ByStaff        bool                  `json:"by_staff"`
	Contact        *Recipient            `json:"contact,omitzero"`
	AcceptedBy     string                `json:"accepted_by"`
	AcceptedAt     time.Time             `json:"accepted_at"`
	Comments       string                `json:"comments"`
	OrderNumber    string                `json:"order_number"`
	Selections     map[string]any        `json:"interactive_selections"`
	InvoiceID      string                `json:"invoice_id,omitempty"`
}

// bill is a supplier bill.
type bill struct {
	ID         string               `json:"id"`
	Number     string               `json:"bill_number"`
	SupplierID string               `json:"supplier_id"`
	Status     invoicing.BillStatus `json:"status"`
	IssueDate  date                 `json:"issue_date"`
	DueDate    date                 `json:"due_date"`
	Currency   string               `json:"currency"`
	Lines      []line               `json:"line_items"`
	CreatedAt  time.Time            `json:"created_at"`
	UpdatedAt  *time.Time           `json:"updated_at,omitzero"`
	ApprovedAt time.Time            `json:"approved_at,omitzero"` // zero until approved
	PaidAt     time.Time            `json:"paid_at,omitzero"`     // zero until paid
}

func (b *bill) total() decimal.Decimal {
	_, _, total := sumLines(b.Lines)
	return total
}

// payment is a payment allocated to an invoice.
type payment struct {
	ID         string          `json:"id"`
	InvoiceID  string          `json:"invoice_id"`
	Amount     decimal.Decimal `json:"amount"`
	Method     string          `json:"payment_method"`
	ReceivedAt time.Time       `json:"received_at"`
}
