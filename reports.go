package invoicing

import (
	"context"
	"net/url"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
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
//
//codec:record lenient
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

	meta codec.Meta
}

// ReportLine is one row of a Report, for one account. Amounts are exact;
// a member the SDK has no field for is kept in Extra.
//
//codec:record lenient
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

	meta codec.Meta
}

// ReportTotals holds a report's "totals" value, such as {"debit": 100,
// "credit": 100}, kept as the service sent it because the names of the
// totals vary by report. Whatever JSON the service sends there is kept, so
// even a totals value that is not an object is never a decoding error: Raw
// returns it, and Get and Amount then find no totals.
type ReportTotals struct {
	raw  jsontext.Value
	null bool // decoded from null, with no value before: written back as null
}

// Raw returns a copy of the totals value as the service sent it, or nil for
// totals not decoded from JSON.
func (t ReportTotals) Raw() jsontext.Value { return t.raw.Clone() }

// Get decodes the total named name into dst, as Extra.Get does. It returns
// an error wrapping ErrFieldMissing when there is no such total.
func (t ReportTotals) Get(name string, dst any) error {
	var members Extra
	if t.raw.Kind() == '{' {
		_ = json.Unmarshal(t.raw, &members, codec.User) // checked when decoded
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

// UnmarshalJSON keeps the value as it is; null leaves t's totals unchanged
// (none, when t held none: it is then written back as null).
func (t *ReportTotals) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.null = t.null || t.raw == nil
		return nil
	}
	t.raw, t.null = jsontext.Value(b).Clone(), false
	return nil
}

// MarshalJSON writes the value as the service sent it (null included), or
// {} for totals not decoded from JSON.
func (t ReportTotals) MarshalJSON() ([]byte, error) {
	switch {
	case t.raw != nil:
		return t.raw.Clone(), nil
	case t.null:
		return []byte("null"), nil
	}
	return []byte("{}"), nil
}

// TrialBalanceParams are the query parameters of GET /reports/trial-balance.
// Parameters other than AsAt go in Extra.
type TrialBalanceParams struct {
	// AsAt is the date of the trial balance, sent as as_at (YYYY-MM-DD) when
	// set.
	AsAt Date `query:"as_at"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

// ProfitAndLossParams are the query parameters of GET /reports/profit-loss.
// FromDate and ToDate are named as the invoice list's date filters; other
// parameters go in Extra.
type ProfitAndLossParams struct {
	// FromDate is the start of the period, sent as from_date when set.
	FromDate Date `query:"from_date"`
	// ToDate is the end of the period, sent as to_date when set. A
	// ToDate before FromDate is a *ParamError.
	ToDate Date `query:"to_date"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

// BalanceSheetParams are the query parameters of GET
// /reports/balance-sheet. Parameters other than AsAt go in Extra.
type BalanceSheetParams struct {
	// AsAt is the date of the balance sheet, sent as as_at (YYYY-MM-DD)
	// when set.
	AsAt Date `query:"as_at"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets is a *ParamError.
	Extra url.Values
}

// TrialBalance fetches the trial balance (nil p for the service's default
// date). Server errors are retried like every GET.
func (s *ReportService) TrialBalance(ctx context.Context, p *TrialBalanceParams, opts ...RequestOption) (*Report, error) {
	return getQuery[Report](ctx, s.c, "/reports/trial-balance", p, opts)
}

// ProfitAndLoss fetches the profit and loss report (nil p for the service's
// default period).
func (s *ReportService) ProfitAndLoss(ctx context.Context, p *ProfitAndLossParams, opts ...RequestOption) (*Report, error) {
	return getQuery[Report](ctx, s.c, "/reports/profit-loss", p, opts)
}

// BalanceSheet fetches the balance sheet (nil p for the service's default
// date).
func (s *ReportService) BalanceSheet(ctx context.Context, p *BalanceSheetParams, opts ...RequestOption) (*Report, error) {
	return getQuery[Report](ctx, s.c, "/reports/balance-sheet", p, opts)
}
