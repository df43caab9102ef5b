package invoicing

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// Date is a civil date (YYYY-MM-DD) with no time of day and no time zone, as
// the API uses for issue_date, due_date, valid_until and the list filters.
// The zero Date means "unset": it is omitted from requests (omitzero) and
// decodes from JSON null or "".
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// NewDate returns the Date for the given year, month and day. Out-of-range
// values are normalised as time.Date does (2026-02-30 becomes 2026-03-02).
func NewDate(year int, month time.Month, day int) Date {
	return DateOf(time.Date(year, month, day, 0, 0, 0, 0, time.UTC))
}

// DateOf returns the civil date of t in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// ParseDate parses a YYYY-MM-DD string. It rejects any other layout and
// impossible dates such as 2026-02-30.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("invoicing: invalid date %q: want YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// String returns the date as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return string(d.appendTo(make([]byte, 0, 10)))
}

func (d Date) appendTo(b []byte) []byte {
	return d.In(time.UTC).AppendFormat(b, time.DateOnly)
}

// IsZero reports whether d is the zero (unset) Date.
func (d Date) IsZero() bool { return d == Date{} }

// In returns midnight at the start of d in loc.
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// AddDays returns the date n days after d (before it when n is negative).
func (d Date) AddDays(n int) Date { return DateOf(d.In(time.UTC).AddDate(0, 0, n)) }

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// After reports whether d is after e.
func (d Date) After(e Date) bool { return d.Compare(e) > 0 }

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.Year != e.Year:
		return cmpInt(d.Year, e.Year)
	case d.Month != e.Month:
		return cmpInt(int(d.Month), int(e.Month))
	default:
		return cmpInt(d.Day, e.Day)
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MarshalText encodes d as YYYY-MM-DD (empty for the zero Date).
func (d Date) MarshalText() ([]byte, error) {
	if d.IsZero() {
		return []byte{}, nil
	}
	return d.appendTo(make([]byte, 0, 10)), nil
}

// UnmarshalText decodes YYYY-MM-DD; an empty text gives the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	t, err := time.Parse(time.DateOnly, string(b))
	if err != nil {
		return fmt.Errorf("invoicing: invalid date %q: want YYYY-MM-DD", b)
	}
	*d = DateOf(t)
	return nil
}

// MarshalJSON encodes d as "YYYY-MM-DD", or null for the zero Date.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 12)
	b = append(b, '"')
	b = d.appendTo(b)
	return append(b, '"'), nil
}

// MarshalJSONTo encodes d as MarshalJSON does, straight to enc (the
// encoding/json/v2 interface).
func (d Date) MarshalJSONTo(enc *jsontext.Encoder) error {
	if d.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	b := append(enc.AvailableBuffer(), '"')
	b = d.appendTo(b)
	return enc.WriteValue(append(b, '"'))
}

// UnmarshalJSON decodes "YYYY-MM-DD"; null and "" give the zero Date.
func (d *Date) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = Date{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("invoicing: invalid date %s: want a \"YYYY-MM-DD\" string", b)
	}
	return d.UnmarshalText(b[1 : len(b)-1])
}

// UnmarshalJSONFrom decodes the next value of dec as UnmarshalJSON does,
// straight from the token stream (the encoding/json/v2 interface).
func (d *Date) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() != '"' {
		return d.UnmarshalJSON(v) // null, or the error
	}
	if t, ok := parseDateFast(v[1 : len(v)-1]); ok {
		*d = t
		return nil
	}
	return d.UnmarshalText(v[1 : len(v)-1])
}

// parseDateFast parses the YYYY-MM-DD form of a real date without
// allocating; ok is false for anything else, which UnmarshalText then
// parses (or refuses) as time.Parse does.
func parseDateFast(b []byte) (Date, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return Date{}, false
	}
	n := 0
	for i, c := range b {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return Date{}, false
		}
		n = n*10 + int(c-'0')
	}
	d := Date{Year: n / 10000, Month: time.Month(n / 100 % 100), Day: n % 100}
	if d.Month < 1 || d.Month > 12 || d.Day < 1 || d.Day > daysIn(d.Month, d.Year) {
		return Date{}, false
	}
	return d, true
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// InvoiceStatus is the status of an invoice. Values the SDK does not know yet
// are kept as they are, so compare against the constants rather than switching
// exhaustively.
type InvoiceStatus string

