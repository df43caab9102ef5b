package invoicing

import (
	"context"
	"net/url"
	"reflect"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// ReportService runs the accounting reports (GET /reports/trial-balance,
// /reports/profit-loss and /reports/balance-sheet). The service documents
// reports only in outline; see the package documentation for what that
// means for these types. Each params type's Extra sends parameters the SDK
// does not know.
type ReportService service

// Report is the result of a report endpoint: the report's name, its date
// or period, its currency, one line per account and totals.
//
// The service documents reports only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra, so a report of another shape is still
// fully readable (Extra.Get, Extra.Decode); a field the service does not
// send is left zero.
type Report struct {
	// Name identifies the report, e.g. "trial_balance", from the key
	// "report".
	Name string `json:"report"`
	// AsAt is the date of a trial balance or balance sheet.
	AsAt Date `json:"as_at"`
	// FromDate and ToDate are the period of a profit and loss report.
	FromDate Date `json:"from_date"`
	ToDate   Date `json:"to_date"`
	// Currency is the currency code of the amounts.
	Currency string `json:"currency"`
	// Lines are the report's rows, one per account.
	Lines []ReportLine `json:"lines"`
	// Totals are the report's totals, by name: read them with
	// Totals.Amount or Totals.Get.
	Totals ReportTotals `json:"totals"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	from decodedFrom
}

// UnmarshalJSONFrom decodes the record leniently (see the package
// documentation, "Resources documented in outline"), keeping the members the
// SDK has no field for in Extra (the encoding/json/v2 interface).
func (r *Report) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain Report
	return decodeLenient(dec, (*plain)(r), &r.from)
}

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (r *Report) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, r) }

// MarshalJSONTo encodes the record (money as exact numbers): a decoded
// record encodes back to the members it was decoded from, a mismatched
// field as the value the service sent; a record built in code encodes its
// typed fields, then the members in Extra (the encoding/json/v2
// interface).
func (r Report) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Report
	return marshalLenient(enc, (*plain)(&r), &r.from)
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (r Report) MarshalJSON() ([]byte, error) { return marshalJSON(r) }

// MismatchedFields returns the JSON names of the typed fields whose value did
// not fit their Go type, in field order, or nil when every field fit. Those
// fields are zero; the values the service sent are in Extra.
func (r Report) MismatchedFields() []string { return slices.Clone(r.from.mismatched) }

// Has reports whether the object the record was decoded from had a member
// named name, a typed field's (even one whose value was zero or null) or one
// kept in Extra. It is false for a record built in code.
func (r Report) Has(name string) bool {
	return r.Extra.Has(name) || r.from.has(reflect.TypeFor[Report](), name)
}

// ReportLine is one row of a Report, for one account. Amounts are exact;
// a member the SDK has no field for is kept in Extra.
type ReportLine struct {
	// AccountID, AccountCode, AccountName and AccountType describe the
	// row's account (see Account).
	AccountID   string      `json:"account_id"`
	AccountCode string      `json:"account_code"`
	AccountName string      `json:"account_name"`
	AccountType AccountType `json:"account_type"`
	// Debit and Credit are the account's debit and credit amounts.
	Debit  decimal.Decimal `json:"debit"`
	Credit decimal.Decimal `json:"credit"`
	// Balance is the account's balance, with the sign the service gives it.
	Balance decimal.Decimal `json:"balance"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	from decodedFrom
}

// UnmarshalJSONFrom decodes the record leniently (see the package
// documentation, "Resources documented in outline"), keeping the members the
// SDK has no field for in Extra (the encoding/json/v2 interface).
func (l *ReportLine) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain ReportLine
	return decodeLenient(dec, (*plain)(l), &l.from)
}

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (l *ReportLine) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, l) }

// MarshalJSONTo encodes the record (money as exact numbers): a decoded
// record encodes back to the members it was decoded from, a mismatched
// field as the value the service sent; a record built in code encodes its
// typed fields, then the members in Extra (the encoding/json/v2
// interface).
func (l ReportLine) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain ReportLine
	return marshalLenient(enc, (*plain)(&l), &l.from)
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (l ReportLine) MarshalJSON() ([]byte, error) { return marshalJSON(l) }

// MismatchedFields returns the JSON names of the typed fields whose value did
// not fit their Go type, in field order, or nil when every field fit. Those
// fields are zero; the values the service sent are in Extra.
func (l ReportLine) MismatchedFields() []string { return slices.Clone(l.from.mismatched) }

// Has reports whether the object the record was decoded from had a member
// named name, a typed field's (even one whose value was zero or null) or one
// kept in Extra. It is false for a record built in code.
func (l ReportLine) Has(name string) bool {
	return l.Extra.Has(name) || l.from.has(reflect.TypeFor[ReportLine](), name)
}

// ReportTotals holds a report's "totals" value, such as {"debit": 100,
// "credit": 100}, kept as the service sent it because the names of the
// totals vary by report. Whatever JSON the service sends there is kept, so
// even a totals value that is not an object is never a decoding error: Raw
// returns it, and Get and Amount then find no totals.
type ReportTotals struct {
	raw jsontext.Value
}

