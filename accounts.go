package invoicing

import (
	"net/url"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// AccountService reads the chart of accounts (GET /accounts, GET
// /accounts/{id}). The service documents accounts only in outline; see the
// package documentation for what that means for these types.
//
//gen:service path=/accounts key=accounts record=Account noun=account list=AccountListParams get
type AccountService service

// TaxCodeService reads tax codes (GET /tax-codes, GET /tax-codes/{id}); the
// service lists tax codes for a region. The service documents tax codes only
// in outline; see the package documentation for what that means for these
// types.
//
//gen:service path=/tax-codes key=tax_codes record=TaxCode noun=tax_code list=TaxCodeListParams get
type TaxCodeService service

// Account is an account of the business's chart of accounts, the
// account_id of line items and catalog items.
//
// The service documents accounts only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra (a.Extra.Get("description", &d)); a
// field the service does not send is left zero (Has tells).
//
//codec:record lenient
//mirror:table name=accounts order=3
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

// TaxCode is a tax code, the tax_code_id of line items and catalog items;
// the service looks its rate up when a line is created.
//
// The service documents tax codes only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra; a field the service does not send is
// left zero (Has tells).
//
//codec:record lenient
//mirror:table name=tax_codes order=4
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