// Invoice statuses documented by the API.
const (
	InvoiceStatusDraft           InvoiceStatus = "draft"
	InvoiceStatusAwaitingPayment InvoiceStatus = "awaiting_payment"
	InvoiceStatusPaid            InvoiceStatus = "paid"
	InvoiceStatusOverdue         InvoiceStatus = "overdue"
	InvoiceStatusVoided          InvoiceStatus = "voided"
)

// Known reports whether s is one of the documented invoice statuses.
func (s InvoiceStatus) Known() bool {
	switch s {
	case InvoiceStatusDraft, InvoiceStatusAwaitingPayment, InvoiceStatusPaid, InvoiceStatusOverdue, InvoiceStatusVoided:
		return true
	}
	return false
}

// QuoteStatus is the status of a quote. Unknown values are kept as they are.
type QuoteStatus string

// Quote statuses documented by the API.
const (
	QuoteStatusDraft    QuoteStatus = "draft"
	QuoteStatusSent     QuoteStatus = "sent"
	QuoteStatusAccepted QuoteStatus = "accepted"
	QuoteStatusDeclined QuoteStatus = "declined"
	QuoteStatusExpired  QuoteStatus = "expired"
)

// Known reports whether s is one of the documented quote statuses.
func (s QuoteStatus) Known() bool {
	switch s {
	case QuoteStatusDraft, QuoteStatusSent, QuoteStatusAccepted, QuoteStatusDeclined, QuoteStatusExpired:
		return true
	}
	return false
}

// ItemType is the type of a catalog item. Unknown values are kept as they are.
type ItemType string

// Item types documented by the API.
const (
	ItemTypeSales    ItemType = "SALES"
	ItemTypePurchase ItemType = "PURCHASE"
	ItemTypeText     ItemType = "TEXT"
)

// Known reports whether t is one of the documented item types.
func (t ItemType) Known() bool {
	switch t {
	case ItemTypeSales, ItemTypePurchase, ItemTypeText:
		return true
	}
	return false
}

// UnmarshalJSONFrom decodes a JSON string (null leaves s unchanged),
// straight from the token stream: a documented status costs no allocation.
func (s *InvoiceStatus) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeEnum(dec, s, invoiceStatuses)
}

// UnmarshalJSONFrom decodes a JSON string (null leaves s unchanged),
// straight from the token stream: a documented status costs no allocation.
func (s *QuoteStatus) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeEnum(dec, s, quoteStatuses)
}

// UnmarshalJSONFrom decodes a JSON string (null leaves t unchanged),
// straight from the token stream: a documented type costs no allocation.
func (t *ItemType) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeEnum(dec, t, itemTypes)
}

var (
	invoiceStatuses = []InvoiceStatus{InvoiceStatusDraft, InvoiceStatusAwaitingPayment, InvoiceStatusPaid, InvoiceStatusOverdue, InvoiceStatusVoided}
	quoteStatuses   = []QuoteStatus{QuoteStatusDraft, QuoteStatusSent, QuoteStatusAccepted, QuoteStatusDeclined, QuoteStatusExpired}
	itemTypes       = []ItemType{ItemTypeSales, ItemTypePurchase, ItemTypeText}
)

// decodeEnum decodes the next value of dec, a JSON string, into s, using
// the constant of known that it spells when there is one (no allocation),
// and a new string otherwise. null leaves s unchanged.
func decodeEnum[S ~string](dec *jsontext.Decoder, s *S, known []S) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 'n':
		return nil
	case '"':
		raw := v[1 : len(v)-1]
		for _, k := range known {
			if string(raw) == string(k) {
				*s = k
				return nil
			}
		}
		str, err := unquote(v)
		*s = S(str)
		return err
	}
	return fmt.Errorf("want a string, got %s", jsonopt.KindName(v.Kind()))
}

// Ptr returns a pointer to v, for optional request fields such as
// ItemCreateParams.UnitPrice.
func Ptr[T any](v T) *T { return &v }
