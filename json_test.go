package invoicing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// The record codec through the public API: every record type decodes and
// encodes back exactly what it was decoded from, whatever the service
// sends; the outline records decode leniently; params encode as the API
// expects.

// jsRecord is one record type: a record of it in its canonical JSON (every
// field non-zero, the members in field order, as the record writes itself),
// and the same record built in code.
type jsRecord struct {
	typ       reflect.Type
	lenient   bool
	canonical string
	built     any // *T
}

func (r jsRecord) name() string { return r.typ.Name() }

// jsLenient is what the outline records offer besides JSON.
type jsLenient interface {
	Has(name string) bool
	MismatchedFields() []string
}

func jsTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func jsTimePtr(s string) *time.Time { t := jsTime(s); return &t }

// jsDec is a decimal as the codec decodes it (a zero keeps its places).
func jsDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

const (
	jsInvLine1 = `{"id":"li_1","description":"Consulting, November","quantity":10.5,"unit_price":100.00,"amount":1155.00,"tax_amount":105.00,"account_id":"4000","tax_code_id":"GST"}`
	jsInvLine2 = `{"id":"li_2","description":"Travel","quantity":1,"unit_price":184.50,"amount":202.95,"tax_amount":18.45,"account_id":null,"tax_code_id":null}`
	jsQLine1   = `{"id":"0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","item_id":"9d7e6f5a-4b3c-4d2e-8f10-112233445566","item_code":"WIDGET-01","item_name":"Widget","description":"A very good widget","quantity":1,"unit_price":100,"amount":101,"tax_amount":1}`
	jsQLine2   = `{"id":"1c0d9e8f-7a6b-4c5d-9e3f-2a1b0c9d8e7f","description":"Unlinked line","quantity":0.5,"unit_price":10,"amount":5,"tax_amount":0}`
	jsBLine1   = `{"id":"bl_1","description":"A4 paper, 80 boxes","quantity":80,"unit_price":12.50,"amount":1100.00,"tax_amount":100.00,"account_id":"6100","tax_code_id":"GST"}`
	jsBLine2   = `{"id":"bl_2","description":"Rounding","quantity":0.5,"unit_price":0.20,"amount":0.11,"tax_amount":0.01,"account_id":null,"tax_code_id":null}`
	jsRLine1   = `{"account_id":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","account_code":"200","account_name":"Sales","account_type":"revenue","debit":0,"credit":15500.10,"balance":-15500.10}`
	jsRLine2   = `{"account_id":"3a4b5c6d-7e8f-4a9b-8c1d-2e3f4a5b6c7d","account_code":"610","account_name":"Receivables","account_type":"asset","debit":15500.10,"credit":0,"balance":15500.10}`
)

func jsStr(s string) *string { return &s }

func jsInvLines() []invoicing.InvoiceLineItem {
	return []invoicing.InvoiceLineItem{
		{ID: "li_1", Description: "Consulting, November", Quantity: jsDec("10.5"), UnitPrice: jsDec("100.00"), Amount: jsDec("1155.00"), TaxAmount: jsDec("105.00"), AccountID: jsStr("4000"), TaxCodeID: jsStr("GST")},
		{ID: "li_2", Description: "Travel", Quantity: jsDec("1"), UnitPrice: jsDec("184.50"), Amount: jsDec("202.95"), TaxAmount: jsDec("18.45")},
	}
}

func jsQLines() []invoicing.QuoteLineItem {
	return []invoicing.QuoteLineItem{
		{ID: "0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", ItemID: "9d7e6f5a-4b3c-4d2e-8f10-112233445566", ItemCode: "WIDGET-01", ItemName: "Widget", Description: "A very good widget",
			Quantity: jsDec("1"), UnitPrice: jsDec("100"), Amount: jsDec("101"), TaxAmount: jsDec("1")},
		{ID: "1c0d9e8f-7a6b-4c5d-9e3f-2a1b0c9d8e7f", Description: "Unlinked line", Quantity: jsDec("0.5"), UnitPrice: jsDec("10"), Amount: jsDec("5"), TaxAmount: decimal.Zero},
	}
}

func jsBLines() []invoicing.BillLineItem {
	return []invoicing.BillLineItem{
		{ID: "bl_1", Description: "A4 paper, 80 boxes", Quantity: jsDec("80"), UnitPrice: jsDec("12.50"), Amount: jsDec("1100.00"), TaxAmount: jsDec("100.00"), AccountID: jsStr("6100"), TaxCodeID: jsStr("GST")},
		{ID: "bl_2", Description: "Rounding", Quantity: jsDec("0.5"), UnitPrice: jsDec("0.20"), Amount: jsDec("0.11"), TaxAmount: jsDec("0.01")},
	}
}

