package invoicing

import (
	"bytes"
	"context"
	"net/url"

	"github.com/shopspring/decimal"
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
// documentation for what that means for these fields. The whole object is
// kept in the embedded RawObject, so a report of another shape is still
// fully readable with Get or Decode; a field the service does not send is
// left zero.
type Report struct {
	RawObject
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
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (r *Report) UnmarshalJSON(b []byte) error {
	type alias Report
	return decodeRaw(b, &r.RawObject, (*alias)(r))
}

// MarshalJSON writes the object exactly as the service sent it, or the typed
// fields for a Report not decoded from JSON.
func (r Report) MarshalJSON() ([]byte, error) {
	type alias Report
	return encodeRaw(r.RawObject, alias(r))
}

// ReportLine is one row of a Report, for one account. Amounts are exact;
// the whole row is kept in the embedded RawObject.
type ReportLine struct {
	RawObject
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
}

// UnmarshalJSON decodes the typed fields and keeps the whole row in
// RawObject.
func (l *ReportLine) UnmarshalJSON(b []byte) error {
	type alias ReportLine
	return decodeRaw(b, &l.RawObject, (*alias)(l))
}

// MarshalJSON writes the row exactly as the service sent it, or the typed
// fields for a row not decoded from JSON.
func (l ReportLine) MarshalJSON() ([]byte, error) {
	type alias ReportLine
	return encodeRaw(l.RawObject, alias(l))
}

// ReportTotals holds a report's "totals" value, such as {"debit": 100,
// "credit": 100}, untyped because the names of the totals vary by report.
// Whatever JSON the service sends there is kept, so even a totals value
// that is not an object is never a decoding error: Raw returns it, and Get
// and Amount then find no fields.
type ReportTotals struct {
	RawObject
}

// Amount returns the total named name as an exact decimal. It returns an
// error wrapping ErrFieldMissing when there is no such total, and a decoding
// error when the value is not a number (or a numeric string).
func (t ReportTotals) Amount(name string) (decimal.Decimal, error) {
	var d decimal.Decimal
	err := t.Get(name, &d)
	return d, err
}

// UnmarshalJSON keeps the value as it is; null leaves t unchanged.
func (t *ReportTotals) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) != "null" {
		t.raw = string(b)
	}
	return nil
}

// MarshalJSON writes the value as the service sent it, or {} for totals not
// decoded from JSON.
func (t ReportTotals) MarshalJSON() ([]byte, error) {
	if t.raw == "" {
		return []byte("{}"), nil
	}
	return []byte(t.raw), nil
}

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
