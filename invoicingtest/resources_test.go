package invoicingtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// billBody is a valid POST /bills body: one line of 200 at 10% GST.
func billBody(extra map[string]any) map[string]any {
	return withExtra(map[string]any{
		"supplier_id":         SeedSupplierID,
		"default_account_id":  SeedExpenseAccountID,
		"default_tax_code_id": SeedGSTTaxCodeID,
		"line_items":          []any{map[string]any{"description": "Paper", "unit_price": jsonNumber("200")}},
	}, extra)
}

func TestClients(t *testing.T) {
	srv, _ := newServer(t)
	page := get(t, srv, "/clients").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("2"), page["total"])
	clients := list(t, page, "clients")
	assert.Equal(t, map[string]any{
		"id": SeedClientID, "name": "Acme Pty Ltd", "email": "accounts@acme.example", "phone": "+61 2 9000 0000",
		"created_at": "2026-03-10T09:30:00Z", "updated_at": nil,
	}, clients[0])

	c := post(t, srv, "/clients", map[string]any{"name": "Initech", "email": "ap@initech.example", "phone": "555"}).requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, "Initech", c["name"])
	assert.Equal(t, c, get(t, srv, "/clients/"+c["id"].(string)).requireStatus(t, http.StatusOK).object(t))
	assert.Equal(t, num("3"), get(t, srv, "/clients").object(t)["total"])

	// The new client can be invoiced.
	createInvoice(t, srv, map[string]any{"client_id": c["id"]})

	r := post(t, srv, "/clients", map[string]any{"email": "x@y.example"}).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "name is required", r.detail(t))
	post(t, srv, "/clients", map[string]any{"name": "Bad", "email": "not-an-email"}).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "Client not found", get(t, srv, "/clients/"+SeedSupplierID).requireStatus(t, http.StatusNotFound).detail(t))
}

func TestSuppliers(t *testing.T) {
	srv, _ := newServer(t)
	page := get(t, srv, "/suppliers?page_size=1").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("2"), page["total"])
	assert.Equal(t, true, page["has_more"])
	assert.Equal(t, SeedSupplierID, list(t, page, "suppliers")[0]["id"])

	s := post(t, srv, "/suppliers", map[string]any{"name": "Paper Co"}).requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, s, get(t, srv, "/suppliers/"+s["id"].(string)).object(t))
	assert.Equal(t, "Supplier not found", get(t, srv, "/suppliers/"+SeedClientID).requireStatus(t, http.StatusNotFound).detail(t))
}

func TestAddContactHelpers(t *testing.T) {
	srv, _ := newServer(t)
	id := srv.AddClient(Contact{Name: "Umbrella", Email: "a@umbrella.example"})
	assert.Equal(t, "Umbrella", get(t, srv, "/clients/"+id).requireStatus(t, http.StatusOK).object(t)["name"])
	fixed := srv.AddSupplier(Contact{ID: "5eed0002-0000-4000-8000-0000000000ff", Name: "Fixed"})
	assert.Equal(t, "5eed0002-0000-4000-8000-0000000000ff", fixed)
	get(t, srv, "/suppliers/"+fixed).requireStatus(t, http.StatusOK)
	assert.Panics(t, func() { srv.AddClient(Contact{}) })
	assert.Panics(t, func() { srv.AddClient(Contact{ID: SeedClientID, Name: "Duplicate"}) })
	events := srv.Events()
	require.Len(t, events, 2)
	assert.Equal(t, webhooks.EventContactCreated, events[0].Name)
}

func TestBills(t *testing.T) {
	srv, _ := newServer(t)
	b := post(t, srv, "/bills", billBody(map[string]any{"bill_number": "OS-1", "issue_date": "2026-03-01"})).requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, "OS-1", b["bill_number"])
	assert.Equal(t, SeedSupplierID, b["supplier_id"])
	assert.Equal(t, "Office Supplies Co", b["supplier_name"])
	assert.Equal(t, "draft", b["status"])
	assert.Equal(t, "2026-03-01", b["issue_date"])
	assert.Equal(t, "2026-03-31", b["due_date"])
	assert.Equal(t, "AUD", b["currency"])
	assert.Equal(t, num("200.00"), b["subtotal"])
	assert.Equal(t, num("20.00"), b["tax_total"])
	assert.Equal(t, num("220.00"), b["total"])
	assert.Nil(t, b["updated_at"])
	l := list(t, b, "line_items")[0]
	assert.Equal(t, num("220.00"), l["amount"])
	assert.Equal(t, num("20.00"), l["tax_amount"])
	assert.Equal(t, SeedExpenseAccountID, l["account_id"])
	assert.Equal(t, SeedGSTTaxCodeID, l["tax_code_id"])
	assert.Equal(t, b, get(t, srv, "/bills/"+b["id"].(string)).requireStatus(t, http.StatusOK).object(t))

	r := post(t, srv, "/bills", billBody(map[string]any{"bill_number": "OS-1"})).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "Bill number already exists for this supplier", r.detail(t))
	post(t, srv, "/bills", billBody(map[string]any{"bill_number": "OS-1", "supplier_id": SeedOtherSupplierID})).requireStatus(t, http.StatusCreated)
	post(t, srv, "/bills", billBody(map[string]any{"supplier_id": SeedClientID})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/bills", billBody(map[string]any{"status": "paid"})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/bills", billBody(map[string]any{"default_account_id": ""})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/bills", `[]`).requireStatus(t, http.StatusBadRequest)

	require.NoError(t, srv.ApproveBill(b["id"].(string)))
	assert.ErrorIs(t, srv.ApproveBill(b["id"].(string)), ErrInvalidState)
	assert.Equal(t, num("1"), get(t, srv, "/bills?status=approved").object(t)["total"])
	assert.Equal(t, num("1"), get(t, srv, "/bills?status=draft").object(t)["total"])
	assert.Equal(t, num("1"), get(t, srv, "/bills?supplier_id="+SeedOtherSupplierID).object(t)["total"])
	assert.Equal(t, num("2"), get(t, srv, "/bills").object(t)["total"])
	get(t, srv, "/bills?status=open").requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, "Bill not found", get(t, srv, "/bills/nope").requireStatus(t, http.StatusNotFound).detail(t))
}

