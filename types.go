package invoicing

import (
	"bytes"
	"fmt"
	"time"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Date is a civil date (YYYY-MM-DD) with no time of day and no time zone, as
// the API uses for issue_date, due_date, valid_until and the list filters.
// The zero Date means "unset": it is omitted from requests (omitzero) and
// decodes from JSON null or "".
//
//codec:date
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
	d, err := codec.ParseDate([]byte(s))
	if err != nil {
		return Date{}, fmt.Errorf("invoicing: %w", err)
	}
	return Date(d), nil
}

// String returns the date as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return string(codec.AppendDate(make([]byte, 0, 10), codec.Date(d)))
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
func (d Date) Compare(e Date) int { return d.In(time.UTC).Compare(e.In(time.UTC)) }

// MarshalText encodes d as YYYY-MM-DD (empty for the zero Date).
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes YYYY-MM-DD; an empty text gives the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	t, err := ParseDate(string(b))
	if err == nil {
		*d = t
	}
	return err
}

// MarshalJSON encodes d as "YYYY-MM-DD", or null for the zero Date.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON decodes "YYYY-MM-DD"; null and "" give the zero Date.
func (d *Date) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*d = Date{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("invoicing: invalid date %s: want a \"YYYY-MM-DD\" string", b)
	}
	return d.UnmarshalText(b[1 : len(b)-1])
}

// Ptr returns a pointer to v, for optional request fields such as
// ItemCreateParams.UnitPrice.
func Ptr[T any](v T) *T { return &v }