func jsRLines() []invoicing.ReportLine {
	return []invoicing.ReportLine{
		{AccountID: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", AccountCode: "200", AccountName: "Sales", AccountType: invoicing.AccountTypeRevenue, Debit: decimal.Zero, Credit: jsDec("15500.10"), Balance: jsDec("-15500.10")},
		{AccountID: "3a4b5c6d-7e8f-4a9b-8c1d-2e3f4a5b6c7d", AccountCode: "610", AccountName: "Receivables", AccountType: invoicing.AccountTypeAsset, Debit: jsDec("15500.10"), Credit: decimal.Zero, Balance: jsDec("15500.10")},
	}
}

// jsTotals returns ReportTotals holding raw, as decoded.
func jsTotals(raw string) invoicing.ReportTotals {
	var t invoicing.ReportTotals
	if err := t.UnmarshalJSON([]byte(raw)); err != nil {
		panic(err)
	}
	return t
}

// jsRecords are the fourteen record types.
func jsRecords() []jsRecord {
	yes := true
	return []jsRecord{
		{typ: reflect.TypeFor[invoicing.Invoice](),
			canonical: `{"id":"3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f","invoice_number":"INV-0042","client_id":"c0ffee00-1111-4222-8333-444455556666","client_name":"Acme Pty Ltd","status":"awaiting_payment","issue_date":"2026-11-01","due_date":"2026-11-15","subtotal":1234.50,"tax_total":123.45,"total":1357.95,"amount_paid":0.00,"amount_due":1357.95,"currency":"AUD","notes":"Thank you","reference":"ERP-7781","line_items":[` + jsInvLine1 + `,` + jsInvLine2 + `],"created_at":"2026-11-01T09:30:00Z","updated_at":"2026-11-02T10:00:00.5Z"}`,
			built: &invoicing.Invoice{ID: "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", InvoiceNumber: "INV-0042", ClientID: "c0ffee00-1111-4222-8333-444455556666", ClientName: "Acme Pty Ltd",
				Status: invoicing.InvoiceStatusAwaitingPayment, IssueDate: invoicing.NewDate(2026, 11, 1), DueDate: invoicing.NewDate(2026, 11, 15),
				Subtotal: jsDec("1234.50"), TaxTotal: jsDec("123.45"), Total: jsDec("1357.95"), AmountPaid: jsDec("0.00"), AmountDue: jsDec("1357.95"),
				Currency: "AUD", Notes: "Thank you", Reference: "ERP-7781", LineItems: jsInvLines(),
				CreatedAt: jsTime("2026-11-01T09:30:00Z"), UpdatedAt: jsTimePtr("2026-11-02T10:00:00.5Z")}},
		{typ: reflect.TypeFor[invoicing.InvoiceLineItem](), canonical: jsInvLine1, built: &jsInvLines()[0]},
		{typ: reflect.TypeFor[invoicing.Item](),
			canonical: `{"id":"9d7e6f5a-4b3c-4d2e-8f10-112233445566","item_code":"WIDGET-01","name":"Widget","description":"A very good widget","item_type":"SALES","unit_price":19.999,"is_taxable":true,"account_id":"4000","tax_code_id":"GST","is_active":true,"created_at":"2026-10-01T00:00:00Z","updated_at":"2026-10-02T12:00:00.5Z"}`,
			built: &invoicing.Item{ID: "9d7e6f5a-4b3c-4d2e-8f10-112233445566", ItemCode: "WIDGET-01", Name: "Widget", Description: "A very good widget", ItemType: invoicing.ItemTypeSales,
				UnitPrice: jsDec("19.999"), IsTaxable: true, AccountID: "4000", TaxCodeID: "GST", IsActive: true,
				CreatedAt: jsTime("2026-10-01T00:00:00Z"), UpdatedAt: jsTimePtr("2026-10-02T12:00:00.5Z")}},
		{typ: reflect.TypeFor[invoicing.Quote](),
			canonical: `{"id":"7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d","quote_number":"QU-0007","title":"Website rebuild","client_id":"c0ffee00-1111-4222-8333-444455556666","client_name":"Acme Pty Ltd","status":"accepted","issue_date":"2026-11-03","valid_until":"2026-12-03","subtotal":100,"tax_total":1,"total":101,"currency":"AUD","notes":"private","line_items":[` + jsQLine1 + `,` + jsQLine2 + `],"created_at":"2026-11-03T08:00:00Z","updated_at":"2026-11-04T08:00:00Z"}`,
			built: &invoicing.Quote{ID: "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d", QuoteNumber: "QU-0007", Title: "Website rebuild", ClientID: "c0ffee00-1111-4222-8333-444455556666", ClientName: "Acme Pty Ltd",
				Status: invoicing.QuoteStatusAccepted, IssueDate: invoicing.NewDate(2026, 11, 3), ValidUntil: invoicing.NewDate(2026, 12, 3),
				Subtotal: jsDec("100"), TaxTotal: jsDec("1"), Total: jsDec("101"), Currency: "AUD", Notes: "private", LineItems: jsQLines(),
				CreatedAt: jsTime("2026-11-03T08:00:00Z"), UpdatedAt: jsTimePtr("2026-11-04T08:00:00Z")}},
		{typ: reflect.TypeFor[invoicing.QuoteLineItem](), canonical: jsQLine1, built: &jsQLines()[0]},
		{typ: reflect.TypeFor[invoicing.Contact](), lenient: true,
			canonical: `{"id":"7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e","name":"Acme Pty Ltd","email":"accounts@acme.example","phone":"+61 2 9000 0000","created_at":"2026-10-01T08:00:00Z","updated_at":"2026-10-02T09:15:30Z"}`,
			built: &invoicing.Contact{ID: "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e", Name: "Acme Pty Ltd", Email: "accounts@acme.example", Phone: "+61 2 9000 0000",
				CreatedAt: jsTime("2026-10-01T08:00:00Z"), UpdatedAt: jsTimePtr("2026-10-02T09:15:30Z")}},
		{typ: reflect.TypeFor[invoicing.Bill](), lenient: true,
			canonical: `{"id":"9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d","bill_number":"SUP-INV-7781","supplier_id":"5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d","supplier_name":"Paper Supplies Co","status":"awaiting_approval","issue_date":"2026-11-02","due_date":"2026-12-02","currency":"AUD","subtotal":1000.10,"tax_total":100.01,"total":1100.11,"line_items":[` + jsBLine1 + `,` + jsBLine2 + `],"created_at":"2026-11-02T09:30:00Z","updated_at":"2026-11-03T10:00:00Z"}`,
			built: &invoicing.Bill{ID: "9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", BillNumber: "SUP-INV-7781", SupplierID: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", SupplierName: "Paper Supplies Co",
				Status: invoicing.BillStatusAwaitingApproval, IssueDate: invoicing.NewDate(2026, 11, 2), DueDate: invoicing.NewDate(2026, 12, 2), Currency: "AUD",
				Subtotal: jsDec("1000.10"), TaxTotal: jsDec("100.01"), Total: jsDec("1100.11"), LineItems: jsBLines(),
				CreatedAt: jsTime("2026-11-02T09:30:00Z"), UpdatedAt: jsTimePtr("2026-11-03T10:00:00Z")}},
		{typ: reflect.TypeFor[invoicing.BillLineItem](), lenient: true, canonical: jsBLine1, built: &jsBLines()[0]},
		{typ: reflect.TypeFor[invoicing.Account](), lenient: true,
			canonical: `{"id":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","code":"200","name":"Sales","type":"revenue","is_active":true}`,
			built:     &invoicing.Account{ID: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", Code: "200", Name: "Sales", Type: invoicing.AccountTypeRevenue, IsActive: &yes}},
		{typ: reflect.TypeFor[invoicing.TaxCode](), lenient: true,
			canonical: `{"id":"2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e","code":"GSTX","name":"Composite","rate":12.375,"region":"AU"}`,
			built:     &invoicing.TaxCode{ID: "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", Code: "GSTX", Name: "Composite", Rate: jsDec("12.375"), Region: "AU"}},
		{typ: reflect.TypeFor[invoicing.Report](), lenient: true,
			canonical: `{"report":"trial_balance","as_at":"2026-06-30","from_date":"2026-01-01","to_date":"2026-06-30","currency":"AUD","lines":[` + jsRLine1 + `,` + jsRLine2 + `],"totals":{"credit":15500.10,"debit":15500.10}}`,
			built: &invoicing.Report{Name: "trial_balance", AsAt: invoicing.NewDate(2026, 6, 30), FromDate: invoicing.NewDate(2026, 1, 1), ToDate: invoicing.NewDate(2026, 6, 30),
				Currency: "AUD", Lines: jsRLines(), Totals: jsTotals(`{"credit":15500.10,"debit":15500.10}`)}},
		{typ: reflect.TypeFor[invoicing.ReportLine](), lenient: true, canonical: jsRLine1, built: &jsRLines()[0]},
		{typ: reflect.TypeFor[invoicing.BankAccount](), lenient: true,
			canonical: `{"id":"acc-op-1","name":"Operating","account_number":"062-000 1234 5678","currency":"AUD","balance":25031.07}`,
			built:     &invoicing.BankAccount{ID: "acc-op-1", Name: "Operating", AccountNumber: "062-000 1234 5678", Currency: "AUD", Balance: jsDec("25031.07")}},
		{typ: reflect.TypeFor[invoicing.BankTransaction](), lenient: true,
			canonical: `{"id":"3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f","bank_account_id":"acc-op-1","date":"2026-11-03","description":"Paper Supplies Co","amount":-1100.11,"reference":"SUP-INV-7781","status":"reconciled"}`,
			built: &invoicing.BankTransaction{ID: "3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f", BankAccountID: "acc-op-1", Date: invoicing.NewDate(2026, 11, 3), Description: "Paper Supplies Co",
				Amount: jsDec("-1100.11"), Reference: "SUP-INV-7781", Status: "reconciled"}},
	}
}

// jsRecordOf returns the jsRecord of typ.
func jsRecordOf(typ reflect.Type) jsRecord {
	for _, r := range jsRecords() {
		if r.typ == typ {
			return r
		}
	}
	panic("no record " + typ.String())
}

// jsField is one typed field of a record: its JSON name and Go type.
type jsField struct {
	name string
	typ  reflect.Type
	omit bool
}

// jsFields returns the typed fields of record type typ, in order.
func jsFields(typ reflect.Type) []jsField {
	var out []jsField
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Name == "Extra" {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, jsField{name: name, typ: f.Type, omit: strings.Contains(opts, "omit")})
	}
	return out
}

// jsElem returns the record type of a slice-of-records field, or nil.
func jsElem(typ reflect.Type) reflect.Type {
	if typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct {
		return typ.Elem()
	}
	return nil
}

// jsMember is one member of a JSON object.
type jsMember struct{ name, value string }

// jsParse returns the members of the JSON object s, in order, their values
// compact.
func jsParse(t testing.TB, s string) []jsMember {
	t.Helper()
	dec := jsontext.NewDecoder(strings.NewReader(s))
	tok, err := dec.ReadToken()
	require.NoError(t, err)
	require.Equal(t, jsontext.Kind('{'), tok.Kind(), s)
	var out []jsMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		require.NoError(t, err)
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		require.NoError(t, err)
		v = v.Clone()
		require.NoError(t, v.Compact())
		out = append(out, jsMember{name, string(v)})
	}
	return out
}

// jsElements returns the elements of the JSON array s, compact.
func jsElements(t testing.TB, s string) []string {
	t.Helper()
	dec := jsontext.NewDecoder(strings.NewReader(s))
	_, err := dec.ReadToken()
	require.NoError(t, err)
	var out []string
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		require.NoError(t, err)
		v = v.Clone()
		require.NoError(t, v.Compact())
		out = append(out, string(v))
	}
	return out
}

// jsJoin writes members as a compact JSON object.
func jsJoin(ms []jsMember) string {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, m.name)
		b = append(append(b, ':'), m.value...)
	}
	return string(append(b, '}'))
}

// jsSet returns ms with the member name set to value (appended when there
// is none); jsDel returns ms without it.
func jsSet(ms []jsMember, name, value string) []jsMember {
	out := slices.Clone(ms)
	for i := range out {
		if out[i].name == name {
			out[i].value = value
			return out
		}
	}
	return append(out, jsMember{name, value})
}

