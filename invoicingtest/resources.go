package invoicingtest

import (
	"fmt"
	"net/http"
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
	ID string
	// Code is the account code, e.g. "4000"; reports sort by it.
	Code string
	// Name is required.
	Name string
	// Type is one of AccountRevenue, AccountExpense, AccountAsset,
	// AccountLiability and AccountEquity.
	Type string
	// Inactive hides nothing but shows is_active false.
	Inactive bool
}

// TaxCode is a tax code, as given to AddTaxCode and shown by GET /tax-codes
// as {id, code, name, rate, region}.
type TaxCode struct {
	// ID is generated when empty.
	ID string
	// Code is required, e.g. "GST".
	Code string
	// Name is free text.
	Name string
	// Rate is a percentage: 10 means 10%.
	Rate decimal.Decimal
	// Region is a country code such as AU.
	Region string
}

// BankAccount is a bank account of the business, as given to
// AddBankAccount. GET /bank-accounts shows {id, name, account_number,
// currency, balance}, where balance is OpeningBalance plus the amounts of the
// account's transactions.
type BankAccount struct {
	// ID is generated when empty.
	ID string
	// Name and AccountNumber are free text.
	Name, AccountNumber string
	// Currency defaults to AUD.
	Currency string
	// OpeningBalance is the balance before the account's transactions.
	OpeningBalance decimal.Decimal
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
	ID string
	// BankAccountID must name an existing bank account.
	BankAccountID string
	// Date is the civil date of the transaction; its time of day is ignored.
	Date time.Time
	// Description and Reference are free text.
	Description, Reference string
	// Amount is negative for money out.
	Amount decimal.Decimal
	// Status defaults to BankTransactionUnreconciled.
	Status string
}

var accountTypes = []string{AccountRevenue, AccountExpense, AccountAsset, AccountLiability, AccountEquity}

// AddAccount adds an account to the chart of accounts and returns its id.
// It panics on an unknown Type, an empty Name or a taken ID.
func (s *Server) AddAccount(a Account) string {
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	if !slices.Contains(accountTypes, a.Type) || a.Name == "" {
		panic(fmt.Sprintf("invoicingtest: AddAccount: need a Name and a Type among %v, got %+v", accountTypes, a))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mustAdd(&s.data.accounts, a.ID, &a, "AddAccount")
	return a.ID
}

// AddTaxCode adds a tax code and returns its id. It panics on a negative
// Rate, an empty Code or a taken ID.
func (s *Server) AddTaxCode(t TaxCode) string {
	if t.ID == "" {
		t.ID = uuid.NewString()
	}
	if t.Rate.IsNegative() || t.Code == "" {
		panic(fmt.Sprintf("invoicingtest: AddTaxCode: need a Code and a Rate of 0 or more, got %+v", t))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mustAdd(&s.data.taxCodes, t.ID, &t, "AddTaxCode")
	return t.ID
}

// AddBankAccount adds a bank account and returns its id. Currency defaults
// to AUD. It panics on a taken ID.
func (s *Server) AddBankAccount(b BankAccount) string {
	if b.ID == "" {
		b.ID = uuid.NewString()
	}
	if b.Currency == "" {
		b.Currency = defaultCurrency
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mustAdd(&s.data.bankAccounts, b.ID, &b, "AddBankAccount")
	return b.ID
}

// AddBankTransaction adds a transaction to a bank account's feed and
// returns its id. It panics when the bank account does not exist or the ID
// is taken.
func (s *Server) AddBankTransaction(t BankTransaction) string {
	if t.ID == "" {
		t.ID = uuid.NewString()
	}
	if t.Status == "" {
		t.Status = BankTransactionUnreconciled
	}
	t.Date = dateOf(t.Date)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.bankAccounts.get(t.BankAccountID) == nil {
		panic("invoicingtest: AddBankTransaction: unknown bank account " + t.BankAccountID)
	}
	mustAdd(&s.data.bankTxns, t.ID, &t, "AddBankTransaction")
	return t.ID
}

// mustAdd stores v under id in tbl. A taken id panics, naming fn, the Add
// method that was given it. The caller holds s.mu.
func mustAdd[T any](tbl *table[T], id string, v *T, fn string) {
	if !tbl.add(id, v) {
		panic("invoicingtest: " + fn + ": id already exists: " + id)
	}
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

// listAccounts serves GET /accounts?type=.
func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	typ, err := oneOf(q, "type", accountTypes...)
	if err != nil {
		writeError(w, err)
		return
	}
	keep := func(a *Account) bool { return typ == "" || a.Type == typ }
	serveList(s, w, p, "accounts", &s.data.accounts, keep, accountView)
}

// getAccount serves GET /accounts/{id}.
func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, &s.data.accounts, "Account", accountView)
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

// listTaxCodes serves GET /tax-codes?region= (region compared without
// regard to case).
func (s *Server) listTaxCodes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	region := q.Get("region")
	keep := func(t *TaxCode) bool { return region == "" || strings.EqualFold(t.Region, region) }
	serveList(s, w, p, "tax_codes", &s.data.taxCodes, keep, taxCodeView)
}

// getTaxCode serves GET /tax-codes/{id}.
func (s *Server) getTaxCode(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, &s.data.taxCodes, "Tax code", taxCodeView)
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

// listBankAccounts serves GET /bank-accounts.
func (s *Server) listBankAccounts(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	serveList(s, w, p, "bank_accounts", &s.data.bankAccounts, nil, s.bankAccountView)
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

// listBankTransactions serves GET /bank-transactions with the filters
// bank_account_id, from_date and to_date (on the transaction date).
func (s *Server) listBankTransactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	dates, err := parseDateRange(q)
	if err != nil {
		writeError(w, err)
		return
	}
	account := q.Get("bank_account_id")
	keep := func(t *BankTransaction) bool {
		return (account == "" || t.BankAccountID == account) && dates.contains(t.Date)
	}
	serveList(s, w, p, "bank_transactions", &s.data.bankTxns, keep, bankTransactionView)
}

// getBankTransaction serves GET /bank-transactions/{id}.
func (s *Server) getBankTransaction(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, &s.data.bankTxns, "Bank transaction", bankTransactionView)
}
