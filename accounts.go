package invoicing

import (
	"context"
	"iter"
	"net/url"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// AccountService reads the chart of accounts (GET /accounts, GET
// /accounts/{id}). The service documents accounts only in outline; see the
// package documentation for what that means for these types.
type AccountService service

// TaxCodeService reads tax codes (GET /tax-codes, GET /tax-codes/{id}); the
// service lists tax codes for a region. The service documents tax codes only
// in outline; see the package documentation for what that means for these
// types.
type TaxCodeService service

// AccountType is the type of a ledger account, as in the list filter
// type=revenue. Values the SDK does not know are kept as they are, so
// compare against the constants rather than switching exhaustively.
type AccountType string

// Account types: AccountTypeRevenue is the value of the service's list
// filter type=revenue; the others name the usual types of a chart of
// accounts.
const (
	AccountTypeRevenue   AccountType = "revenue"
	AccountTypeExpense   AccountType = "expense"
	AccountTypeAsset     AccountType = "asset"
	AccountTypeLiability AccountType = "liability"
	AccountTypeEquity    AccountType = "equity"
)

// Known reports whether t is one of the constants above.
func (t AccountType) Known() bool {
	switch t {
	case AccountTypeRevenue, AccountTypeExpense, AccountTypeAsset, AccountTypeLiability, AccountTypeEquity:
		return true
	}
	return false
}

// Account is an account of the business's chart of accounts, the
// account_id of line items and catalog items.
//
// The service documents accounts only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra (a.Extra.Get("description", &d)); a
// field the service does not send is left zero (Has tells).
//
//codec:record lenient
type Account struct {
	// ID identifies the account, a UUID.
	ID string `json:"id"`
	// Code is the account's code in the chart, e.g. "200".
	Code string `json:"code"`
	// Name is the account's name.
	Name string `json:"name"`
	// Type is the account's type, e.g. AccountTypeRevenue.
	Type AccountType `json:"type"`
	// IsActive reports whether the account is in use. It is nil when the
	// service does not send is_active, so that a missing field is not read
	// as "inactive".
	IsActive *bool `json:"is_active"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// AccountListParams filters GET /accounts. Zero fields are not sent.
type AccountListParams struct {
	ListParams
	// Type is sent as type, e.g. AccountTypeRevenue for type=revenue.
	Type AccountType `query:"type"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

// List iterates over every account matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "accounts" or "items".
// Stop early with break; a failure is yielded as the last error.
// WithPrefetch(n) fetches up to n pages ahead; Collect and First gather the
// records.
func (s *AccountService) List(ctx context.Context, p *AccountListParams, opts ...ListOption) iter.Seq2[*Account, error] {
	return list[Account](ctx, s.c, "/accounts", "accounts", p, opts)
}

// ListPage fetches one page of accounts matching p (nil for the first page
// with the service's default size).
func (s *AccountService) ListPage(ctx context.Context, p *AccountListParams, opts ...RequestOption) (*Page[Account], error) {
	return listPage[Account](ctx, s.c, "/accounts", "accounts", p, opts)
}

// Get fetches one account. An unknown id is ErrNotFound; an id that is not a
// UUID is a *ParamError.
func (s *AccountService) Get(ctx context.Context, id string, opts ...RequestOption) (*Account, error) {
	return get[Account](ctx, s.c, "/accounts", id, opts)
}

// TaxCode is a tax code, the tax_code_id of line items and catalog items;
// the service looks its rate up when a line is created.
//
// The service documents tax codes only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra; a field the service does not send is
// left zero (Has tells).
//
//codec:record lenient
type TaxCode struct {
	// ID identifies the tax code, a UUID.
	ID string `json:"id"`
	// Code is the tax code's short code, e.g. "GST".
	Code string `json:"code"`
	// Name is the tax code's name.
	Name string `json:"name"`
	// Rate is the tax rate in percent, 10 for 10% (not a fraction such as
	// 0.1); zero when the service does not send rate (check Has("rate")).
	Rate decimal.Decimal `json:"rate"`
	// Region is the region the code applies to, e.g. "AU".
	Region string `json:"region"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// TaxCodeListParams filters GET /tax-codes. Zero fields are not sent.
type TaxCodeListParams struct {
	ListParams
	// Region is sent as region, e.g. "AU", to list the tax codes of one
	// region. The SDK does not require it; a region parameter of another
	// name goes in Extra.
	Region string `query:"region"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

// List iterates over every tax code matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "tax_codes" or "items".
// Stop early with break; a failure is yielded as the last error.
// WithPrefetch(n) fetches up to n pages ahead; Collect and First gather the
// records.
func (s *TaxCodeService) List(ctx context.Context, p *TaxCodeListParams, opts ...ListOption) iter.Seq2[*TaxCode, error] {
	return list[TaxCode](ctx, s.c, "/tax-codes", "tax_codes", p, opts)
}

// ListPage fetches one page of tax codes matching p (nil for the first page
// with the service's default size).
func (s *TaxCodeService) ListPage(ctx context.Context, p *TaxCodeListParams, opts ...RequestOption) (*Page[TaxCode], error) {
	return listPage[TaxCode](ctx, s.c, "/tax-codes", "tax_codes", p, opts)
}

// Get fetches one tax code. An unknown id is ErrNotFound; an id that is not
// a UUID is a *ParamError.
func (s *TaxCodeService) Get(ctx context.Context, id string, opts ...RequestOption) (*TaxCode, error) {
	return get[TaxCode](ctx, s.c, "/tax-codes", id, opts)
}