func jsDel(ms []jsMember, name string) []jsMember {
	return slices.DeleteFunc(slices.Clone(ms), func(m jsMember) bool { return m.name == name })
}

func jsGet(ms []jsMember, name string) (string, bool) {
	for _, m := range ms {
		if m.name == name {
			return m.value, true
		}
	}
	return "", false
}

// jsOrdered returns the JSON object s (a record of type typ) as the record
// writes it: its fields' members in field order, then the others in name
// order, nested records the same way.
func jsOrdered(t testing.TB, typ reflect.Type, s string) string {
	t.Helper()
	if s == "null" {
		return s
	}
	ms := jsParse(t, s)
	var out []jsMember
	for _, f := range jsFields(typ) {
		v, ok := jsGet(ms, f.name)
		if !ok {
			continue
		}
		if elem := jsElem(f.typ); elem != nil && strings.HasPrefix(v, "[") {
			els := jsElements(t, v)
			for i := range els {
				els[i] = jsOrdered(t, elem, els[i])
			}
			v = "[" + strings.Join(els, ",") + "]"
		}
		out = append(out, jsMember{f.name, v})
		ms = jsDel(ms, f.name)
	}
	slices.SortFunc(ms, func(a, b jsMember) int { return strings.Compare(a.name, b.name) })
	return jsJoin(append(out, ms...))
}

var (
	jsDecimalType = reflect.TypeFor[decimal.Decimal]()
	jsDateType    = reflect.TypeFor[invoicing.Date]()
	jsTimeType    = reflect.TypeFor[time.Time]()
	jsTimePtrType = reflect.TypeFor[*time.Time]()
	jsTotalsType  = reflect.TypeFor[invoicing.ReportTotals]()
)

// jsFitting returns JSON values that fit a field of type typ, other than
// the canonical form: each must come back exactly as sent. exact is false
// for those that come back equal but written otherwise.
func jsFitting(typ reflect.Type) (exact []string, equal []string) {
	switch {
	case typ == jsDecimalType:
		return []string{`"-5.00"`, `"12.30"`, `"0"`, `null`, `1.50`, `0`, `-0`, `0.0`, `-0.00`, `1e3`, `-1.5E-2`, `0.10`,
			`123456789012345678901234567890.123456789`, `-0.000000000000000000001`}, nil
	case typ == jsDateType:
		return []string{`""`, `null`, `"2024-02-29"`}, nil
	case typ == jsTimeType || typ == jsTimePtrType:
		return []string{`null`, `"2026-11-01T09:30:00+00:00"`, `"2026-11-01T09:30:00.000Z"`, `"2026-11-01T09:30:00.500000Z"`,
			`"2026-11-01T19:30:00+10:00"`, `"2026-11-01T04:00:00.123456789-05:30"`, `"2026-11-01T09:30:00.5Z"`, `"0001-01-01T00:00:00Z"`}, nil
	case typ.Kind() == reflect.Bool:
		return []string{`null`, `false`, `true`}, nil
	case typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Bool:
		return []string{`null`, `false`, `true`}, nil
	case typ.Kind() == reflect.String:
		return []string{`null`, `""`, `"plain"`, `"ünïcode ✓"`}, []string{`"a\"b\\c\u00e9\ud83d\ude00 \u003c\/"`}
	case typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.String:
		return []string{`null`, `""`, `"x"`}, []string{`"\u0078"`}
	case jsElem(typ) != nil:
		return []string{`[]`, `null`, `[null]`}, nil
	case typ == jsTotalsType:
		return []string{`null`, `{}`, `[1.50,2]`, `"x"`, `7`, `{"net":"12.30","gross":1.50}`}, nil
	}
	panic("jsFitting: no values for " + typ.String())
}

// jsMismatched returns JSON values that do not fit a field of type typ.
func jsMismatched(typ reflect.Type) []string {
	switch {
	case typ == jsDecimalType:
		return []string{`"10%"`, `{"value":1}`, `true`, `"1,100.11"`, `[1]`, `""`}
	case typ == jsDateType:
		return []string{`"2026-11-03T09:30:00Z"`, `20261103`, `"01/07/2025"`, `"2026-02-30"`, `{}`}
	case typ == jsTimeType || typ == jsTimePtrType:
		return []string{`"2026-10-05"`, `1791360000`, `""`, `"yesterday"`, `[]`}
	case typ.Kind() == reflect.Bool, typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Bool:
		return []string{`"yes"`, `1`, `"true"`}
	case typ.Kind() == reflect.String, typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.String:
		return []string{`7`, `true`, `{"a":1}`, `["x"]`}
	case jsElem(typ) != nil:
		return []string{`{}`, `"x"`, `[1]`, `[[]]`, `7`}
	case typ == jsTotalsType:
		return nil // totals keep whatever the service sends
	}
	panic("jsMismatched: no values for " + typ.String())
}

// jsVariant is a record's JSON that differs from its canonical form.
type jsVariant struct {
	what, json string
	exact      bool // it must come back byte for byte (in the record's member order)
}

// jsVariants returns variants of the record s of type typ whose members
// all fit: each field absent, and set to each fitting value; members the
// record has no field for, at the top and in nested records; and each
// variant of a nested record in the first element of its array.
func jsVariants(t testing.TB, typ reflect.Type, s string) []jsVariant {
	ms := jsParse(t, s)
	out := []jsVariant{
		{"no member", `{}`, true},
		{"unknown members", jsJoin(append(slices.Clone(ms), jsMember{"zz_unknown", `{"a":[1,"b",null,1.50],"n":{"d":"2026-01-01"}}`},
			jsMember{"aa_first", `null`}, jsMember{strings.ToUpper(ms[0].name), `"another case"`}, jsMember{"", `""`})), true},
		{"unknown members first", jsJoin(append([]jsMember{{"purchase_order", `"PO-7781"`}, {"discount", `{"rate":0.050,"reason":"loyalty"}`}}, ms...)), true},
	}
	for _, f := range jsFields(typ) {
		out = append(out, jsVariant{f.name + " absent", jsJoin(jsDel(ms, f.name)), true})
		exact, equal := jsFitting(f.typ)
		for _, v := range exact {
			out = append(out, jsVariant{f.name + " = " + v, jsJoin(jsSet(ms, f.name, v)), true})
		}
		for _, v := range equal {
			out = append(out, jsVariant{f.name + " = " + v, jsJoin(jsSet(ms, f.name, v)), false})
		}
		elem := jsElem(f.typ)
		arr, ok := jsGet(ms, f.name)
		if elem == nil || !ok {
			continue
		}
		els := jsElements(t, arr)
		for _, ev := range jsVariants(t, elem, els[0]) {
			nested := append([]string{ev.json}, els[1:]...)
			out = append(out, jsVariant{f.name + "[0]: " + ev.what, jsJoin(jsSet(ms, f.name, "["+strings.Join(nested, ",")+"]")), ev.exact})
		}
		out = append(out, jsVariant{f.name + " with a null element", jsJoin(jsSet(ms, f.name, "[null,"+strings.Join(els, ",")+"]")), true})
	}
	return out
}

// jsDecode decodes s into a new record of type typ with encoding/json.
func jsDecode(typ reflect.Type, s string) (any, error) {
	v := reflect.New(typ).Interface()
	return v, json.Unmarshal([]byte(s), v)
}

// jsAssertRoundTrip decodes s into a new record of type typ and checks that
// it encodes back to s: the same members and values (JSONEq) through
// encoding/json and encoding/json/v2, and with exact, byte for byte in the
// record's member order. It returns the record.
func jsAssertRoundTrip(t *testing.T, typ reflect.Type, s string, exact bool, msgAndArgs ...any) any {
	t.Helper()
	v, err := jsDecode(typ, s)
	require.NoError(t, err, msgAndArgs...)
	out, err := json.Marshal(v)
	require.NoError(t, err, msgAndArgs...)
	assert.JSONEq(t, s, string(out), msgAndArgs...)
	out2, err := jsonv2.Marshal(v)
	require.NoError(t, err, msgAndArgs...)
	assert.JSONEq(t, s, string(out2), msgAndArgs...)
	own, err := v.(json.Marshaler).MarshalJSON()
	require.NoError(t, err, msgAndArgs...)
	if exact {
		assert.Equal(t, jsOrdered(t, typ, s), string(own), msgAndArgs...)
	}
	// A fixed point: what it writes decodes to a record writing the same.
	again, err := jsDecode(typ, string(own))
	require.NoError(t, err, msgAndArgs...)
	own2, err := again.(json.Marshaler).MarshalJSON()
	require.NoError(t, err, msgAndArgs...)
	assert.Equal(t, string(own), string(own2), msgAndArgs...)
	// Decoding with encoding/json/v2 gives the same record.
	v2 := reflect.New(typ).Interface()
	require.NoError(t, jsonv2.Unmarshal([]byte(s), v2), msgAndArgs...)
	own3, err := v2.(json.Marshaler).MarshalJSON()
	require.NoError(t, err, msgAndArgs...)
	assert.Equal(t, string(own), string(own3), msgAndArgs...)
	return v
}

