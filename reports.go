package invoicing

import (
	"bytes"
	"context"
	"net/url"

	"github.com/shopspring/decimal"
)

// ReportService runs the accounting reports (GET /reports/trial-balance,
// /reports/profit-loss and /reports/balance-sheet). API.md lists these
// endpoints without their parameters, response shape or scope: see Report
// and the params types for what the SDK guesses, and Extra for sending
// parameters it does not know.
type ReportService service

// Report is the result of a report endpoint.
//
// API.md does not show the response of any report: the typed fields are
// guesses (an object with the report's name, its period, its currency, one
// line per account and totals). The whole object is kept in the embedded
// RawObject, so a report whose shape differs from the guess is still fully
// readable with Get or Decode; a field the service does not send is left
// zero.
type Report struct {
	RawObject
	// Name identifies the report, e.g. "trial_balance", from the key
	// "report"; this field is a guess.
	Name string `json:"report"`
	// AsAt is the date of a trial balance or balance sheet; this field is a
	// guess.
	AsAt Date `json:"as_at"`
	// FromDate and ToDate are the period of a profit and loss report; these
	// fields are guesses.
	FromDate Date `json:"from_date"`
	ToDate   Date `json:"to_date"`
	// Currency is the currency of the amounts; this field is a guess.
	Currency string `json:"currency"`
	// Lines are the report's rows, one per account; this field is a guess.
	Lines []ReportLine `json:"lines"`
	// Totals are the report's totals, whose names API.md does not suggest:
	// read them with Totals.Amount or Totals.Get.
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

// ReportLine is one row of a Report, for one account. All of its fields are
// guesses; the whole row is kept in the embedded RawObject. Amounts are
// exact.
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
	// Balance is the account's balance (its sign convention is unknown).
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

// ReportTotals holds a report's "totals" value, untyped because API.md gives
// no hint of its fields (an object such as {"debit": 100, "credit": 100} is
// the guess). Whatever JSON the service sends there is kept, so even a
// totals value that is not an object is never a decoding error: Raw
// returns it, and Get and Amount then find no fields.
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
// API.md shows none: AsAt is a guess, and others go in Extra.
type TrialBalanceParams struct {
	// AsAt is sent as as_at (YYYY-MM-DD) when set; this parameter is a guess.
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
// API.md shows none: FromDate and ToDate are guesses (named as the invoice
// list's date filters), and others go in Extra.
type ProfitAndLossParams struct {
	// FromDate is sent as from_date when set; this parameter is a guess.
	FromDate Date
	// ToDate is sent as to_date when set; this parameter is a guess. A
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
// /reports/balance-sheet. API.md shows none: AsAt is a guess, and others go
// in Extra.
type BalanceSheetParams struct {
	// AsAt is sent as as_at (YYYY-MM-DD) when set; this parameter is a guess.
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

func (s *ReportService) run(ctx context.Context, path string, p reportQuery) (*Report, error) {
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	return getQuery[Report](ctx, s.c, path, q)
}

// TrialBalance fetches the trial balance (nil p for the service's default
// date). Server errors are retried like every GET.
func (s *ReportService) TrialBalance(ctx context.Context, p *TrialBalanceParams) (*Report, error) {
	return s.run(ctx, "/reports/trial-balance", orNew(p))
}

// ProfitAndLoss fetches the profit and loss report (nil p for the service's
// default period).
func (s *ReportService) ProfitAndLoss(ctx context.Context, p *ProfitAndLossParams) (*Report, error) {
	return s.run(ctx, "/reports/profit-loss", orNew(p))
}

// BalanceSheet fetches the balance sheet (nil p for the service's default
// date).
func (s *ReportService) BalanceSheet(ctx context.Context, p *BalanceSheetParams) (*Report, error) {
	return s.run(ctx, "/reports/balance-sheet", orNew(p))
}
