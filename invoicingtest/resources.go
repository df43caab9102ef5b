package invoicingtest

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Account types of the chart of accounts.
const (
	AccountRevenue   = "revenue"
	AccountExpense   = "expense"
	AccountAsset     = "asset"
	AccountLiability = "liability"
	AccountEquity    = "equity"
)

// Account is an account of the chart of accounts, as given to AddAccount
// and shown by GET /accounts as {id, code, name, type, is_active}.
type Account struct {
	// ID is generated when empty.
	ID string `json:"id"`
	// Code is the account code, e.g. "4000"; reports sort by it.
	Code string `json:"code"`
	// Name is required.
	Name string `json:"name"`
	// Type is one of AccountRevenue, AccountExpense, AccountAsset,
	// AccountLiability and AccountEquity.
	Type string `json:"type"`
	// Inactive hides nothing but shows is_active false.
	Inactive bool `json:"inactive,omitzero"`
}

// TaxCode is a tax code, as given to AddTaxCode and shown by GET /tax-codes
// as {id, code, name, rate, region}.
type TaxCode struct {
	// ID is generated when empty.
	ID string `json:"id"`
	// Code is required, e.g. "GST".
	Code string `json:"code"`
	// Name is free text.
	Name string `json:"name"`
	// Rate is a percentage: 10 means 10%.
	Rate decimal.Decimal `json:"rate"`
	// Region is a country code such as AU.
	Region string `json:"region"`
}

// BankAccount is a bank account of the business, as given to
// AddBankAccount. GET /bank-accounts shows {id, name, account_number,
// currency, balance}, where balance is OpeningBalance plus the amounts of the
// account's transactions.
type BankAccount struct {
	// ID is generated when empty.
	ID string `json:"id"`
	// Name is free text.
	Name string `json:"name"`
	// AccountNumber is free text.
	AccountNumber string `json:"account_number"`
	// Currency defaults to AUD.
	Currency string `json:"currency"`
	// OpeningBalance is the balance before the account's transactions.
	OpeningBalance decimal.Decimal `json:"opening_balance"`
}

// Bank transaction statuses used by the seed data; any other text may be
// given to AddBankTransaction.
const (
	BankTransactionUnreconciled = "unreconciled"
	BankTransactionReconciled   = "reconciled"
)

// BankTransaction is a line of a bank feed, as given to AddBankTransaction
// and shown by GET /bank-transactions as {id, bank_account_id, date,
// description, amount, reference, status}.
type BankTransaction struct {
	// ID is generated when empty.
	ID string `json:"id"`
	// BankAccountID must name an existing bank account.
	BankAccountID string `json:"bank_account_id"`
	// Date is the civil date of the transaction; its time of day is ignored.
	Date time.Time `json:"date"`
	// Description is free text.
	Description string `json:"description"`
	// Reference is free text.
	Reference string `json:"reference"`
	// Amount is negative for money out.
	Amount decimal.Decimal `json:"amount"`
	// Status defaults to BankTransactionUnreconciled.
	Status string `json:"status"`
}

var accountTypes = []string{AccountRevenue, AccountExpense, AccountAsset, AccountLiability, AccountEquity}

// AddAccount adds an account to the chart of accounts and returns its id.
// It panics on an unknown Type, an empty Name or a taken ID.
func (s *Server) AddAccount(a Account) string {
	if !slices.Contains(accountTypes, a.Type) || a.Name == "" {
		panic(fmt.Sprintf("invoicingtest: AddAccount: need a Name and a Type among %v, got %+v", accountTypes, a))
	}
	return addLocked(s, &s.data.accounts, &a.ID, &a, "AddAccount")
}

// AddTaxCode adds a tax code and returns its id. It panics on a negative
// Rate, an empty Code or a taken ID.
func (s *Server) AddTaxCode(t TaxCode) string {
	if t.Rate.IsNegative() || t.Code == "" {
		panic(fmt.Sprintf("invoicingtest: AddTaxCode: need a Code and a Rate of 0 or more, got %+v", t))
	}
	return addLocked(s, &s.data.taxCodes, &t.ID, &t, "AddTaxCode")
}

// AddBankAccount adds a bank account and returns its id. Currency defaults
// to AUD. It panics on a taken ID.
func (s *Server) AddBankAccount(b BankAccount) string {
	if b.Currency == "" {
		b.Currency = defaultCurrency
	}
	return addLocked(s, &s.data.bankAccounts, &b.ID, &b, "AddBankAccount")
}