// Every record decodes its canonical JSON to exactly the record built in
// code, and both write the canonical JSON back, byte for byte.
func TestJSONCanonicalRecordsEqualBuiltRecords(t *testing.T) {
	for _, r := range jsRecords() {
		t.Run(r.name(), func(t *testing.T) {
			v := jsAssertRoundTrip(t, r.typ, r.canonical, true)
			assert.True(t, reflect.DeepEqual(r.built, v), "decoded from canonical JSON, the record is reflect.DeepEqual to the record built in code:\n%#v\n%#v", r.built, v)
			b, err := json.Marshal(r.built)
			require.NoError(t, err)
			assert.Equal(t, r.canonical, string(b), "a record built in code writes its canonical JSON")
			assert.Nil(t, reflect.ValueOf(v).Elem().FieldByName("Extra").Interface(), "documented fields leave nothing in Extra")
			if r.lenient {
				assert.Nil(t, v.(jsLenient).MismatchedFields())
			}
		})
	}
}

// The round-trip property: whatever members a record is decoded from (each
// field absent, null, of another fitting form: money as a string, "" for a
// date, a datetime with an offset or fractional zeros, a number keeping
// its places; members no field holds, at any depth), it encodes back to
// exactly those members and values.
func TestJSONEveryRecordRoundTrips(t *testing.T) {
	for _, r := range jsRecords() {
		t.Run(r.name(), func(t *testing.T) {
			variants := jsVariants(t, r.typ, r.canonical)
			require.Greater(t, len(variants), 20)
			for _, v := range variants {
				jsAssertRoundTrip(t, r.typ, v.json, v.exact, "%s: %s", v.what, v.json)
			}
		})
	}
}

// Money sent as a JSON string stays a string, written as sent; a number
// keeps its places.
func TestJSONMoneyKeepsItsForm(t *testing.T) {
	for _, r := range jsRecords() {
		ms := jsParse(t, r.canonical)
		for _, f := range jsFields(r.typ) {
			if f.typ != jsDecimalType {
				continue
			}
			for _, v := range []string{`"-5.00"`, `1.50`, `"1e2"`, `100.000`} {
				body := jsJoin(jsSet(ms, f.name, v))
				rec, err := jsDecode(r.typ, body)
				require.NoError(t, err)
				out, err := json.Marshal(rec)
				require.NoError(t, err)
				assert.Contains(t, string(out), `"`+f.name+`":`+v, "%s.%s = %s", r.name(), f.name, v)
				got := reflect.ValueOf(rec).Elem().FieldByName(jsGoName(r.typ, f.name)).Interface().(decimal.Decimal)
				want := decimal.RequireFromString(strings.Trim(v, `"`))
				assert.True(t, want.Equal(got), "%s.%s = %s decodes to %s", r.name(), f.name, v, got)
			}
		}
	}
}

// jsGoName returns the Go name of the field of typ whose JSON name is name.
func jsGoName(typ reflect.Type, name string) string {
	for i := range typ.NumField() {
		if n, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); n == name && typ.Field(i).IsExported() {
			return typ.Field(i).Name
		}
	}
	return ""
}

// A record built in code writes every field (but those its tag omits when
// empty), zero or not; what it writes decodes back to the same.
func TestJSONBuiltRecordsWriteAllFields(t *testing.T) {
	for _, r := range jsRecords() {
		t.Run(r.name(), func(t *testing.T) {
			zero := reflect.New(r.typ).Interface()
			b, err := json.Marshal(zero)
			require.NoError(t, err)
			ms := jsParse(t, string(b))
			var names []string
			for _, m := range ms {
				names = append(names, m.name)
			}
			var want []string
			for _, f := range jsFields(r.typ) {
				if !f.omit {
					want = append(want, f.name)
				}
			}
			assert.Equal(t, want, names, "every field, in order: %s", b)
			for _, m := range ms {
				f := jsFields(r.typ)[slices.IndexFunc(jsFields(r.typ), func(f jsField) bool { return f.name == m.name })]
				switch {
				case f.typ == jsDecimalType:
					assert.Equal(t, "0", m.value, m.name)
				case f.typ == jsDateType, f.typ.Kind() == reflect.Pointer, f.typ.Kind() == reflect.Slice:
					assert.Equal(t, "null", m.value, m.name)
				case f.typ == jsTimeType:
					assert.Equal(t, `"0001-01-01T00:00:00Z"`, m.value, m.name)
				case f.typ == jsTotalsType:
					assert.Equal(t, `{}`, m.value, m.name)
				}
			}
			jsAssertRoundTrip(t, r.typ, string(b), true)
			if r.lenient {
				for _, f := range jsFields(r.typ) {
					assert.Equal(t, !f.omit, zero.(jsLenient).Has(f.name), "Has(%q) of a built record: whether it writes one", f.name)
				}
				assert.False(t, zero.(jsLenient).Has("unknown"))
				assert.Nil(t, zero.(jsLenient).MismatchedFields())
			}

			// Omitted fields are written once set.
			full, err := json.Marshal(r.built)
			require.NoError(t, err)
			assert.Len(t, jsParse(t, string(full)), len(jsFields(r.typ)), "%s", full)
		})
	}
}

// An Extra member set in code is written after the fields, in name order;
// one named like a field is written instead of the field.
func TestJSONExtraSetInCode(t *testing.T) {
	c := invoicing.Contact{ID: "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e", Name: "Built", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Extra: invoicing.Extra{"tax_number": jsontext.Value(`"51 824"`), "a_first": jsontext.Value(`1`), "phone": jsontext.Value(`61290000000`)}}
	out, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e","name":"Built","email":"","created_at":"2026-01-02T03:04:05Z","updated_at":null,"a_first":1,"phone":61290000000,"tax_number":"51 824"}`, string(out))
	assert.True(t, c.Has("tax_number"))
	assert.True(t, c.Has("phone"))
	assert.Equal(t, []string{"phone"}, c.MismatchedFields(), "an Extra member named like a field stands for it")

	inv := invoicing.Invoice{Notes: "typed", Extra: invoicing.Extra{"notes": jsontext.Value(`"from extra"`)}}
	out, err = json.Marshal(inv)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(out), `"notes"`))
	assert.Contains(t, string(out), `"notes":"from extra"`)
}

