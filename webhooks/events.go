package webhooks

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/codec"
)

//lint:file-ignore SA5008 The string option of the money fields is read by internal/cmd/recordgen: the generated JSON methods write them as JSON strings, as the service sends them.

// An Event is the parsed body of a delivery: a pointer to one of the event
// structs of this package (*InvoiceCreated, ..., *QuoteUnaccepted, *Test), or
// a *RawEvent for a type the package does not know. Switch on its concrete
// type.
//
// In every event a string or datetime field that is absent or null in the body
// is left empty ("" or the zero time.Time); a field the API documents as
// optional is a pointer, nil when absent or null. The members of the body
// that the event has no field for are kept in its Extra, and so are those
// of each nested object (a line item, a recipient, ...) in that object's
// Extra. Every event marshals back, with encoding/json or encoding/json/v2,
// to the members it was parsed from (see the package documentation, JSON).
type Event interface {
	// EventType returns the type the event was parsed as.
	EventType() EventType
}

// InvoiceCreated is the body of invoice.created: an invoice was created.
//
//codec:record
type InvoiceCreated struct {
	InvoiceID     string                  `json:"invoice_id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	Reference     string                  `json:"reference"`    // external reference; "" when the invoice has none
	Total         decimal.Decimal         `json:"total,string"` // including tax
	Status        invoicing.InvoiceStatus `json:"status"`
	CreatedAt     time.Time               `json:"created_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// InvoiceSent is the body of invoice.sent: an invoice was sent or marked as
// sent.
//
//codec:record
type InvoiceSent struct {
	InvoiceID     string    `json:"invoice_id"`
	InvoiceNumber string    `json:"invoice_number"`
	ClientID      string    `json:"client_id"`
	SentAt        time.Time `json:"sent_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// InvoiceUpdated is the body of invoice.updated: an invoice's header, line
// items or contacts changed (never sent for payments).
//
//codec:record
type InvoiceUpdated struct {
	InvoiceID     string                  `json:"invoice_id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	Reference     string                  `json:"reference"`    // "" when the invoice has none
	Total         decimal.Decimal         `json:"total,string"` // including tax
	Status        invoicing.InvoiceStatus `json:"status"`
	UpdatedAt     time.Time               `json:"updated_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// InvoicePaid is the body of invoice.paid: an invoice became fully paid. The
// payment that cleared the balance also sends a PaymentReceived; the two may
// arrive in either order.
//
//codec:record
type InvoicePaid struct {
	InvoiceID     string          `json:"invoice_id"`
	InvoiceNumber string          `json:"invoice_number"`
	ClientID      string          `json:"client_id"`
	Reference     string          `json:"reference"` // "" when the invoice has none
	AmountPaid    decimal.Decimal `json:"amount_paid,string"`
	PaidAt        time.Time       `json:"paid_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// BillCreated is the body of bill.created: a bill was created, including by
// OCR upload.
//
//codec:record
type BillCreated struct {
	BillID     string          `json:"bill_id"`
	BillNumber string          `json:"bill_number"`
	SupplierID string          `json:"supplier_id"`
	Total      decimal.Decimal `json:"total,string"`
	Status     string          `json:"status"` // bill statuses are not documented; kept as sent
	CreatedAt  time.Time       `json:"created_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// BillApproved is the body of bill.approved: a bill was approved for payment,
// including by automatic approval.
//
//codec:record
type BillApproved struct {
	BillID     string    `json:"bill_id"`
	BillNumber string    `json:"bill_number"`
	SupplierID string    `json:"supplier_id"`
	ApprovedAt time.Time `json:"approved_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// ContactType says whether a contact is a client or a supplier. Unknown
// values are kept as they are.
type ContactType string

// Contact types documented by the API.
const (
	ContactTypeClient   ContactType = "client"
	ContactTypeSupplier ContactType = "supplier"
)

// ContactCreated is the body of contact.created: a client or supplier was
// created (in the user interface, through the API or by OCR).
//
//codec:record
type ContactCreated struct {
	ContactID   string      `json:"contact_id"`
	ContactType ContactType `json:"contact_type"`
	Name        string      `json:"name"`
	Email       string      `json:"email"` // "" when the contact has none
	CreatedAt   time.Time   `json:"created_at"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// PaymentMethod is how a payment was made: bank_transfer, a value naming the
// card payment processor, or another value. All are kept as they are.
type PaymentMethod string

// PaymentMethodBankTransfer is a payment by bank transfer, the one payment
// method value the API documentation names.
const PaymentMethodBankTransfer PaymentMethod = "bank_transfer"

// PaymentReceived is the body of payment.received: a payment (deposit,
// partial or full) was allocated to an invoice.
//
//codec:record
type PaymentReceived struct {
	PaymentID     string          `json:"payment_id"`
	InvoiceID     string          `json:"invoice_id"`
	Amount        decimal.Decimal `json:"amount,string"`
	PaymentMethod PaymentMethod   `json:"payment_method"`
	ReceivedAt    time.Time       `json:"received_at"`
	// InvoiceNumber is optional: nil when the body has no invoice_number.
	InvoiceNumber *string `json:"invoice_number"`
	// Reference is optional: nil when the body has no reference.
	Reference *string `json:"reference"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// Address is a postal address, such as a quote's client_address.
//
//codec:record
type Address struct {
	AddressLine1 string `json:"address_line1"`
	AddressLine2 string `json:"address_line2"`
	City         string `json:"city"`
	State        string `json:"state"`
	Postcode     string `json:"postcode"`
	Country      string `json:"country"`
	// Extra holds the members of the object that no other field holds,
	// each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// QuoteLineItem is one line of a quote in a webhook body. Its money fields
// arrive as JSON strings.
//
//codec:record
type QuoteLineItem struct {
	ID          string          `json:"id"`
	ItemCode    string          `json:"item_code"` // "" when the line is not linked to a catalog item
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity,string"`
	UnitPrice   decimal.Decimal `json:"unit_price,string"` // before tax, per unit
	Subtotal    decimal.Decimal `json:"subtotal,string"`   // before tax
	TaxRate     decimal.Decimal `json:"tax_rate,string"`   // as sent; whether percent or fraction is not documented
	TaxAmount   decimal.Decimal `json:"tax_amount,string"`
	Total       decimal.Decimal `json:"total,string"` // including tax
	Optional    bool            `json:"optional"`
	// Extra holds the members of the object that no other field holds,
	// each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// Quote holds the fields every quote event carries; QuoteCreated, QuoteSent,
// QuoteViewed, QuoteAccepted and QuoteUnaccepted embed it. Money fields
// arrive as JSON strings. Quote has no Extra of its own: the members of a
// quote event's body that no field holds are in the event's Extra. Decode
// and encode the event, not a Quote alone.
type Quote struct {
	QuoteID       string  `json:"quote_id"`
	QuoteNumber   string  `json:"quote_number"`
	Title         string  `json:"title"`
	ClientID      string  `json:"client_id"`
	ClientName    string  `json:"client_name"`
	ClientEmail   string  `json:"client_email"` // the client's primary email
	ClientAddress Address `json:"client_address"`
	// QuotePublicURL is the customer share link; nil when no share token
	// exists yet.
	QuotePublicURL *string               `json:"quote_public_url"`
	QuoteAdminURL  string                `json:"quote_admin_url"` // the staff link
	Status         invoicing.QuoteStatus `json:"status"`
	IssueDate      invoicing.Date        `json:"issue_date"`
	ValidUntil     invoicing.Date        `json:"valid_until"`
	Currency       string                `json:"currency"`
	Subtotal       decimal.Decimal       `json:"subtotal,string"` // before tax
	TaxAmount      decimal.Decimal       `json:"tax_amount,string"`
	Total          decimal.Decimal       `json:"total,string"` // including tax
	LineItems      []QuoteLineItem       `json:"line_items"`
}

// QuoteCreated is the body of quote.created, with the full quote and all its
// options.
//
//codec:record
type QuoteCreated struct {
	Quote
	CreatedAt time.Time `json:"created_at"`
	// Extra holds the members of the body that neither Quote nor another
	// field holds, each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// QuoteSent is the body of quote.sent, with the full quote and all its
// options.
//
//codec:record
type QuoteSent struct {
	Quote
	SentAt time.Time `json:"sent_at"`
	// Extra holds the members of the body that neither Quote nor another
	// field holds, each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// RecipientType is a quote contact's role on the quote, such as "to". Quotes
// have To and CC contacts, but only "to" is documented by value; other values
// are kept as they are.
type RecipientType string

// RecipientTo is the role of a contact the quote is addressed to.
const RecipientTo RecipientType = "to"

// Viewer is the recipient who opened a quote's share link.
//
//codec:record
type Viewer struct {
	ContactID    *string       `json:"contact_id"` // nil when the service sends null
	ContactName  string        `json:"contact_name"`
	ContactEmail string        `json:"contact_email"`
	ContactType  RecipientType `json:"contact_type"`
	// Extra holds the members of the object that no other field holds,
	// each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// QuoteViewed is the body of quote.viewed: a recipient viewed the quote's
// share link. It carries the full quote and all its options.
//
//codec:record
type QuoteViewed struct {
	Quote
	ViewedAt     time.Time `json:"viewed_at"`
	ViewCount    int       `json:"view_count"`     // views so far, this one included
	LastViewedAt time.Time `json:"last_viewed_at"` // zero when absent or null
	Viewer       Viewer    `json:"viewer"`
	// Extra holds the members of the body that neither Quote nor another
	// field holds, each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// Recipient is one To or CC contact of a quote.
//
//codec:record
type Recipient struct {
	QuoteContactID string        `json:"quote_contact_id"`
	ContactID      string        `json:"contact_id"`
	ContactName    string        `json:"contact_name"`
	ContactEmail   string        `json:"contact_email"`
	ContactType    RecipientType `json:"contact_type"`
	// Extra holds the members of the object that no other field holds,
	// each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// AcceptingContact is the recipient who accepted a quote through its share
// link.
//
//codec:record
type AcceptingContact struct {
	ContactID    string        `json:"contact_id"`
	ContactName  string        `json:"contact_name"`
	ContactEmail string        `json:"contact_email"`
	ContactType  RecipientType `json:"contact_type"`
	// Extra holds the members of the object that no other field holds,
	// each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// QuoteAccepted is the body of quote.accepted: the quote was accepted by a
// recipient or, on their behalf, by staff. Its totals and line items are the
// accepted selection only (excluded options are omitted, quantities are the
// accepted ones).
//
// The invoice fields are set when the quote was converted into an invoice,
// and all nil when the conversion failed; InvoiceShareURL is nil also when the
// invoice has no public payment link.
//
//codec:record
type QuoteAccepted struct {
	Quote
	Recipients []Recipient `json:"recipients"` // every To and CC contact
	// AcceptingContact is nil when staff accepted on the recipient's behalf.
	AcceptingContact      *AcceptingContact `json:"accepting_contact"`
	AcceptedBy            string            `json:"accepted_by"` // the name recorded at acceptance
	AcceptedAt            time.Time         `json:"accepted_at"`
	AcceptanceComments    string            `json:"acceptance_comments"`
	AcceptanceOrderNumber string            `json:"acceptance_order_number"`
	// InteractiveSelections is the client's raw selection map, keyed
	// "package-{id}", "package-group-{id}" or "section-{index}"; its values'
	// shape is not documented.
	InteractiveSelections map[string]jsontext.Value `json:"interactive_selections"`

	InvoiceID       *string                  `json:"invoice_id"`
	InvoiceNumber   *string                  `json:"invoice_number"`
	InvoiceStatus   *invoicing.InvoiceStatus `json:"invoice_status"` // draft or awaiting_payment
	InvoiceAdminURL *string                  `json:"invoice_admin_url"`
	InvoiceShareURL *string                  `json:"invoice_share_url"`
	// Extra holds the members of the body that neither Quote nor another
	// field holds, each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// QuoteUnaccepted is the body of quote.unaccepted: the acceptance was
// withdrawn (undone, or replaced by editing into a new version).
//
//codec:record
type QuoteUnaccepted struct {
	Quote
	PreviousStatus invoicing.QuoteStatus `json:"previous_status"`
	UnacceptedAt   time.Time             `json:"unaccepted_at"`
	// PreviousAcceptance is the withdrawn acceptance as raw JSON, since its
	// shape is not documented: nil when the field is absent, the text null
	// when it is null.
	PreviousAcceptance jsontext.Value `json:"previous_acceptance"`
	// Extra holds the members of the body that neither Quote nor another
	// field holds, each as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// Test is the body of the delivery sent when a webhook is tested (event type
// "test").
//
//codec:record
type Test struct {
	Event      string    `json:"event"` // "test"
	Timestamp  time.Time `json:"timestamp"`
	Message    string    `json:"message"`
	BusinessID string    `json:"business_id"`
	// Extra holds the members of the body that no other field holds, each
	// as sent (see invoicing.Extra).
	Extra invoicing.Extra `json:",embed"`

	meta codec.Meta
}

// RawEvent is a delivery of a type this package does not know. Body is a
// copy of the JSON object as received, for the caller to decode.
type RawEvent struct {
	Type EventType
	Body jsontext.Value
}

// EventType returns EventInvoiceCreated.
func (*InvoiceCreated) EventType() EventType { return EventInvoiceCreated }

// EventType returns EventInvoiceSent.
func (*InvoiceSent) EventType() EventType { return EventInvoiceSent }

// EventType returns EventInvoiceUpdated.
func (*InvoiceUpdated) EventType() EventType { return EventInvoiceUpdated }

// EventType returns EventInvoicePaid.
func (*InvoicePaid) EventType() EventType { return EventInvoicePaid }

// EventType returns EventBillCreated.
func (*BillCreated) EventType() EventType { return EventBillCreated }

// EventType returns EventBillApproved.
func (*BillApproved) EventType() EventType { return EventBillApproved }

// EventType returns EventContactCreated.
func (*ContactCreated) EventType() EventType { return EventContactCreated }

// EventType returns EventPaymentReceived.
func (*PaymentReceived) EventType() EventType { return EventPaymentReceived }

// EventType returns EventQuoteCreated.
func (*QuoteCreated) EventType() EventType { return EventQuoteCreated }

// EventType returns EventQuoteSent.
func (*QuoteSent) EventType() EventType { return EventQuoteSent }

// EventType returns EventQuoteViewed.
func (*QuoteViewed) EventType() EventType { return EventQuoteViewed }

// EventType returns EventQuoteAccepted.
func (*QuoteAccepted) EventType() EventType { return EventQuoteAccepted }

// EventType returns EventQuoteUnaccepted.
func (*QuoteUnaccepted) EventType() EventType { return EventQuoteUnaccepted }

// EventType returns EventTest.
func (*Test) EventType() EventType { return EventTest }

// EventType returns the type the delivery named.
func (e *RawEvent) EventType() EventType { return e.Type }

// identity names the event a body describes: the body's own id field (such
// as invoice_id) and its time field (such as paid_at). Parse requires both,
// and Delivery.EventKey is made of them.
type identity struct {
	idField, id string
	atField     string
	at          time.Time
}

// identified is implemented by every typed event except Test, whose body has
// no id of its own.
type identified interface {
	identity() identity
}

func (e *InvoiceCreated) identity() identity {
	return identity{"invoice_id", e.InvoiceID, "created_at", e.CreatedAt}
}

func (e *InvoiceSent) identity() identity {
	return identity{"invoice_id", e.InvoiceID, "sent_at", e.SentAt}
}

func (e *InvoiceUpdated) identity() identity {
	return identity{"invoice_id", e.InvoiceID, "updated_at", e.UpdatedAt}
}

func (e *InvoicePaid) identity() identity {
	return identity{"invoice_id", e.InvoiceID, "paid_at", e.PaidAt}
}

func (e *BillCreated) identity() identity {
	return identity{"bill_id", e.BillID, "created_at", e.CreatedAt}
}

func (e *BillApproved) identity() identity {
	return identity{"bill_id", e.BillID, "approved_at", e.ApprovedAt}
}

func (e *ContactCreated) identity() identity {
	return identity{"contact_id", e.ContactID, "created_at", e.CreatedAt}
}

func (e *PaymentReceived) identity() identity {
	return identity{"payment_id", e.PaymentID, "received_at", e.ReceivedAt}
}

func (e *QuoteCreated) identity() identity {
	return identity{"quote_id", e.QuoteID, "created_at", e.CreatedAt}
}

func (e *QuoteSent) identity() identity {
	return identity{"quote_id", e.QuoteID, "sent_at", e.SentAt}
}

func (e *QuoteViewed) identity() identity {
	return identity{"quote_id", e.QuoteID, "viewed_at", e.ViewedAt}
}

func (e *QuoteAccepted) identity() identity {
	return identity{"quote_id", e.QuoteID, "accepted_at", e.AcceptedAt}
}

func (e *QuoteUnaccepted) identity() identity {
	return identity{"quote_id", e.QuoteID, "unaccepted_at", e.UnacceptedAt}
}
