package webhooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The event structs as they were before the move to encoding/json/v2 (no
// Extra, no JSON methods), which encoding/json (v1) decodes: the baseline of
// FuzzParseMatchesV1 and BenchmarkVerifyParse. Field for field they are the
// package's events, in the same order, each minus its Extra.

type v1InvoiceCreated struct {
	InvoiceID     string                  `json:"invoice_id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	Reference     string                  `json:"reference"`
	Total         decimal.Decimal         `json:"total"`
	Status        invoicing.InvoiceStatus `json:"status"`
	CreatedAt     time.Time               `json:"created_at"`
}

type v1InvoiceSent struct {
	InvoiceID     string    `json:"invoice_id"`
	InvoiceNumber string    `json:"invoice_number"`
	ClientID      string    `json:"client_id"`
	SentAt        time.Time `json:"sent_at"`
}

type v1InvoiceUpdated struct {
	InvoiceID     string                  `json:"invoice_id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	Reference     string                  `json:"reference"`
	Total         decimal.Decimal         `json:"total"`
	Status        invoicing.InvoiceStatus `json:"status"`
	UpdatedAt     time.Time               `json:"updated_at"`
}

type v1InvoicePaid struct {
	InvoiceID     string          `json:"invoice_id"`
	InvoiceNumber string          `json:"invoice_number"`
	ClientID      string          `json:"client_id"`
	Reference     string          `json:"reference"`
	AmountPaid    decimal.Decimal `json:"amount_paid"`
	PaidAt        time.Time       `json:"paid_at"`
}

type v1BillCreated struct {
	BillID     string          `json:"bill_id"`
	BillNumber string          `json:"bill_number"`
	SupplierID string          `json:"supplier_id"`
	Total      decimal.Decimal `json:"total"`
	Status     string          `json:"status"`
	CreatedAt  time.Time       `json:"created_at"`
}

type v1BillApproved struct {
	BillID     string    `json:"bill_id"`
	BillNumber string    `json:"bill_number"`
	SupplierID string    `json:"supplier_id"`
	ApprovedAt time.Time `json:"approved_at"`
}

type v1ContactCreated struct {
	ContactID   string               `json:"contact_id"`
	ContactType webhooks.ContactType `json:"contact_type"`
	Name        string               `json:"name"`
	Email       string               `json:"email"`
	CreatedAt   time.Time            `json:"created_at"`
}

type v1PaymentReceived struct {
	PaymentID     string                 `json:"payment_id"`
	InvoiceID     string                 `json:"invoice_id"`
	Amount        decimal.Decimal        `json:"amount"`
	PaymentMethod webhooks.PaymentMethod `json:"payment_method"`
	ReceivedAt    time.Time              `json:"received_at"`
	InvoiceNumber *string                `json:"invoice_number"`
	Reference     *string                `json:"reference"`
}

type v1Address struct {
	AddressLine1 string `json:"address_line1"`
	AddressLine2 string `json:"address_line2"`
	City         string `json:"city"`
	State        string `json:"state"`
	Postcode     string `json:"postcode"`
	Country      string `json:"country"`
}

type v1QuoteLineItem struct {
	ID          string          `json:"id"`
	ItemCode    string          `json:"item_code"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	UnitPrice   decimal.Decimal `json:"unit_price"`
	Subtotal    decimal.Decimal `json:"subtotal"`
	TaxRate     decimal.Decimal `json:"tax_rate"`
	TaxAmount   decimal.Decimal `json:"tax_amount"`
	Total       decimal.Decimal `json:"total"`
	Optional    bool            `json:"optional"`
}

type v1Quote struct {
	QuoteID        string                `json:"quote_id"`
	QuoteNumber    string                `json:"quote_number"`
	Title          string                `json:"title"`
	ClientID       string                `json:"client_id"`
	ClientName     string                `json:"client_name"`
	ClientEmail    string                `json:"client_email"`
	ClientAddress  v1Address             `json:"client_address"`
	QuotePublicURL *string               `json:"quote_public_url"`
	QuoteAdminURL  string                `json:"quote_admin_url"`
	Status         invoicing.QuoteStatus `json:"status"`
	IssueDate      invoicing.Date        `json:"issue_date"`
	ValidUntil     invoicing.Date        `json:"valid_until"`
	Currency       string                `json:"currency"`
	Subtotal       decimal.Decimal       `json:"subtotal"`
	TaxAmount      decimal.Decimal       `json:"tax_amount"`
	Total          decimal.Decimal       `json:"total"`
	LineItems      []v1QuoteLineItem     `json:"line_items"`
}

type v1QuoteCreated struct {
	v1Quote
	CreatedAt time.Time `json:"created_at"`
}

type v1QuoteSent struct {
	v1Quote
	SentAt time.Time `json:"sent_at"`
}

type v1Viewer struct {
	ContactID    *string                `json:"contact_id"`
	ContactName  string                 `json:"contact_name"`
	ContactEmail string                 `json:"contact_email"`
	ContactType  webhooks.RecipientType `json:"contact_type"`
}

type v1QuoteViewed struct {
	v1Quote
	ViewedAt     time.Time `json:"viewed_at"`
	ViewCount    int       `json:"view_count"`
	LastViewedAt time.Time `json:"last_viewed_at"`
	Viewer       v1Viewer  `json:"viewer"`
}

type v1Recipient struct {
	QuoteContactID string                 `json:"quote_contact_id"`
	ContactID      string                 `json:"contact_id"`
	ContactName    string                 `json:"contact_name"`
	ContactEmail   string                 `json:"contact_email"`
	ContactType    webhooks.RecipientType `json:"contact_type"`
}

type v1AcceptingContact struct {
	ContactID    string                 `json:"contact_id"`
	ContactName  string                 `json:"contact_name"`
	ContactEmail string                 `json:"contact_email"`
	ContactType  webhooks.RecipientType `json:"contact_type"`
}

type v1QuoteAccepted struct {
	v1Quote
	Recipients            []v1Recipient              `json:"recipients"`
	AcceptingContact      *v1AcceptingContact        `json:"accepting_contact"`
	AcceptedBy            string                     `json:"accepted_by"`
	AcceptedAt            time.Time                  `json:"accepted_at"`
	AcceptanceComments    string                     `json:"acceptance_comments"`
	AcceptanceOrderNumber string                     `json:"acceptance_order_number"`
	InteractiveSelections map[string]json.RawMessage `json:"interactive_selections"`

	InvoiceID       *string                  `json:"invoice_id"`
	InvoiceNumber   *string                  `json:"invoice_number"`
	InvoiceStatus   *invoicing.InvoiceStatus `json:"invoice_status"`
	InvoiceAdminURL *string                  `json:"invoice_admin_url"`
	InvoiceShareURL *string                  `json:"invoice_share_url"`
}

type v1QuoteUnaccepted struct {
	v1Quote
	PreviousStatus     invoicing.QuoteStatus `json:"previous_status"`
	UnacceptedAt       time.Time             `json:"unaccepted_at"`
	PreviousAcceptance json.RawMessage       `json:"previous_acceptance"`
}

type v1Test struct {
	Event      string    `json:"event"`
	Timestamp  time.Time `json:"timestamp"`
	Message    string    `json:"message"`
	BusinessID string    `json:"business_id"`
}

// newV1Event returns a new, empty mirror for t, or nil for a type Parse
// does not know.
func newV1Event(t webhooks.EventType) any {
	switch t {
	case webhooks.EventInvoiceCreated:
		return new(v1InvoiceCreated)
	case webhooks.EventInvoiceSent:
		return new(v1InvoiceSent)
	case webhooks.EventInvoiceUpdated:
		return new(v1InvoiceUpdated)
	case webhooks.EventInvoicePaid:
		return new(v1InvoicePaid)
	case webhooks.EventBillCreated:
		return new(v1BillCreated)
	case webhooks.EventBillApproved:
		return new(v1BillApproved)
	case webhooks.EventContactCreated:
		return new(v1ContactCreated)
	case webhooks.EventPaymentReceived:
		return new(v1PaymentReceived)
	case webhooks.EventQuoteCreated:
		return new(v1QuoteCreated)
	case webhooks.EventQuoteSent:
		return new(v1QuoteSent)
	case webhooks.EventQuoteViewed:
		return new(v1QuoteViewed)
	case webhooks.EventQuoteAccepted:
		return new(v1QuoteAccepted)
	case webhooks.EventQuoteUnaccepted:
		return new(v1QuoteUnaccepted)
	case webhooks.EventTest:
		return new(v1Test)
	}
	return nil
}

// parseV1 is Parse as it was for a known type: the body must open with '{',
// decode with encoding/json into the mirror, and carry the type's id and
// time fields (identityFields), non-empty.
func parseV1(eventType webhooks.EventType, body []byte) (any, error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("not an object")
	}
	e := newV1Event(eventType)
	if err := json.Unmarshal(body, e); err != nil {
		return nil, err
	}
	if fields, ok := identityFields[eventType]; ok {
		v := reflect.ValueOf(e).Elem()
		if jsonField(v, fields[0]).String() == "" {
			return nil, fmt.Errorf("no %s", fields[0])
		}
		if jsonField(v, fields[1]).Interface().(time.Time).IsZero() {
			return nil, fmt.Errorf("no %s", fields[1])
		}
	}
	return e, nil
}

// jsonField returns the field of struct v, or of a struct embedded in it,
// whose JSON name is name.
func jsonField(v reflect.Value, name string) reflect.Value {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			if found := jsonField(v.Field(i), name); found.IsValid() {
				return found
			}
		}
		if tagName(f) == name {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

var (
	decimalType = reflect.TypeFor[decimal.Decimal]()
	timeType    = reflect.TypeFor[time.Time]()
	dateType    = reflect.TypeFor[invoicing.Date]()
)

// diffV1 compares a mirror decoded by parseV1 with the event Parse gave,
// field for field, skipping the event's Extra fields; it returns where they
// differ, each difference starting with its JSON Pointer (RFC 6901) from
// path, such as "/line_items/0/total". Decimals are equal when they have the same value and exponent,
// times when they are the same instant, raw JSON when it has the same bytes.
func diffV1(path string, old, ev reflect.Value) []string {
	differ := func() []string { return []string{fmt.Sprintf("%s: v1 %v, v2 %v", path, show(old), show(ev))} }
	switch t := ev.Type(); {
	case t == decimalType:
		o, e := old.Interface().(decimal.Decimal), ev.Interface().(decimal.Decimal)
		if !o.Equal(e) || o.Exponent() != e.Exponent() {
			return differ()
		}
	case t == timeType:
		if !old.Interface().(time.Time).Equal(ev.Interface().(time.Time)) {
			return differ()
		}
	case t == dateType:
		if old.Interface() != ev.Interface() {
			return differ()
		}
	case t.Kind() == reflect.Struct:
		var diffs []string
		j := 0
		for i := range t.NumField() {
			if t.Field(i).Name == "Extra" {
				continue
			}
			p := path
			if !t.Field(i).Anonymous {
				p += "/" + tagName(t.Field(i))
			}
			diffs = append(diffs, diffV1(p, old.Field(j), ev.Field(i))...)
			j++
		}
		if j != old.NumField() {
			panic(fmt.Sprintf("%s: mirror %s has %d fields, %s has %d besides Extra", path, old.Type(), old.NumField(), t, j))
		}
		return diffs
	case t.Kind() == reflect.Pointer:
		if old.IsNil() || ev.IsNil() {
			if old.IsNil() != ev.IsNil() {
				return differ()
			}
			return nil
		}
		return diffV1(path, old.Elem(), ev.Elem())
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8: // raw JSON
		if old.IsNil() != ev.IsNil() || !bytes.Equal(old.Bytes(), ev.Bytes()) {
			return differ()
		}
	case t.Kind() == reflect.Slice:
		if old.IsNil() != ev.IsNil() || old.Len() != ev.Len() {
			return differ()
		}
		var diffs []string
		for i := range ev.Len() {
			diffs = append(diffs, diffV1(fmt.Sprintf("%s/%d", path, i), old.Index(i), ev.Index(i))...)
		}
		return diffs
	case t.Kind() == reflect.Map:
		if old.IsNil() != ev.IsNil() || old.Len() != ev.Len() {
			return differ()
		}
		var diffs []string
		for _, k := range ev.MapKeys() {
			o := old.MapIndex(k)
			if !o.IsValid() {
				return differ()
			}
			diffs = append(diffs, diffV1(path+"/"+pointerEscaper.Replace(k.String()), o, ev.MapIndex(k))...)
		}
		return diffs
	case t.Kind() == reflect.String:
		if old.String() != ev.String() {
			return differ()
		}
	default: // bool, int
		if old.Interface() != ev.Interface() {
			return differ()
		}
	}
	return nil
}

// pointerEscaper escapes a name for a JSON Pointer.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// show formats a value of diffV1 for its message.
func show(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case decimal.Decimal:
		return fmt.Sprintf("%s (exponent %d)", x, x.Exponent())
	case []byte, json.RawMessage:
		return fmt.Sprintf("%q", x)
	}
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		return fmt.Sprintf("%q", v.Bytes())
	}
	return fmt.Sprintf("%#v", v.Interface())
}
