package invoicing

import (
	"context"
	"iter"
	"net/url"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// AccountService reads the chart of accounts (GET /accounts, GET
// /accounts/{id}). API.md lists these endpoints and references a type filter
// such as type=revenue, but shows no fields or scopes; see Account for what
// the SDK guesses.
type AccountService service

// TaxCodeService reads tax codes (GET /tax-codes, GET /tax-codes/{id}).
// API.md says the list is "for a region" but shows no parameters, fields or
// scopes; see TaxCode for what the SDK guesses.
type TaxCodeService service

// AccountType is the type of a ledger account. API.md references only the
// value revenue (as a list filter); the other constants are guesses. Values
// the SDK does not know are kept as they are.
type AccountType string

// Account types: AccountTypeRevenue is referenced by API.md; the others are
// guesses.
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
// API.md does not show the fields of an account: the typed fields are
// guesses. Every field the service sends is kept in the embedded RawObject
// (a.Get("description", &d)); a field the service does not send is left
// zero.
type Account struct {
	RawObject
	// ID identifies the account (API.md: path ids are UUIDs).
	ID uuid.UUID `json:"id"`
	// Code is the account's code in the chart, e.g. "200"; this field is a
	// guess.
	Code string `json:"code"`
	// Name is the account's name; this field is a guess.
	Name string `json:"name"`
	// Type is the account's type (the filter type=revenue is referenced by
	// API.md; the key "type" in the record is a guess).
	Type AccountType `json:"type"`
	// IsActive is nil when the service does not send is_active, so that a
	// missing field is not read as "inactive"; this field is a guess.
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
	// Type is sent as type, e.g. AccountTypeRevenue (API.md references
	// type=revenue).
	Type AccountType
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

func (p *AccountListParams) encode(q url.Values) error {
	setString(q, "type", p.Type)
	return mergeListQuery(q, p.Extra)
}

type accountList struct {
	listEnvelope[Account]
	Accounts []Account `json:"accounts"`
}

func (l *accountList) page() *Page[Account] { return l.pageOf(l.Accounts) }

// List iterates over every account matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "accounts" (a guess) or
// "items". Stop early with break; a failure is yielded as the last error.
func (s *AccountService) List(ctx context.Context, p *AccountListParams) iter.Seq2[*Account, error] {
	return listAll[Account, accountList](ctx, s.c, "/accounts", orNew(p))
}

// ListPage fetches one page of accounts matching p (nil for the first page
// with the service's default size).
func (s *AccountService) ListPage(ctx context.Context, p *AccountListParams) (*Page[Account], error) {
	return listPage[Account, accountList](ctx, s.c, "/accounts", orNew(p))
}

// Get fetches one account. An unknown id is ErrNotFound; an id that is not a
// UUID is a *ParamError.
func (s *AccountService) Get(ctx context.Context, id string) (*Account, error) {
	return getOne[Account](ctx, s.c, "/accounts", id)
}

// TaxCode is a tax code, the tax_code_id of line items and catalog items;
// the service looks its rate up when a line is created.
//
// API.md does not show the fields of a tax code: the typed fields are
// guesses. Every field the service sends is kept in the embedded RawObject;
// a field the service does not send is left zero.
type TaxCode struct {
	RawObject
	// ID identifies the tax code (API.md: path ids are UUIDs).
	ID uuid.UUID `json:"id"`
	// Code is the tax code's short code, e.g. "GST"; this field is a guess.
	Code string `json:"code"`
	// Name is the tax code's name; this field is a guess.
	Name string `json:"name"`
	// Rate is the rate in percent, e.g. 10 for 10%. API.md speaks of "a 1%
	// tax code" but does not show the record: the key and the unit (percent
	// rather than a fraction such as 0.1) are guesses.
	Rate decimal.Decimal `json:"rate"`
	// Region is the region the code applies to, e.g. "AU" (API.md lists tax
	// codes "for a region"; the key and the values are guesses).
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
	// Region is sent as region, e.g. "AU". API.md says the list is "for a
	// region" without naming the parameter or its values: both are guesses,
	// and the SDK does not require it (pass another name through Extra).
	Region string
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

func (p *TaxCodeListParams) encode(q url.Values) error {
	setString(q, "region", p.Region)
	return mergeListQuery(q, p.Extra)
}

type taxCodeList struct {
	listEnvelope[TaxCode]
	TaxCodes []TaxCode `json:"tax_codes"`
}

func (l *taxCodeList) page() *Page[TaxCode] { return l.pageOf(l.TaxCodes) }

// List iterates over every tax code matching p (nil for all), fetching pages
// of 100 lazily. The records are read from the key "tax_codes" (a guess) or
// "items". Stop early with break; a failure is yielded as the last error.
func (s *TaxCodeService) List(ctx context.Context, p *TaxCodeListParams) iter.Seq2[*TaxCode, error] {
	return listAll[TaxCode, taxCodeList](ctx, s.c, "/tax-codes", orNew(p))
}

// ListPage fetches one page of tax codes matching p (nil for the first page
// with the service's default size).
func (s *TaxCodeService) ListPage(ctx context.Context, p *TaxCodeListParams) (*Page[TaxCode], error) {
	return listPage[TaxCode, taxCodeList](ctx, s.c, "/tax-codes", orNew(p))
}

// Get fetches one tax code. An unknown id is ErrNotFound; an id that is not
// a UUID is a *ParamError.
func (s *TaxCodeService) Get(ctx context.Context, id string) (*TaxCode, error) {
	return getOne[TaxCode](ctx, s.c, "/tax-codes", id)
}