// Raw returns a copy of the totals value as the service sent it, or nil for
// totals not decoded from JSON.
func (t ReportTotals) Raw() jsontext.Value { return t.raw.Clone() }

// Get decodes the total named name into dst, as Extra.Get does. It returns
// an error wrapping ErrFieldMissing when there is no such total.
func (t ReportTotals) Get(name string, dst any) error {
	var members Extra
	if t.raw.Kind() == '{' {
		_ = json.Unmarshal(t.raw, &members, jsonopt.Decode) // checked when decoded
	}
	return members.Get(name, dst)
}

// Amount returns the total named name as an exact decimal. It returns an
// error wrapping ErrFieldMissing when there is no such total, and a decoding
// error when the value is not a number (or a numeric string).
func (t ReportTotals) Amount(name string) (decimal.Decimal, error) {
	var d decimal.Decimal
	err := t.Get(name, &d)
	return d, err
}

// UnmarshalJSONFrom keeps the next value of dec as it is; null leaves t
// unchanged (the encoding/json/v2 interface).
func (t *ReportTotals) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err == nil && v.Kind() != 'n' {
		t.raw = v.Clone()
	}
	return err
}

// UnmarshalJSON keeps the value as UnmarshalJSONFrom does (the encoding/json
// interface).
func (t *ReportTotals) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, t) }

// MarshalJSONTo writes the value as the service sent it, or {} for totals
// not decoded from JSON (the encoding/json/v2 interface).
func (t ReportTotals) MarshalJSONTo(enc *jsontext.Encoder) error {
	if t.raw == nil {
		return enc.WriteValue(jsontext.Value("{}"))
	}
	return json.MarshalEncode(enc, t.raw, jsonopt.Encode) // as kept: see jsonopt.Encode
}

// MarshalJSON writes the value as MarshalJSONTo does (the encoding/json
// interface).
func (t ReportTotals) MarshalJSON() ([]byte, error) { return marshalJSON(t) }

// TrialBalanceParams are the query parameters of GET /reports/trial-balance.
// Parameters other than AsAt go in Extra.
type TrialBalanceParams struct {
	// AsAt is the date of the trial balance, sent as as_at (YYYY-MM-DD) when
	// set.
	AsAt Date
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

func (p *TrialBalanceParams) query() (url.Values, error) {
	q := url.Values{}
	setDate(q, "as_at", p.AsAt)
	return q, mergeQuery(q, p.Extra)
}

// ProfitAndLossParams are the query parameters of GET /reports/profit-loss.
// FromDate and ToDate are named as the invoice list's date filters; other
// parameters go in Extra.
type ProfitAndLossParams struct {
	// FromDate is the start of the period, sent as from_date when set.
	FromDate Date
	// ToDate is the end of the period, sent as to_date when set. A
	// ToDate before FromDate is a *ParamError.
	ToDate Date
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

func (p *ProfitAndLossParams) query() (url.Values, error) {
	if err := checkDateRange(p.FromDate, p.ToDate); err != nil {
		return nil, err
	}
	q := url.Values{}
	setDate(q, "from_date", p.FromDate)
	setDate(q, "to_date", p.ToDate)
	return q, mergeQuery(q, p.Extra)
}

// BalanceSheetParams are the query parameters of GET
// /reports/balance-sheet. Parameters other than AsAt go in Extra.
type BalanceSheetParams struct {
	// AsAt is the date of the balance sheet, sent as as_at (YYYY-MM-DD)
	// when set.
	AsAt Date
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

func (p *BalanceSheetParams) query() (url.Values, error) {
	q := url.Values{}
	setDate(q, "as_at", p.AsAt)
	return q, mergeQuery(q, p.Extra)
}

// reportQuery is implemented by the report params types.
type reportQuery interface{ query() (url.Values, error) }

func (s *ReportService) run(ctx context.Context, path string, p reportQuery, opts []RequestOption) (*Report, error) {
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	return getQuery[Report](ctx, s.c, path, q, opts)
}

// TrialBalance fetches the trial balance (nil p for the service's default
// date). Server errors are retried like every GET.
func (s *ReportService) TrialBalance(ctx context.Context, p *TrialBalanceParams, opts ...RequestOption) (*Report, error) {
	return s.run(ctx, "/reports/trial-balance", orNew(p), opts)
}

// ProfitAndLoss fetches the profit and loss report (nil p for the service's
// default period).
func (s *ReportService) ProfitAndLoss(ctx context.Context, p *ProfitAndLossParams, opts ...RequestOption) (*Report, error) {
	return s.run(ctx, "/reports/profit-loss", orNew(p), opts)
}

// BalanceSheet fetches the balance sheet (nil p for the service's default
// date).
func (s *ReportService) BalanceSheet(ctx context.Context, p *BalanceSheetParams, opts ...RequestOption) (*Report, error) {
	return s.run(ctx, "/reports/balance-sheet", orNew(p), opts)
}
