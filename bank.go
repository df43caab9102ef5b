package invoicing

import (
	"context"
	"iter"
	"net/url"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// BankAccountService reads the business's bank accounts (GET
// /bank-accounts; API.md lists no endpoint for one bank account). API.md
// shows no parameters, fields or scope; see BankAccount for what the SDK
// guesses.
type BankAccountService service

// BankTransactionService reads bank transactions (GET /bank-transactions,
// GET /bank-transactions/{id}). API.md shows no parameters, fields or scope;
// see BankTransaction for what the SDK guesses.
type BankTransactionService service

// BankAccount is one of the business's bank accounts. Money is exact.
//
// API.md does not show the fields of a bank account: the typed fields are
// guesses. Every field the service sends is kept in the embedded RawObject
// (a.Get("bsb", &bsb)); a field the service does not send is left zero.
type BankAccount struct {
	RawObject
	// ID identifies the bank account. It is a string, not a uuid.UUID:
	// API.md has no path taking a bank account id, so unlike the other
	// records' ids it is not documented as a UUID.
	ID string `json:"id"`
	// Name is the account's name; this field is a guess.
	Name string `json:"name"`
	// AccountNumber is the bank's account number; this field is a guess.
	AccountNumber string `json:"account_number"`
	// Currency is a currency code; this field is a guess.
	Currency string `json:"currency"`
	// Balance is the account's balance in Currency; this field is a guess
	// (zero when the service does not send it: check Has("balance")).
	Balance decimal.Decimal `json:"balance"`
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (a *BankAccount) UnmarshalJSON(b []byte) error {
	type alias BankAccount
	return decodeRaw(b, &a.RawObject, (*alias)(a))
}

// MarshalJSON writes the object exactly as the service sent it, or the typed
// fields for a BankAccount not decoded from JSON.
func (a BankAccount) MarshalJSON() ([]byte, error) {
	type alias BankAccount
	return encodeRaw(a.RawObject, alias(a))
}

// BankAccountListParams are the query parameters of GET /bank-accounts.
// API.md shows no filters; pass any through Extra.
type BankAccountListParams struct {
	ListParams
	// Extra holds query parameters the SDK does not know, sent as given.
	// Setting page or page_size here is a *ParamError (use ListParams).
	Extra url.Values
}

func (p *BankAccountListParams) encode(q url.Values) error { return mergeListQuery(q, p.Extra) }

type bankAccountList struct {
	listEnvelope[BankAccount]
	BankAccounts []BankAccount `json:"bank_accounts"`
}

func (l *bankAccountList) page() *Page[BankAccount] { return l.pageOf(l.BankAccounts) }

// List iterates over every bank account (p may be nil), fetching pages of
// 100 lazily. The records are read from the key "bank_accounts" (a guess) or
// "items". Stop early with break; a failure is yielded as the last error.
func (s *BankAccountService) List(ctx context.Context, p *BankAccountListParams) iter.Seq2[*BankAccount, error] {
	return listAll[BankAccount, bankAccountList](ctx, s.c, "/bank-accounts", orNew(p))
}

// ListPage fetches one page of bank accounts (nil p for the first page with
// the service's default size).
func (s *BankAccountService) ListPage(ctx context.Context, p *BankAccountListParams) (*Page[BankAccount], error) {
	return listPage[BankAccount, bankAccountList](ctx, s.c, "/bank-accounts", orNew(p))
}

// BankTransaction is a transaction on one of the business's bank accounts.
// Money is exact.
//
// API.md does not show the fields of a bank transaction: the typed fields
// are guesses. Every field the service sends is kept in the embedded
// RawObject; a field the service does not send is left zero.
type BankTransaction struct {
	RawObject
	// ID identifies the transaction (API.md: path ids are UUIDs).
	ID uuid.UUID `json:"id"`
	// BankAccountID is the bank account's id; this field is a guess.
	BankAccountID string `json:"bank_account_id"`
	// Date is the transaction's date; this field is a guess.
	Date Date `json:"date"`
	// Description is the bank's text for the transaction; this field is a
	// guess.
	Description string `json:"description"`
	// Amount is positive for money in and negative for money out; the field
	// and its sign convention are guesses (a service sending a separate
	// direction field has it in Raw).
	Amount decimal.Decimal `json:"amount"`
	// Reference is the transaction's reference; this field is a guess.
	Reference string `json:"reference"`
	// Status is the transaction's status (e.g. reconciled or not), as the
	// service sends it; the field and its values are guesses.
	Status string `json:"status"`
}

// UnmarshalJSON decodes the typed fields and keeps the whole object in
// RawObject.
func (t *BankTransaction) UnmarshalJSON(b []byte) error {
	type alias BankTransaction
	return decodeRaw(b, &t.RawObject, (*alias)(t))
}

// MarshalJSON writes the object exactly as the service sent it, or the typed
// fields for a BankTransaction not decoded from JSON.
func (t BankTransaction) MarshalJSON() ([]byte, error) {
	type alias BankTransaction
	return encodeRaw(t.RawObject, alias(t))
}

// BankTransactionListParams filters GET /bank-transactions. API.md shows no
// filters: the typed ones are guesses (named as the invoice list's filters),
// and others go in Extra. Zero fields are not sent.
type BankTransactionListParams struct {
	ListParams
	// BankAccountID is sent as bank_account_id (a guess).
	BankAccountID string
	// FromDate and ToDate are sent as from_date and to_date (guesses). A
	// ToDate before FromDate is a *ParamError.
	FromDate Date
	ToDate   Date
	// Extra holds query parameters the SDK does not know, sent as given. A
	// name a typed field also sets, page or page_size is a *ParamError.
	Extra url.Values
}

func (p *BankTransactionListParams) encode(q url.Values) error {
	setString(q, "bank_account_id", p.BankAccountID)
	setDate(q, "from_date", p.FromDate)
	setDate(q, "to_date", p.ToDate)
	if err := checkDateRange(p.FromDate, p.ToDate); err != nil {
		return err
	}
	return mergeListQuery(q, p.Extra)
}

type bankTransactionList struct {
	listEnvelope[BankTransaction]
	BankTransactions []BankTransaction `json:"bank_transactions"`
}

func (l *bankTransactionList) page() *Page[BankTransaction] { return l.pageOf(l.BankTransactions) }

// List iterates over every bank transaction matching p (nil for all),
// fetching pages of 100 lazily. The records are read from the key
// "bank_transactions" (a guess) or "items". Stop early with break; a failure
// is yielded as the last error.
func (s *BankTransactionService) List(ctx context.Context, p *BankTransactionListParams) iter.Seq2[*BankTransaction, error] {
	return listAll[BankTransaction, bankTransactionList](ctx, s.c, "/bank-transactions", orNew(p))
}

// ListPage fetches one page of bank transactions matching p (nil for the
// first page with the service's default size).
func (s *BankTransactionService) ListPage(ctx context.Context, p *BankTransactionListParams) (*Page[BankTransaction], error) {
	return listPage[BankTransaction, bankTransactionList](ctx, s.c, "/bank-transactions", orNew(p))
}

// Get fetches one bank transaction. An unknown id is ErrNotFound; an id that
// is not a UUID is a *ParamError.
func (s *BankTransactionService) Get(ctx context.Context, id string) (*BankTransaction, error) {
	return getOne[BankTransaction](ctx, s.c, "/bank-transactions", id)
}
