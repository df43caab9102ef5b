package invoicing_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// FuzzDecodeMatchesV1 decodes the same bytes into each record type with
// encoding/json (v1, into the v1* types: the records as they were) and with
// the SDK. Wherever v1 accepted the bytes, the SDK must accept them too and
// give the same value in every field, except for the differences the
// package documentation lists ("JSON"), so inputs with one are accepted but
// not compared: a member whose name matches a field only
// case-insensitively, which v1 decoded into the field and the SDK keeps in
// Extra; and a name given twice in one object, whose later object, array or
// null v1 merged or ignored. An outline record that v1 decoded strictly
// must have no mismatched field.
func FuzzDecodeMatchesV1(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
		var recs []json.RawMessage
		if json.Unmarshal(b, &recs) == nil {
			for _, r := range recs {
				f.Add([]byte(r))
			}
		}
	}
	for _, s := range []string{
		`{"id": "a", "id": "b", "total": 1.50, "total": "2.500", "line_items": [{"quantity": 1e3}, null]}`,
		`{"invoice_number": "\u0049NV-\ud83d\ude00", "notes": "caf\u00e9 \xff\xfe", "client_name": "bad \ud800 half"}`,
		`{"status": "paid", "status": "p\u0061id", "issue_date": null, "due_date": "", "updated_at": null}`,
		`{"subtotal": -0.00, "tax_total": 123456789012345678901234567890.5, "amount_due": "  1", "amount_paid": "-0"}`,
		`{"ID": "case", "Total": 1}`, `{"ſtatus": "draft"}`, `null`, `{}`, `[]`, `{"line_items": []}`,
		`{"is_taxable": true, "is_active": false, "unit_price": "10", "item_type": "SERVICE"}`,
		`{"totals": null, "lines": [{"debit": 1}, null]}`, `{"totals": [1, "x"], "as_at": "2026-02-29"}`,
		`{"created_at": "2026-01-02T03:04:05.000+10:00", "valid_until": "2024-02-29"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		diffV1[v1Invoice, invoicing.Invoice](t, b)
		diffV1[v1InvoiceLine, invoicing.InvoiceLineItem](t, b)
		diffV1[v1Item, invoicing.Item](t, b)
		diffV1[v1Quote, invoicing.Quote](t, b)
		diffV1[v1QuoteLine, invoicing.QuoteLineItem](t, b)
		diffV1[v1Contact, invoicing.Contact](t, b)
		diffV1[v1Bill, invoicing.Bill](t, b)
		diffV1[v1Account, invoicing.Account](t, b)
		diffV1[v1TaxCode, invoicing.TaxCode](t, b)
		diffV1[v1Report, invoicing.Report](t, b)
		diffV1[v1BankAccount, invoicing.BankAccount](t, b)
		diffV1[v1BankTransaction, invoicing.BankTransaction](t, b)
	})
}

// diffV1 decodes b into an M with v1 and into an S with the SDK, and
// compares them where v1 accepted b.
func diffV1[M, S any](t *testing.T, b []byte) {
	var m M
	if json.Unmarshal(b, &m) != nil {
		return
	}
	var s S
	require.NoError(t, json.Unmarshal(b, &s), "v1 accepted %s into %T; the SDK must too", b, m)
	if matchesFoldedName(b, reflect.TypeFor[M]()) || !jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true)) {
		return // a documented difference: a name matched only case-insensitively, or a name given twice
	}
	sameFields(t, reflect.ValueOf(m), reflect.ValueOf(s), reflect.TypeFor[S]().Name())
	if o, ok := any(&s).(interface{ MismatchedFields() []string }); ok {
		require.Nil(t, o.MismatchedFields(), "v1 decoded %s strictly", b)
	}
}

// sameFields requires every field of the v1 value m to equal the field of
// the same name of the SDK value s.
func sameFields(t *testing.T, m, s reflect.Value, path string) {
	t.Helper()
	switch mv := m.Interface().(type) {
	case decimal.Decimal:
		sv := s.Interface().(decimal.Decimal)
		require.True(t, mv.Equal(sv) && mv.Exponent() == sv.Exponent(), "%s: v1 %s (exp %d), SDK %s (exp %d)", path, mv, mv.Exponent(), sv, sv.Exponent())
		return
	case time.Time:
		sv := s.Interface().(time.Time)
		require.True(t, mv.Equal(sv) && mv.String() == sv.String(), "%s: v1 %s, SDK %s", path, mv, sv)
		return
	case json.RawMessage: // a report's totals
		raw := s.Interface().(invoicing.ReportTotals).Raw()
		if string(mv) == "null" {
			mv = nil
		}
		require.Equal(t, string(mv), string(raw), path)
		return
	}
	switch m.Kind() {
	case reflect.Struct:
		for i := range m.NumField() {
			name := m.Type().Field(i).Name
			sf := s.FieldByName(name)
			require.True(t, sf.IsValid(), "%s: the SDK has no field %s", path, name)
			sameFields(t, m.Field(i), sf, path+"."+name)
		}
	case reflect.Pointer:
		require.Equal(t, m.IsNil(), s.IsNil(), "%s: nil", path)
		if !m.IsNil() {
			sameFields(t, m.Elem(), s.Elem(), path)
		}
	case reflect.Slice:
		require.Equal(t, m.IsNil(), s.IsNil(), "%s: nil", path)
		require.Equal(t, m.Len(), s.Len(), "%s: length", path)
		for i := range m.Len() {
			sameFields(t, m.Index(i), s.Index(i), path+"[]")
		}
	default:
		require.Equal(t, m.Interface(), s.Convert(m.Type()).Interface(), path)
	}
}

// matchesFoldedName reports whether the JSON b has, at any depth, a member
// whose name equals a JSON field name of t (or of a type within it) only
// case-insensitively: v1 decodes it into that field, the SDK keeps it in
// Extra (a documented difference).
func matchesFoldedName(b []byte, t reflect.Type) bool {
	names := map[string]bool{}
	collectNames(t, names)
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				for n := range names {
					if k != n && strings.EqualFold(k, n) {
						return true
					}
				}
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func collectNames(t reflect.Type, names map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[v1Invoice]().PkgPath() {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names[name] = true
		collectNames(f.Type, names)
	}
}
