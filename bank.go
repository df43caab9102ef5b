package invoicing

import (
	"net/url"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// BankAccountService reads the business's bank accounts (GET
// /bank-accounts; the service has no endpoint for one bank account). The
// service documents bank data only in outline; see the package
// documentation for what that means for these types.
//
//gen:service path=/bank-accounts key=bank_accounts record=BankAccount noun=bank_account list=BankAccountListParams
type BankAccountService service

// BankTransactionService reads bank transactions (GET /bank-transactions,
// GET /bank-transactions/{id}). The service documents bank data only in
// outline; see the package documentation for what that means for these
// types.
//
//gen:service path=/bank-transactions key=bank_transactions record=BankTransaction noun=bank_transaction list=BankTransactionListParams get
type BankTransactionService service

// BankAccount is one of the business's bank accounts. Money is exact.
//
// The service documents bank accounts only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra (a.Extra.Get("bsb", &bsb)); a field the
// service does not send is left zero (Has tells).
//
//codec:record lenient
//mirror:table name=bank_accounts order=6
type BankAccount struct {
	// ID identifies the bank account. No endpoint takes it in its path, so
	// unlike the other records' ids it is not known to be a UUID and the
	// SDK does not check it.
	ID string `json:"id"`
	// Name is the account's name.
	Name string `json:"name"`
	// AccountNumber is the bank's account number.
	AccountNumber string `json:"account_number"`
	// Currency is a currency code such as "AUD".
	Currency string `json:"currency"`
	// Balance is the account's balance in Currency; zero when the service
	// does not send it (check Has("balance")).
	Balance decimal.Decimal `json:"balance"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// BankAccountListParams are the query parameters of GET /bank-accounts.
// The SDK knows no filters for this list; pass any through Extra.
type BankAccountListParams struct {
	ListParams
	// Extra holds query parameters the SDK does not know, sent as given.
	// Setting page or page_size here is a *ParamError (use ListParams).
	Extra url.Values
}

// BankTransaction is a transaction on one of the business's bank accounts.
// Money is exact.
//
// The service documents bank transactions only in outline; see the package
// documentation for what that means for these fields. A member the SDK
// has no field for is kept in Extra; a field the service does not send is
// left zero (Has tells).
//
//codec:record lenient
//mirror:table name=bank_transactions order=7
type BankTransaction struct {
	// ID identifies the transaction, a UUID.
	ID string `json:"id"`
	// BankAccountID is the ID of the BankAccount the transaction is on.
	BankAccountID string `json:"bank_account_id"`
	// Date is the transaction's date.
	Date Date `json:"date"`
	// Description is the bank's text for the transaction.
	Description string `json:"description"`
	// Amount is the transaction's amount, positive for money in and
	// negative for money out. A direction the service sends as a field of
	// its own is in Extra.
	Amount decimal.Decimal `json:"amount"`
	// Reference is the transaction's reference.
	Reference string `json:"reference"`
	// Status is the transaction's status (e.g. whether it is reconciled),
	// as the service sends it.
	Status string `json:"status"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// BankTransactionListParams filters GET /bank-transactions. The typed
// filters are named as the invoice list's; others go in Extra. Zero fields
// are not sent.
type BankTransactionListParams struct {
	ListParams
	// BankAccountID is sent as bank_account_id.
	BankAccountID string `query:"bank_account_id"`
	// FromDate and ToDate are sent as from_date and to_date. A ToDate
	// before FromDate is a *ParamError.
	FromDate Date `query:"from_date"`
	ToDate   Date `query:"to_date"`
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}
