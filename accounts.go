package invoicing

import (
	"context"
	"iter"
	"net/url"

	"github.com/shopspring/decimal"
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
// documentation for what that means for these fields. Every field the
// service sends is kept in the embedded RawObject (a.Get("description",
// &d)); a field the service does not send is left zero.
type Account struct {
	RawObject
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
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (a *Account) UnmarshalJSON(b []byte) error {
	type alias Account
	return decodeRaw(b, &a.RawObject, (*alias)(a))
}

// MarshalJSON writes the object exactly as the service sent it, or the typed
// fields for an Account not decoded from JSON.
func (a Account) MarshalJSON() ([]byte, error) {
	type alias Account
	return encodeRaw(a.RawObject, alias(a))
}

// AccountListParams filters GET /accounts. Zero fields are not sent.
type AccountListParams struct {
	ListParams
	// Type is sent as type, e.g. AccountTypeRevenue for type=revenue.
	Type AccountType
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

func (p *AccountListParams) encode(q url.Values) error {
	setString(q, "type", p.Type)
	return mergeListQuery(q, p.Extra)
}

// List iterates over every account matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "accounts" or "items".
// Stop early with break; a failure is yielded as the last error.
func (s *AccountService) List(ctx context.Context, p *AccountListParams, opts ...RequestOption) iter.Seq2[*Account, error] {
	return listAll[Account](ctx, s.c, "/accounts", "accounts", orNew(p), opts)
}

// ListPage fetches one page of accounts matching p (nil for the first page
// with the service's default size).
func (s *AccountService) ListPage(ctx context.Context, p *AccountListParams, opts ...RequestOption) (*Page[Account], error) {
	return listPage[Account](ctx, s.c, "/accounts", "accounts", orNew(p), opts)
}

// Get fetches one account. An unknown id is ErrNotFound; an id that is not a
// UUID is a *ParamError.
func (s *AccountService) Get(ctx context.Context, id string, opts ...RequestOption) (*Account, error) {
	return getOne[Account](ctx, s.c, "/accounts", id, opts)
}

// TaxCode is a tax code, the tax_code_id of line items and catalog items;
// the service looks its rate up when a line is created.
//
// The service documents tax codes only in outline; see the package
// documentation for what that means for these fields. Every field the
// service sends is kept in the embedded RawObject; a field the service does
// not send is left zero.
type TaxCode struct {
	RawObject
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
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (t *TaxCode) UnmarshalJSON(b []byte) error {
	type alias TaxCode
	return decodeRaw(b, &t.RawObject, (*alias)(t))
}

// MarshalJSON writes the object exactly as the service sent it, or the typed
// fields for a TaxCode not decoded from JSON.
func (t TaxCode) MarshalJSON() ([]byte, error) {
	type alias TaxCode
	return encodeRaw(t.RawObject, alias(t))
}

// TaxCodeListParams filters GET /tax-codes. Zero fields are not sent.
type TaxCodeListParams struct {
	ListParams
	// Region is sent as region, e.g. "AU", to list the tax codes of one
	// region. The SDK does not require it; a region parameter of another
	// name goes in Extra.
	Region string
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

func (p *TaxCodeListParams) encode(q url.Values) error {
	setString(q, "region", p.Region)
	return mergeListQuery(q, p.Extra)
}

// List iterates over every tax code matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "tax_codes" or "items".
// Stop early with break; a failure is yielded as the last error.
func (s *TaxCodeService) List(ctx context.Context, p *TaxCodeListParams, opts ...RequestOption) iter.Seq2[*TaxCode, error] {
	return listAll[TaxCode](ctx, s.c, "/tax-codes", "tax_codes", orNew(p), opts)
}

// ListPage fetches one page of tax codes matching p (nil for the first page
// with the service's default size).
func (s *TaxCodeService) ListPage(ctx context.Context, p *TaxCodeListParams, opts ...RequestOption) (*Page[TaxCode], error) {
	return listPage[TaxCode](ctx, s.c, "/tax-codes", "tax_codes", orNew(p), opts)
}

// Get fetches one tax code. An unknown id is ErrNotFound; an id that is not
// a UUID is a *ParamError.
func (s *TaxCodeService) Get(ctx context.Context, id string, opts ...RequestOption) (*TaxCode, error) {
	return getOne[TaxCode](ctx, s.c, "/tax-codes", id, opts)
}