func TestAccounts(t *testing.T) {
	srv, _ := newServer(t)
	all := get(t, srv, "/accounts").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("10"), all["total"])

	revenue := list(t, get(t, srv, "/accounts?type=revenue").object(t), "accounts")
	require.Len(t, revenue, 2)
	assert.Equal(t, map[string]any{"id": SeedRevenueAccountID, "code": "4000", "name": "Sales", "type": "revenue", "is_active": true}, revenue[0])
	expense := list(t, get(t, srv, "/accounts?type=expense").object(t), "accounts")
	require.Len(t, expense, 2)
	assert.Equal(t, SeedExpenseAccountID, expense[0]["id"])
	get(t, srv, "/accounts?type=income").requireStatus(t, http.StatusBadRequest)

	id := srv.AddAccount(Account{Code: "4200", Name: "Old sales", Type: AccountRevenue, Inactive: true})
	got := get(t, srv, "/accounts/"+id).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, false, got["is_active"])
	assert.Equal(t, "Account not found", get(t, srv, "/accounts/nope").requireStatus(t, http.StatusNotFound).detail(t))
	assert.Panics(t, func() { srv.AddAccount(Account{Name: "x", Type: "income"}) })
}

func TestTaxCodes(t *testing.T) {
	srv, _ := newServer(t)
	au := list(t, get(t, srv, "/tax-codes?region=AU").requireStatus(t, http.StatusOK).object(t), "tax_codes")
	require.Len(t, au, 3)
	assert.Equal(t, map[string]any{"id": SeedGSTTaxCodeID, "code": "GST", "name": "GST on Income", "rate": num("10"), "region": "AU"}, au[0])
	assert.Equal(t, num("1"), au[1]["rate"])
	assert.Equal(t, num("0"), au[2]["rate"])
	nz := list(t, get(t, srv, "/tax-codes?region=nz").object(t), "tax_codes")
	require.Len(t, nz, 1)
	assert.Equal(t, num("4"), get(t, srv, "/tax-codes").object(t)["total"])

	id := srv.AddTaxCode(TaxCode{Code: "HALF", Name: "Half", Rate: dec("12.5"), Region: "AU"})
	assert.Equal(t, num("12.5"), get(t, srv, "/tax-codes/"+id).requireStatus(t, http.StatusOK).object(t)["rate"])
	inv := createInvoice(t, srv, map[string]any{"default_tax_code_id": id})
	assert.Equal(t, num("12.50"), inv["tax_total"], "a new tax code's rate is used for line tax")
	get(t, srv, "/tax-codes/nope").requireStatus(t, http.StatusNotFound)
}

func TestBankAccountsAndTransactions(t *testing.T) {
	srv, _ := newServer(t)
	accounts := list(t, get(t, srv, "/bank-accounts").requireStatus(t, http.StatusOK).object(t), "bank_accounts")
	require.Len(t, accounts, 2)
	assert.Equal(t, map[string]any{
		"id": SeedBankAccountID, "name": "Business Cheque Account", "account_number": "062-000 12345678",
		"currency": "AUD", "balance": num("10870.00"), // 10000 + 1100 - 220 - 10
	}, accounts[0])
	assert.Equal(t, num("50041.10"), accounts[1]["balance"])

	txns := get(t, srv, "/bank-transactions").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("4"), txns["total"])
	first := list(t, txns, "bank_transactions")[0]
	assert.Equal(t, map[string]any{
		"id": SeedBankTransactionID, "bank_account_id": SeedBankAccountID, "date": "2026-01-05",
		"description": "Deposit Acme Pty Ltd", "amount": num("1100.00"), "reference": "ACME-0001", "status": "reconciled",
	}, first)
	assert.Equal(t, first, get(t, srv, "/bank-transactions/"+SeedBankTransactionID).requireStatus(t, http.StatusOK).object(t))

	assert.Equal(t, num("3"), get(t, srv, "/bank-transactions?bank_account_id="+SeedBankAccountID).object(t)["total"])
	jan := list(t, get(t, srv, "/bank-transactions?from_date=2026-01-06&to_date=2026-01-31").object(t), "bank_transactions")
	require.Len(t, jan, 2)
	assert.Equal(t, num("-220.00"), jan[0]["amount"], "money out is negative")
	get(t, srv, "/bank-transactions?to_date=yesterday").requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, "Bank transaction not found", get(t, srv, "/bank-transactions/nope").requireStatus(t, http.StatusNotFound).detail(t))

	id := srv.AddBankTransaction(BankTransaction{
		BankAccountID: SeedSavingsBankAccountID, Date: time.Date(2026, 3, 1, 15, 0, 0, 0, time.UTC),
		Description: "Transfer", Amount: decimal.NewFromInt(-41),
	})
	tx := get(t, srv, "/bank-transactions/"+id).object(t)
	assert.Equal(t, "2026-03-01", tx["date"])
	assert.Equal(t, "unreconciled", tx["status"])
	assert.Equal(t, num("50000.10"), list(t, get(t, srv, "/bank-accounts").object(t), "bank_accounts")[1]["balance"])
	assert.Panics(t, func() { srv.AddBankTransaction(BankTransaction{BankAccountID: "nope"}) })
}