// Decoding from canonical JSON gives a record equal to one built in code
// with zero amounts written the way users write them (decimal.Zero).
func TestJSONZeroAmountsEqualBuiltRecords(t *testing.T) {
	built := invoicing.BankAccount{ID: "acc", Balance: decimal.Zero}
	b, err := json.Marshal(built)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"acc","name":"","account_number":"","currency":"","balance":0}`, string(b))
	var got invoicing.BankAccount
	require.NoError(t, json.Unmarshal(b, &got))
	assert.True(t, got.Balance.Equal(decimal.Zero))
	assert.True(t, reflect.DeepEqual(built, got), "a record built with decimal.Zero equals the record decoded from its own JSON")
}

// An outline record does not fail on a member whose value does not fit its
// field: the field is left zero, named by MismatchedFields, the value kept
// in Extra, and the record encodes back as sent. A documented record fails
// with an error naming the member's path.
func TestJSONMismatchedMembers(t *testing.T) {
	for _, r := range jsRecords() {
		t.Run(r.name(), func(t *testing.T) {
			ms := jsParse(t, r.canonical)
			for _, f := range jsFields(r.typ) {
				for _, bad := range jsMismatched(f.typ) {
					body := jsJoin(jsSet(ms, f.name, bad))
					msg := fmt.Sprintf("%s = %s", f.name, bad)
					v, err := jsDecode(r.typ, body)
					if !r.lenient {
						require.Error(t, err, msg)
						assert.Contains(t, err.Error(), "field "+f.name, msg)
						continue
					}
					require.NoError(t, err, msg)
					rec := v.(jsLenient)
					assert.Equal(t, []string{f.name}, rec.MismatchedFields(), msg)
					field := reflect.ValueOf(v).Elem().FieldByName(jsGoName(r.typ, f.name))
					assert.True(t, field.IsZero(), "%s: the field is left zero (a pointer nil)", msg)
					// The other fields decode as if the member were absent.
					without, err := jsDecode(r.typ, jsJoin(jsDel(ms, f.name)))
					require.NoError(t, err)
					assert.Equal(t, jsTyped(without), jsTyped(v), msg)
					extra := reflect.ValueOf(v).Elem().FieldByName("Extra").Interface().(invoicing.Extra)
					assert.Equal(t, bad, string(extra[f.name]), msg)
					assert.True(t, rec.Has(f.name), msg)
					out, err := json.Marshal(v)
					require.NoError(t, err)
					assert.JSONEq(t, body, string(out), msg)
					assert.Contains(t, string(out), `"`+f.name+`":`+bad, "%s: written as sent", msg)
					// A fixed point.
					again, err := jsDecode(r.typ, string(out))
					require.NoError(t, err)
					assert.Equal(t, rec.MismatchedFields(), again.(jsLenient).MismatchedFields())
				}
			}
		})
	}
}

// jsTyped returns the typed fields of the record v points to, as JSON of a
// struct without Extra: for comparing what two records hold.
func jsTyped(v any) map[string]string {
	out := map[string]string{}
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if !f.IsExported() || f.Name == "Extra" {
			continue
		}
		b, _ := json.Marshal(rv.Field(i).Interface())
		out[f.Name] = string(b)
	}
	return out
}

// Mismatches in nested outline records are the nested record's, not the
// parent's; a documented record fails naming the nested path.
func TestJSONNestedMismatches(t *testing.T) {
	for _, r := range jsRecords() {
		for _, f := range jsFields(r.typ) {
			elem := jsElem(f.typ)
			if elem == nil {
				continue
			}
			er := jsRecordOf(elem)
			ms := jsParse(t, r.canonical)
			arr, _ := jsGet(ms, f.name)
			els := jsElements(t, arr)
			ems := jsParse(t, els[0])
			for _, ef := range jsFields(elem) {
				for _, bad := range jsMismatched(ef.typ) {
					line := jsJoin(jsSet(ems, ef.name, bad))
					body := jsJoin(jsSet(ms, f.name, "["+els[0]+","+line+"]"))
					msg := fmt.Sprintf("%s: %s[1].%s = %s", r.name(), f.name, ef.name, bad)
					v, err := jsDecode(r.typ, body)
					if !er.lenient {
						require.Error(t, err, msg)
						assert.Contains(t, err.Error(), fmt.Sprintf("field %s[1].%s:", f.name, ef.name), msg)
						continue
					}
					require.NoError(t, err, msg)
					assert.Nil(t, v.(jsLenient).MismatchedFields(), msg)
					lines := reflect.ValueOf(v).Elem().FieldByName(jsGoName(r.typ, f.name))
					require.Equal(t, 2, lines.Len(), msg)
					assert.Nil(t, lines.Index(0).Interface().(jsLenient).MismatchedFields(), msg)
					assert.Equal(t, []string{ef.name}, lines.Index(1).Interface().(jsLenient).MismatchedFields(), msg)
					out, err := json.Marshal(v)
					require.NoError(t, err)
					assert.JSONEq(t, body, string(out), msg)
				}
			}
		}
	}
}

// Mismatched fields are named in field order; a member given twice counts
// as its last, as with encoding/json.
func TestJSONMismatchedFieldsOrderAndDuplicates(t *testing.T) {
	var a invoicing.Account
	body := `{"is_active": 1, "code": 200, "id": "a", "type": ["y"], "name": {"n": 1}}`
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	names := a.MismatchedFields()
	assert.Equal(t, []string{"code", "name", "type", "is_active"}, names)
	names[0] = "changed"
	assert.Equal(t, []string{"code", "name", "type", "is_active"}, a.MismatchedFields(), "the caller gets a copy")
	assert.Equal(t, "a", a.ID)
	assert.Empty(t, a.Code)
	assert.Nil(t, a.IsActive, "a mismatched pointer field is left nil")
	assert.Equal(t, invoicing.Extra{"code": jsontext.Value(`200`), "name": jsontext.Value(`{"n": 1}`), "type": jsontext.Value(`["y"]`), "is_active": jsontext.Value(`1`)}, a.Extra)
	assert.JSONEq(t, body, string(rawJSON(t, a)))

	// null is not a mismatch, beside one that is.
	var n invoicing.Account
	require.NoError(t, json.Unmarshal([]byte(`{"id": "a", "code": 200, "name": null, "type": null, "is_active": null}`), &n))
	assert.Equal(t, []string{"code"}, n.MismatchedFields())
	assert.Empty(t, n.Name)
	assert.Nil(t, n.IsActive)
	assert.True(t, n.Has("name"))

	// The last member of a name wins, on an outline record as on a documented one.
	var b invoicing.Account
	require.NoError(t, json.Unmarshal([]byte(`{"id": "first", "id": "second", "code": 200, "code": "200"}`), &b))
	assert.Equal(t, "second", b.ID)
	assert.Equal(t, "200", b.Code)
	assert.Nil(t, b.MismatchedFields(), "the last member of code fits")
	assert.Nil(t, b.Extra)
	assert.Equal(t, `{"id":"second","code":"200"}`, string(rawJSON(t, b)))

	var inv invoicing.Invoice
	require.NoError(t, json.Unmarshal([]byte(`{"total": 1, "total": "2.50"}`), &inv))
	assert.Equal(t, "2.5", inv.Total.String())
	assert.Equal(t, `{"total":"2.50"}`, string(rawJSON(t, inv)))

	t.Run("last member does not fit", func(t *testing.T) {
		var c invoicing.Account
		require.NoError(t, json.Unmarshal([]byte(`{"code": "200", "code": 200}`), &c))
		assert.Equal(t, []string{"code"}, c.MismatchedFields())
		assert.JSONEq(t, `{"code": 200}`, string(rawJSON(t, c)))
		assert.Empty(t, c.Code, "the last member did not fit: the field is zero")
	})
}

// A null member is not a mismatch: it leaves the field zero, as
// encoding/json does, and Has tells it from an absent member.
func TestJSONNullAndAbsentMembers(t *testing.T) {
	for _, r := range jsRecords() {
		if !r.lenient {
			continue
		}
		t.Run(r.name(), func(t *testing.T) {
			ms := jsParse(t, r.canonical)
			for _, f := range jsFields(r.typ) {
				for what, body := range map[string]string{"null": jsJoin(jsSet(ms, f.name, "null")), "absent": jsJoin(jsDel(ms, f.name))} {
					v, err := jsDecode(r.typ, body)
					require.NoError(t, err)
					rec := v.(jsLenient)
					assert.Nil(t, rec.MismatchedFields(), "%s %s", f.name, what)
					assert.Equal(t, what == "null", rec.Has(f.name), "Has(%q) with the member %s", f.name, what)
					if f.typ != jsTotalsType {
						assert.True(t, reflect.ValueOf(v).Elem().FieldByName(jsGoName(r.typ, f.name)).IsZero(), "%s %s", f.name, what)
					}
					for _, other := range jsFields(r.typ) {
						if other.name != f.name {
							assert.True(t, rec.Has(other.name), "%s %s: Has(%q)", f.name, what, other.name)
						}
					}
				}
			}
			v, err := jsDecode(r.typ, r.canonical)
			require.NoError(t, err)
			assert.False(t, v.(jsLenient).Has("unknown"))
			assert.False(t, v.(jsLenient).Has(strings.ToUpper(jsFields(r.typ)[0].name)), "names match exactly")
			v, err = jsDecode(r.typ, jsJoin(jsSet(ms, "Unknown", `null`)))
			require.NoError(t, err)
			assert.True(t, v.(jsLenient).Has("Unknown"), "a member kept in Extra, even null")
			assert.False(t, v.(jsLenient).Has("unknown"))
		})
	}
}

// Decoding into a record decoded before starts afresh; JSON null leaves a
// record unchanged; a record must be a JSON object.
func TestJSONDecodeIntoUsedRecords(t *testing.T) {
	for _, r := range jsRecords() {
		t.Run(r.name(), func(t *testing.T) {
			ms := jsParse(t, r.canonical)
			first := jsJoin(append(slices.Clone(ms), jsMember{"only_first", `1`}))
			if r.lenient {
				f := jsFields(r.typ)[0]
				first = jsJoin(jsSet(jsParse(t, first), f.name, jsMismatched(f.typ)[0]))
			}
			v, err := jsDecode(r.typ, first)
			require.NoError(t, err)

			second := jsJoin(ms[len(ms)-1:]) // only the last member
			require.NoError(t, json.Unmarshal([]byte(second), v))
			assert.Equal(t, second, string(rawJSON(t, v)), "nothing of the first object is left")
			fresh, err := jsDecode(r.typ, second)
			require.NoError(t, err)
			assert.True(t, reflect.DeepEqual(fresh, v), "the same as a new record decoded from it")
			if r.lenient {
				assert.Nil(t, v.(jsLenient).MismatchedFields())
				assert.False(t, v.(jsLenient).Has("only_first"))
			}

			before := string(rawJSON(t, v))
			snapshot := reflect.ValueOf(v).Elem().Interface()
			require.NoError(t, json.Unmarshal([]byte(" null "), v))
			require.NoError(t, jsonv2.Unmarshal([]byte("null"), v))
			assert.Equal(t, before, string(rawJSON(t, v)), "null leaves the record unchanged")
			assert.True(t, reflect.DeepEqual(snapshot, reflect.ValueOf(v).Elem().Interface()))

			for body, kind := range map[string]string{`"SUP-INV-1"`: "a string", `42`: "a number", ` [{"id": "x"}] `: "an array", `true`: "a boolean"} {
				err := json.Unmarshal([]byte(body), reflect.New(r.typ).Interface())
				require.Error(t, err, body)
				assert.Contains(t, err.Error(), "a record must be a JSON object, got "+kind, body)
			}
			for _, body := range []string{`{`, `{"id": }`, `{} {}`, ``, `{"a":1,}`} {
				assert.Error(t, json.Unmarshal([]byte(body), reflect.New(r.typ).Interface()), body)
			}
		})
	}
}

// A null element of an array of records stays null; in a struct of the
// caller's, a null record pointer stays nil.
func TestJSONNullRecordsInArrays(t *testing.T) {
	var holder struct {
		Bill  *invoicing.Bill          `json:"bill"`
		Lines []invoicing.BillLineItem `json:"lines"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"bill": null, "lines": [null, {"id": "l1"}]}`), &holder))
	assert.Nil(t, holder.Bill)
	require.Len(t, holder.Lines, 2)
	assert.True(t, reflect.ValueOf(holder.Lines[0]).IsZero(), "null leaves the element as it was: a zero record, which writes every field")
	assert.Equal(t, "l1", holder.Lines[1].ID)
	assert.JSONEq(t, `{"id": "l1"}`, string(rawJSON(t, holder.Lines[1])))

	var b invoicing.Bill
	require.NoError(t, json.Unmarshal([]byte(`{"line_items": [null, {"id": "l1"}]}`), &b))
	require.Len(t, b.LineItems, 2)
	assert.Equal(t, `{"line_items":[null,{"id":"l1"}]}`, string(rawJSON(t, b)))
}

// Records inside the caller's own structs go through encoding/json and
// encoding/json/v2 with the SDK's rules: exact money, members kept.
func TestJSONRecordsInsideUserTypes(t *testing.T) {
	inv := withUnknownMembers(t, fixture(t, "invoice.json"))
	body := `{"invoice": ` + inv + `, "accounts": [{"id": "a", "code": 200}], "n": 1}`
	var v1 struct {
		Invoice  invoicing.Invoice   `json:"invoice"`
		Accounts []invoicing.Account `json:"accounts"`
		N        int                 `json:"n"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v1))
	assert.True(t, v1.Invoice.Extra.Has("purchase_order"))
	assert.True(t, v1.Invoice.LineItems[0].Extra.Has("tracking"))
	assert.Equal(t, []string{"code"}, v1.Accounts[0].MismatchedFields())
	out, err := json.Marshal(v1)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))
	assert.NotContains(t, string(out), `"Extra"`, "Extra's members are inline")

	var v2 struct {
		Invoice  invoicing.Invoice   `json:"invoice"`
		Accounts []invoicing.Account `json:"accounts"`
		N        int                 `json:"n"`
	}
	require.NoError(t, jsonv2.Unmarshal([]byte(body), &v2))
	out, err = jsonv2.Marshal(v2)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))
}

