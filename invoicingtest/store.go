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

// contact is a client or a supplier.
type contact struct {
	Contact
	createdAt time.Time
	updatedAt *time.Time
}

// item is a catalog item.
type item struct {
	id, code, name, description string
	itemType                    invoicing.ItemType
	unitPrice                   decimal.Decimal
	isTaxable, isActive         bool
	accountID, taxCodeID        string
	createdAt                   time.Time
	updatedAt                   *time.Time
}

// line is a line of an invoice, quote or bill, with its amounts computed.
type line struct {
	id                           string
	itemID, itemCode, itemName   string
	description                  string
	quantity, unitPrice, taxRate decimal.Decimal
	accountID, taxCodeID         string
	// net and tax are the amounts of lineAmounts; amount is their sum, the
	// line total including tax. setAmounts computes all three.
	net, tax, amount decimal.Decimal

	// Quote lines only: set with SetQuoteLineOptions.
	optional, quantityEditable bool
}

// setAmounts computes the line's net amount, tax and amount from its
// quantity, unit price and tax rate.
func (l *line) setAmounts() {
	l.net, l.tax = lineAmounts(l.quantity, l.unitPrice, l.taxRate)
	l.amount = l.net.Add(l.tax)
}

// withQuantity returns the line with another quantity and its amounts
// recomputed.
func (l line) withQuantity(q decimal.Decimal) line {
	l.quantity = q
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
	id, number, clientID string
	status               invoicing.InvoiceStatus
	issueDate, dueDate   time.Time
	currency, notes      string
	reference            string
	lines                []line
	amountPaid           decimal.Decimal
	createdAt            time.Time
	updatedAt            *time.Time
	shareToken           string // public payment link token; set once the invoice awaits payment
}

func (inv *invoice) total() decimal.Decimal {
	_, _, total := sumLines(inv.lines)
	return total
}

func (inv *invoice) amountDue() decimal.Decimal { return inv.total().Sub(inv.amountPaid) }

// statusOn is the status the API shows for the invoice on the business's
// date today: overdue while it is awaiting payment, a balance remains and
// its due date is before today; otherwise the status it was given (see
// "Invoice statuses" in the package documentation).
func (inv *invoice) statusOn(today time.Time) invoicing.InvoiceStatus {
	if inv.status == invoicing.InvoiceStatusAwaitingPayment && inv.dueDate.Before(today) && inv.amountDue().IsPositive() {
		return invoicing.InvoiceStatusOverdue
	}
	return inv.status
}

// quote is a quote with its sharing, viewing and acceptance history.
type quote struct {
	id, number, title, clientID string
	status                      invoicing.QuoteStatus
	issueDate, validUntil       time.Time
	currency, notes             string
	lines                       []line // the offered lines, with all options
	createdAt                   time.Time
	updatedAt                   *time.Time

	shareToken   string
	recipients   []Recipient
	viewCount    int
	lastViewedAt *time.Time
	acceptance   *acceptance
}

// effectiveLines are the lines the API and webhooks show: for an accepted
// quote the client's saved selection, otherwise every offered line.
func (q *quote) effectiveLines() []line {
	if q.status == invoicing.QuoteStatusAccepted && q.acceptance != nil {
		return q.acceptance.lines
	}
	return q.lines
}

// acceptance is what was saved when a quote was accepted.
type acceptance struct {
	lines          []line
	previousStatus invoicing.QuoteStatus // the quote's status before it was accepted
	byStaff        bool
	contact        *Recipient
	acceptedBy     string
	acceptedAt     time.Time
	comments       string
	orderNumber    string
	selections     map[string]any
	invoiceID      string
}

// bill is a supplier bill.
type bill struct {
	id, number, supplierID string
	status                 invoicing.BillStatus
	issueDate, dueDate     time.Time
	currency               string
	lines                  []line
	createdAt              time.Time
	updatedAt              *time.Time
	approvedAt, paidAt     time.Time // zero until approved, paid
}

func (b *bill) total() decimal.Decimal {
	_, _, total := sumLines(b.lines)
	return total
}

// payment is a payment allocated to an invoice.
type payment struct {
	id, invoiceID string
	amount        decimal.Decimal
	method        string
	receivedAt    time.Time
}
