package pgmirror

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// The helpers below turn a record's fields into row values (see colType).

func str(s string) *string { return &s }

// strOrNull is str, with NULL for "".
func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// num writes a decimal exactly, keeping the scale the service sent (110.00
// stays 110.00).
func num(d decimal.Decimal) *string {
	s := d.StringFixed(max(0, -d.Exponent()))
	return &s
}

// date writes a civil date as YYYY-MM-DD, NULL for the zero Date.
func date(d invoicing.Date) *string {
	if d.IsZero() {
		return nil
	}
	return str(d.String())
}

// ts writes a datetime, NULL for the zero time.
func ts(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func boolean(b bool) *bool { return &b }

func position(i int) *int32 {
	p := int32(i)
	return &p
}

// version is coalesce(updated, created): the service's version of a record,
// nil when it has neither.
func version(created time.Time, updated *time.Time) *time.Time {
	if updated != nil && !updated.IsZero() {
		return updated
	}
	return ts(created)
}

// outline is a record the service documents only in outline: the SDK tells
// which members it had and which did not fit their typed field.
type outline interface {
	Has(name string) bool
	MismatchedFields() []string
}

// fields returns a function giving a typed column's value for the member
// name of rec: v when the record had the member and it fit its field,
// otherwise NULL, so that a member the service did not send, or sent in
// another shape (kept in raw), is not stored as a zero value.
func fields(rec outline) func(name string, v any) any {
	mismatched := rec.MismatchedFields()
	return func(name string, v any) any {
		if !rec.Has(name) || slices.Contains(mismatched, name) {
			return nil
		}
		return v
	}
}
