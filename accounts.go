package invoicing

import (
	"context"
	"iter"
	"net/url"
	"reflect"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
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
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra (a.Extra.Get("description", &d)); a
// field the service does not send is left zero (Has tells).
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

	from decodedFrom
}

// UnmarshalJSONFrom decodes the record leniently (see the package
// documentation, "Resources documented in outline"), keeping the members the
// SDK has no field for in Extra (the encoding/json/v2 interface).
func (a *Account) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain Account
	return decodeLenient(dec, (*plain)(a), &a.from)
}

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (a *Account) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, a) }

// MarshalJSONTo encodes the record (money as exact numbers): a decoded
// record encodes back to the members it was decoded from, a mismatched
// field as the value the service sent; a record built in code encodes its
// typed fields, then the members in Extra (the encoding/json/v2
// interface).
func (a Account) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Account
	return marshalLenient(enc, (*plain)(&a), &a.from)
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (a Account) MarshalJSON() ([]byte, error) { return marshalJSON(a) }

// MismatchedFields returns the JSON names of the typed fields whose value did
// not fit their Go type, in field order, or nil when every field fit. Those
// fields are zero; the values the service sent are in Extra.
func (a Account) MismatchedFields() []string { return slices.Clone(a.from.mismatched) }

// Has reports whether the object the record was decoded from had a member
// named name, a typed field's (even one whose value was zero or null) or one
// kept in Extra. It is false for a record built in code.
func (a Account) Has(name string) bool {
	return a.Extra.Has(name) || a.from.has(reflect.TypeFor[Account](), name)
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
// WithPrefetch(n) fetches up to n pages ahead; Collect and First gather the
// records.
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
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra; a field the service does not send is
// left zero (Has tells).
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

	from decodedFrom
}

// UnmarshalJSONFrom decodes the record leniently (see the package
// documentation, "Resources documented in outline"), keeping the members the
// SDK has no field for in Extra (the encoding/json/v2 interface).
func (t *TaxCode) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain TaxCode
	return decodeLenient(dec, (*plain)(t), &t.from)
}

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (t *TaxCode) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, t) }

// MarshalJSONTo encodes the record (money as exact numbers): a decoded
// record encodes back to the members it was decoded from, a mismatched
// field as the value the service sent; a record built in code encodes its
// typed fields, then the members in Extra (the encoding/json/v2
// interface).
func (t TaxCode) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain TaxCode
	return marshalLenient(enc, (*plain)(&t), &t.from)
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (t TaxCode) MarshalJSON() ([]byte, error) { return marshalJSON(t) }

// MismatchedFields returns the JSON names of the typed fields whose value did
// not fit their Go type, in field order, or nil when every field fit. Those
// fields are zero; the values the service sent are in Extra.
func (t TaxCode) MismatchedFields() []string { return slices.Clone(t.from.mismatched) }

// Has reports whether the object the record was decoded from had a member
// named name, a typed field's (even one whose value was zero or null) or one
// kept in Extra. It is false for a record built in code.
func (t TaxCode) Has(name string) bool {
	return t.Extra.Has(name) || t.from.has(reflect.TypeFor[TaxCode](), name)
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
// WithPrefetch(n) fetches up to n pages ahead; Collect and First gather the
// records.
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