// withUnknownMembers adds members the SDK does not model to a record's
// JSON, at the top level and in its first line.
func withUnknownMembers(t *testing.T, body string) string {
	t.Helper()
	ms := jsParse(t, body)
	ms = append(ms, jsMember{"purchase_order", `"PO-7781"`}, jsMember{"discount", `{"rate":0.050,"reason":"loyalty"}`})
	if lines, ok := jsGet(ms, "line_items"); ok {
		els := jsElements(t, lines)
		els[0] = jsJoin(append(jsParse(t, els[0]), jsMember{"tracking", `["North",7]`}))
		ms = jsSet(ms, "line_items", "["+strings.Join(els, ",")+"]")
	}
	return jsJoin(ms)
}

// Extra's values do not alias the buffer a record was decoded from, nor the
// Client's buffers.
func TestJSONExtraDoesNotAlias(t *testing.T) {
	buf := []byte(`{"id": "a", "tax_number": "51 824", "phone": 612}`)
	var c invoicing.Contact
	require.NoError(t, json.Unmarshal(buf, &c))
	copy(buf, bytes.Repeat([]byte("x"), len(buf)))
	assert.Equal(t, `"51 824"`, string(c.Extra["tax_number"]))
	assert.Equal(t, `612`, string(c.Extra["phone"]))

	first := fixture(t, "contacts_client_unknown.json")
	client, _ := newMock(t, sequence(always(200, first), always(200, fixture(t, "bills_get_unknown.json"))))
	ctx := context.Background()
	ct, err := client.Clients.Get(ctx, "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e")
	require.NoError(t, err)
	for range 5 {
		_, err := client.Bills.Get(ctx, "9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")
		require.NoError(t, err)
	}
	assert.JSONEq(t, first, string(rawJSON(t, ct)))
	assert.Equal(t, "51 824 753 556", extraValue[string](t, ct.Extra, "tax_number"))
}

func TestJSONExtraGet(t *testing.T) {
	var inv invoicing.Invoice
	require.NoError(t, json.Unmarshal([]byte(`{"id":"x","note":null,"na\u006de":"escaped key","Total":1,"total":2,"deposit":"10.50","rate":0.050,"po":{"number":"PO-1","lines":[1,2]}}`), &inv))
	assert.True(t, inv.Total.Equal(decimal.NewFromInt(2)))
	assert.True(t, inv.Extra.Has("note"), "a null member is there")
	assert.True(t, inv.Extra.Has("name"), "names are unescaped")
	assert.True(t, inv.Extra.Has("Total"), "names match exactly: Total is not total")
	assert.False(t, inv.Extra.Has("total"), "a typed field's member is not in Extra")
	assert.Equal(t, []string{"Total", "deposit", "na" + "me", "note", "po", "rate"}, inv.Extra.Names(), "sorted")

	note := "unchanged"
	require.NoError(t, inv.Extra.Get("note", &note))
	assert.Equal(t, "unchanged", note, "null leaves the destination")

	assert.Equal(t, "escaped key", extraValue[string](t, inv.Extra, "name"))

	var deposit, rate decimal.Decimal
	require.NoError(t, inv.Extra.Get("deposit", &deposit), "money from a numeric string")
	assert.Equal(t, "10.5", deposit.String())
	require.NoError(t, inv.Extra.Get("rate", &rate), "money from a number, exactly")
	assert.True(t, rate.Equal(jsDec("0.05")))

	var po struct {
		Number string
		Lines  []int
	}
	require.NoError(t, inv.Extra.Get("po", &po), "an untagged struct, names matched case-insensitively")
	assert.Equal(t, "PO-1", po.Number)
	assert.Equal(t, []int{1, 2}, po.Lines)

	var raw json.RawMessage
	require.NoError(t, inv.Extra.Get("po", &raw))
	assert.Equal(t, `{"number":"PO-1","lines":[1,2]}`, string(raw), "as sent")

	var s string
	err := inv.Extra.Get("missing", &s)
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `"missing"`)
	err = inv.Extra.Get("total", &s)
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing, "a typed field's member is read from the field")

	var n int
	err = inv.Extra.Get("name", &n)
	require.Error(t, err)
	assert.NotErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `field "name"`)

	var zero invoicing.Extra
	assert.False(t, zero.Has("x"))
	assert.Empty(t, zero.Names())
	assert.ErrorIs(t, zero.Get("x", &s), invoicing.ErrFieldMissing)
}