// AddBankTransaction adds a transaction to a bank account's feed and
// returns its id. It panics when the bank account does not exist or the ID
// is taken.
func (s *Server) AddBankTransaction(t BankTransaction) string {
	if t.Status == "" {
		t.Status = BankTransactionUnreconciled
	}
	t.Date = dateOf(t.Date)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.bankAccounts.get(t.BankAccountID) == nil {
		panic("invoicingtest: AddBankTransaction: unknown bank account " + t.BankAccountID)
	}
	return mustAdd(&s.data.bankTxns, &t.ID, &t, "AddBankTransaction")
}

// addLocked is mustAdd under s.mu.
func addLocked[T any](s *Server, tbl *table[T], id *string, v *T, fn string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mustAdd(tbl, id, v, fn)
}

// mustAdd stores v in tbl under *id, which it sets to a new UUID when it is
// empty, and returns the id. A taken id panics, naming fn, the Add method
// that was given it. The caller holds s.mu.
func mustAdd[T any](tbl *table[T], id *string, v *T, fn string) string {
	if *id == "" {
		*id = uuid.NewString()
	}
	if !tbl.add(*id, v) {
		panic("invoicingtest: " + fn + ": id already exists: " + *id)
	}
	return *id
}

// --- accounts ---

type accountJSON struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	IsActive bool   `json:"is_active"`
}

func accountView(a *Account) accountJSON {
	return accountJSON{a.ID, a.Code, a.Name, a.Type, !a.Inactive}
}

// accountFilter reads the filter of GET /accounts: type.
func accountFilter(q url.Values) (func(*Account) bool, *apiError) {
	typ, err := oneOf(q, "type", accountTypes...)
	if err != nil {
		return nil, err
	}
	return func(a *Account) bool { return typ == "" || a.Type == typ }, nil
}

// --- tax codes ---

type taxCodeJSON struct {
	ID     string `json:"id"`
	Code   string `json:"code"`
	Name   string `json:"name"`
	Rate   number `json:"rate"`
	Region string `json:"region"`
}

func taxCodeView(t *TaxCode) taxCodeJSON {
	return taxCodeJSON{t.ID, t.Code, t.Name, number(t.Rate), t.Region}
}

// taxCodeFilter reads the filter of GET /tax-codes: region (compared
// without regard to case).
func taxCodeFilter(q url.Values) (func(*TaxCode) bool, *apiError) {
	region := q.Get("region")
	return func(t *TaxCode) bool { return region == "" || strings.EqualFold(t.Region, region) }, nil
}

// --- bank accounts and transactions ---

type bankAccountJSON struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	AccountNumber string `json:"account_number"`
	Currency      string `json:"currency"`
	Balance       money  `json:"balance"`
}

// bankAccountView shows a bank account with its balance. The caller holds
// s.mu.
func (s *Server) bankAccountView(b *BankAccount) bankAccountJSON {
	balance := b.OpeningBalance
	for _, t := range s.data.bankTxns.all() {
		if t.BankAccountID == b.ID {
			balance = balance.Add(t.Amount)
		}
	}
	return bankAccountJSON{b.ID, b.Name, b.AccountNumber, b.Currency, money(balance)}
}

type bankTransactionJSON struct {
	ID            string `json:"id"`
	BankAccountID string `json:"bank_account_id"`
	Date          date   `json:"date"`
	Description   string `json:"description"`
	Amount        money  `json:"amount"`
	Reference     string `json:"reference"`
	Status        string `json:"status"`
}

func bankTransactionView(t *BankTransaction) bankTransactionJSON {
	return bankTransactionJSON{t.ID, t.BankAccountID, date(t.Date), t.Description, money(t.Amount), t.Reference, t.Status}
}

// bankTransactionFilter reads the filters of GET /bank-transactions:
// bank_account_id, from_date and to_date (on the transaction date).
func bankTransactionFilter(q url.Values) (func(*BankTransaction) bool, *apiError) {
	dates, err := parseDateRange(q)
	if err != nil {
		return nil, err
	}
	account := q.Get("bank_account_id")
	return func(t *BankTransaction) bool {
		return (account == "" || t.BankAccountID == account) && dates.contains(t.Date)
	}, nil
}