func TestJSONExtraDecode(t *testing.T) {
	var ct invoicing.Contact
	require.NoError(t, json.Unmarshal([]byte(fixture(t, "contacts_client_unknown.json")), &ct))
	// Your own struct, untagged: names matched case-insensitively, as
	// encoding/json matches them.
	var own struct {
		Contact_Type string
		TAX_NUMBER   string
		CreditLimit  decimal.Decimal `json:"credit_limit"`
		Tags         []string
		Address      struct{ City, Postcode string }
		Name         string // a typed field's member: not in Extra
	}
	require.NoError(t, ct.Extra.Decode(&own))
	assert.Equal(t, "client", own.Contact_Type)
	assert.Equal(t, "51 824 753 556", own.TAX_NUMBER)
	assert.Equal(t, "5000.1", own.CreditLimit.String(), "money read exactly")
	assert.Equal(t, []string{"wholesale", "nsw"}, own.Tags)
	assert.Equal(t, "Sydney", own.Address.City)
	assert.Equal(t, "2000", own.Address.Postcode)
	assert.Empty(t, own.Name)

	var m map[string]any
	require.NoError(t, ct.Extra.Decode(&m))
	assert.ElementsMatch(t, ct.Extra.Names(), slices.Collect(maps.Keys(m)))

	var zero invoicing.Extra
	dst := map[string]any{"kept": true}
	require.NoError(t, zero.Decode(&dst))
	assert.Equal(t, map[string]any{"kept": true}, dst, "no members: dst unchanged")

	var wrong struct{ Tags int }
	assert.Error(t, ct.Extra.Decode(&wrong))
}

// jsParamsCase is a params value and the exact body it encodes to.
type jsParamsCase struct {
	name string
	p    json.Marshaler
	want string
}

func TestJSONParamsMarshal(t *testing.T) {
	terms, days := 14, 30
	for _, tc := range []jsParamsCase{
		{"InvoiceCreateParams minimal", invoicing.InvoiceCreateParams{ClientID: "c1", LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.Zero}}},
			`{"client_id":"c1","line_items":[{"unit_price":0}]}`},
		{"InvoiceCreateParams zero", invoicing.InvoiceCreateParams{}, `{"client_id":"","line_items":null}`},
		{"InvoiceCreateParams full", invoicing.InvoiceCreateParams{
			ClientID: "c1", IssueDate: invoicing.NewDate(2026, 11, 1), DueDate: invoicing.NewDate(2026, 11, 15), PaymentTermsDays: &terms,
			Currency: "NZD", Notes: "n", Reference: "ERP-7781", InvoiceNumber: "INV-0042", DefaultAccountID: "4000", DefaultTaxCodeID: "GST",
			Status: invoicing.InvoiceStatusAwaitingPayment,
			LineItems: []invoicing.LineItemParams{{Description: "Consulting", Quantity: invoicing.Ptr(jsDec("10.50")), UnitPrice: jsDec("0.1"),
				AccountID: "4100", TaxCodeID: "FRE", ItemID: "9d7e6f5a-4b3c-4d2e-8f10-112233445566"}},
			Extra: map[string]any{"z": 1, "a": "x"}},
			`{"client_id":"c1","issue_date":"2026-11-01","due_date":"2026-11-15","payment_terms_days":14,"currency":"NZD","notes":"n","reference":"ERP-7781",` +
				`"invoice_number":"INV-0042","default_account_id":"4000","default_tax_code_id":"GST","status":"awaiting_payment",` +
				`"line_items":[{"description":"Consulting","quantity":10.50,"unit_price":0.1,"account_id":"4100","tax_code_id":"FRE","item_id":"9d7e6f5a-4b3c-4d2e-8f10-112233445566"}],"a":"x","z":1}`},
		{"InvoiceCreateParams zero terms", invoicing.InvoiceCreateParams{ClientID: "c1", PaymentTermsDays: invoicing.Ptr(0)}, `{"client_id":"c1","payment_terms_days":0,"line_items":null}`},
		{"ItemCreateParams minimal", invoicing.ItemCreateParams{Name: "Note", ItemType: invoicing.ItemTypeText, AccountID: "4000", TaxCodeID: "GST"},
			`{"name":"Note","item_type":"TEXT","account_id":"4000","tax_code_id":"GST"}`},
		{"ItemCreateParams free", invoicing.ItemCreateParams{Name: "Free", UnitPrice: invoicing.Ptr(decimal.Zero), IsTaxable: invoicing.Ptr(false), AccountID: "4000", TaxCodeID: "GST"},
			`{"name":"Free","unit_price":0,"is_taxable":false,"account_id":"4000","tax_code_id":"GST"}`},
		{"ItemCreateParams full", invoicing.ItemCreateParams{Name: "Widget", ItemCode: "W-1", Description: "d", ItemType: invoicing.ItemTypeSales,
			UnitPrice: invoicing.Ptr(jsDec("19.990")), IsTaxable: invoicing.Ptr(true), AccountID: "4000", TaxCodeID: "GST"},
			`{"name":"Widget","item_code":"W-1","description":"d","item_type":"SALES","unit_price":19.990,"is_taxable":true,"account_id":"4000","tax_code_id":"GST"}`},
		{"QuoteCreateParams full", invoicing.QuoteCreateParams{ClientID: "c1", Title: "T", IssueDate: invoicing.NewDate(2026, 11, 3), ValidUntil: invoicing.NewDate(2027, 1, 31),
			ValidDays: &days, Currency: "AUD", Notes: "private", DefaultAccountID: "4000", DefaultTaxCodeID: "GST",
			LineItems: []invoicing.LineItemParams{{UnitPrice: jsDec("100")}, {ItemID: "i", Quantity: invoicing.Ptr(jsDec("2")), UnitPrice: jsDec("19.999")}}},
			`{"client_id":"c1","title":"T","issue_date":"2026-11-03","valid_until":"2027-01-31","valid_days":30,"currency":"AUD","notes":"private",` +
				`"default_account_id":"4000","default_tax_code_id":"GST","line_items":[{"unit_price":100},{"quantity":2,"unit_price":19.999,"item_id":"i"}]}`},
		{"QuoteCreateParams minimal", invoicing.QuoteCreateParams{ClientID: "c1", LineItems: []invoicing.LineItemParams{}}, `{"client_id":"c1","line_items":[]}`},
		{"ContactCreateParams", invoicing.ContactCreateParams{Name: "A", Email: "a@example.com", Phone: "1", Extra: map[string]any{"z": 1, "a": "x"}},
			`{"name":"A","email":"a@example.com","phone":"1","a":"x","z":1}`},
		{"ContactCreateParams empty", invoicing.ContactCreateParams{}, `{}`},
		{"ContactCreateParams only Extra", invoicing.ContactCreateParams{Extra: map[string]any{"name": "Raw", "credit": invoicing.Ptr(jsDec("-0.10")), "email": nil,
			"opening_balance": (*decimal.Decimal)(nil)}}, `{"credit":-0.10,"email":null,"name":"Raw","opening_balance":null}`},
		{"BillCreateParams empty", invoicing.BillCreateParams{}, `{}`},
		{"BillCreateParams full", invoicing.BillCreateParams{SupplierID: "s1", BillNumber: "B-1", IssueDate: invoicing.NewDate(2026, 11, 2), DueDate: invoicing.NewDate(2026, 12, 2),
			Currency: "AUD", DefaultAccountID: "6100", DefaultTaxCodeID: "GST", Status: invoicing.BillStatusDraft,
			LineItems: []invoicing.LineItemParams{{Description: "Paper", Quantity: invoicing.Ptr(jsDec("80")), UnitPrice: jsDec("12.50")}, {UnitPrice: jsDec("0.1000000000000000000001")}},
			Extra:     map[string]any{"reference": "PO-2026-118", "freight": jsDec("15.00")}},
			`{"supplier_id":"s1","bill_number":"B-1","issue_date":"2026-11-02","due_date":"2026-12-02","currency":"AUD","default_account_id":"6100","default_tax_code_id":"GST",` +
				`"status":"draft","line_items":[{"description":"Paper","quantity":80,"unit_price":12.50},{"unit_price":0.1000000000000000000001}],"freight":15.00,"reference":"PO-2026-118"}`},
		{"LineItemParams zero", invoicing.LineItemParams{}, `{"unit_price":0}`},
		{"LineItemParams zero quantity", invoicing.LineItemParams{Quantity: invoicing.Ptr(decimal.Zero), UnitPrice: jsDec("-5.00")}, `{"quantity":0,"unit_price":-5.00}`},
		{"LineItemParams huge", invoicing.LineItemParams{UnitPrice: jsDec("123456789012345678901234567890.123456789"), Quantity: invoicing.Ptr(jsDec("1e3"))},
			`{"quantity":1000,"unit_price":123456789012345678901234567890.123456789}`},
		{"LineItemParams Extra at any depth", invoicing.LineItemParams{UnitPrice: jsDec("1"), Extra: map[string]any{
			"discount_rate": jsDec("0.050"),
			"deposit":       map[string]any{"amount": jsDec("10.50"), "parts": []any{jsDec("0.10"), invoicing.Ptr(jsDec("2.000"))}},
			"tracking":      struct{ Rate decimal.Decimal }{jsDec("1.50")},
			"html":          "<&>",
		}}, `{"unit_price":1,"deposit":{"amount":10.50,"parts":[0.10,2.000]},"discount_rate":0.050,"html":"\u003c\u0026\u003e","tracking":{"Rate":1.50}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.p.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			b, err = json.Marshal(tc.p)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b), "through encoding/json")
			b, err = jsonv2.Marshal(tc.p)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b), "through encoding/json/v2")
		})
	}
}

// encoding/json's Number is an exact number, in params' Extra as in
// Extra.Get, as encoding/json has it.
func TestJSONEncodingJSONNumber(t *testing.T) {
	b, err := invoicing.LineItemParams{UnitPrice: jsDec("1"), Extra: map[string]any{"raw": json.Number("9.990"), "deep": []any{json.Number("-0.10")}}}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"unit_price":1,"deep":[-0.10],"raw":9.990}`, string(b))
	var n json.Number
	require.NoError(t, invoicing.Extra{"limit": jsontext.Value(`5000.10`)}.Get("limit", &n))
	assert.Equal(t, json.Number("5000.10"), n)
	var fromString json.Number
	require.NoError(t, invoicing.Extra{"limit": jsontext.Value(`"12.50"`)}.Get("limit", &fromString), "a numeric string, as encoding/json takes it")
	assert.Equal(t, json.Number("12.50"), fromString)
	assert.Error(t, invoicing.Extra{"limit": jsontext.Value(`"n/a"`)}.Get("limit", &n))
}

// A params Extra member that clashes with a typed field the params send,
// or has an empty name, or cannot be encoded: the request cannot be sent.
// Create returns a *ParamError naming the path; MarshalJSON an error naming
// it.
func TestJSONParamsExtraErrors(t *testing.T) {
	line := func(extra map[string]any) []invoicing.LineItemParams {
		return []invoicing.LineItemParams{{Description: "d", UnitPrice: jsDec("1"), AccountID: "a", TaxCodeID: "t", Extra: extra}}
	}
	for _, tc := range []struct {
		name  string
		p     json.Marshaler
		field string
	}{
		{"invoice top-level clash", invoicing.InvoiceCreateParams{ClientID: "c", LineItems: line(nil), Extra: map[string]any{"client_id": "other"}}, "client_id"},
		{"invoice line clash", invoicing.InvoiceCreateParams{ClientID: "c", LineItems: line(map[string]any{"description": "x"})}, "line_items[0].description"},
		{"invoice line unit_price clash", invoicing.InvoiceCreateParams{ClientID: "c", LineItems: append(line(nil), line(map[string]any{"unit_price": 2})...)}, "line_items[1].unit_price"},
		{"invoice empty name", invoicing.InvoiceCreateParams{ClientID: "c", LineItems: line(nil), Extra: map[string]any{"": 1}}, "Extra"},
		{"invoice line empty name", invoicing.InvoiceCreateParams{ClientID: "c", LineItems: line(map[string]any{"": 1})}, "line_items[0].Extra"},
		{"item clash", invoicing.ItemCreateParams{Name: "n", UnitPrice: invoicing.Ptr(jsDec("1")), AccountID: "a", TaxCodeID: "t", Extra: map[string]any{"account_id": "b"}}, "account_id"},
		{"quote clash", invoicing.QuoteCreateParams{ClientID: "c", LineItems: line(nil), Extra: map[string]any{"line_items": []any{}}}, "line_items"},
		{"contact clash", invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"name": "B"}}, "name"},
		{"contact not encodable", invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"hook": func() {}}}, "hook"},
		{"bill clash", invoicing.BillCreateParams{SupplierID: "s", LineItems: line(nil), Extra: map[string]any{"line_items": []any{}}}, "line_items"},
		{"bill line clash", invoicing.BillCreateParams{LineItems: line(map[string]any{"tax_code_id": "x"})}, "line_items[0].tax_code_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.MarshalJSON()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			_, err = json.Marshal(tc.p)
			assert.Error(t, err)

			err = jsCreate(t, tc.p)
			var pe *invoicing.ParamError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.field, pe.Field)
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		})
	}

	// A member whose typed field is empty (so not sent) may be sent by Extra.
	b, err := invoicing.InvoiceCreateParams{ClientID: "c", Extra: map[string]any{"notes": nil, "status": "sent"}}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"client_id":"c","line_items":null,"notes":null,"status":"sent"}`, string(b))

	t.Run("MarshalJSON error matches ErrInvalidParams", func(t *testing.T) {
		_, err := json.Marshal(invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"name": "B"}})
		require.ErrorIs(t, err, invoicing.ErrInvalidParams)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "name", pe.Field)
	})
}

// jsCreate sends p with its service's Create and returns the error; nothing
// may reach the server.
func jsCreate(t *testing.T, p json.Marshaler) error {
	t.Helper()
	c, api := newMock(t, always(201, `{}`))
	ctx := context.Background()
	var err error
	switch p := p.(type) {
	case invoicing.InvoiceCreateParams:
		_, err = c.Invoices.Create(ctx, &p)
	case invoicing.ItemCreateParams:
		_, err = c.Items.Create(ctx, &p)
	case invoicing.QuoteCreateParams:
		_, err = c.Quotes.Create(ctx, &p)
	case invoicing.ContactCreateParams:
		_, err = c.Clients.Create(ctx, &p)
		if err != nil {
			_, err2 := c.Suppliers.Create(ctx, &p)
			assert.Equal(t, err.Error(), err2.Error())
		}
	case invoicing.BillCreateParams:
		_, err = c.Bills.Create(ctx, &p)
	default:
		t.Fatalf("no Create for %T", p)
	}
	assert.Empty(t, api.requests(), "nothing sent")
	return err
}

// Every record type has what the codec relies on: an Extra of type Extra
// written inline, its unexported meta, and one field a JSON name.
func TestJSONRecordTypesShape(t *testing.T) {
	for _, r := range jsRecords() {
		extra, ok := r.typ.FieldByName("Extra")
		require.True(t, ok, "%s has Extra", r.name())
		assert.Equal(t, reflect.TypeFor[invoicing.Extra](), extra.Type, r.name())
		assert.Equal(t, ",embed", extra.Tag.Get("json"), r.name())
		meta, ok := r.typ.FieldByName("meta")
		require.True(t, ok, "%s has meta", r.name())
		assert.False(t, meta.IsExported())
		names := map[string]bool{}
		for _, f := range jsFields(r.typ) {
			assert.NotEmpty(t, f.name, "%s: every field is named", r.name())
			assert.False(t, names[f.name], "%s: two fields named %q", r.name(), f.name)
			names[f.name] = true
		}
		_, isLenient := reflect.New(r.typ).Interface().(jsLenient)
		assert.Equal(t, r.lenient, isLenient, "%s: the outline records, and only they, are lenient", r.name())
	}
}

// An outline record whose fields all fit decodes with a single allocation,
// the block its strings are copied into: leniency costs nothing when every
// value fits (measured: 1; encoding/json took 9 for a plain struct of the
// same fields in Go 1.26, 1 in Go 1.27).
func TestJSONFittingRecordCostsNoMore(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so allocations are not counted under -race")
	}
	body := []byte(fixture(t, "contacts_client.json"))
	allocs := testing.AllocsPerRun(500, func() {
		var v invoicing.Contact
		if err := v.UnmarshalJSON(body); err != nil || v.MismatchedFields() != nil {
			t.Fatal(err, v.MismatchedFields())
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "allocations decoding a fitting Contact")
}
