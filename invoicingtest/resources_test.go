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

func itemBody(extra map[string]any) map[string]any {
	return withExtra(map[string]any{
		"name":        "Blue widget",
		"item_code":   "W-BLUE",
		"unit_price":  jsonNumber("12.50"),
		"account_id":  SeedRevenueAccountID,
		"tax_code_id": SeedGSTTaxCodeID,
	}, extra)
}

func TestCreateItem(t *testing.T) {
	srv, _ := newServer(t)
	it := post(t, srv, "/items", itemBody(map[string]any{"description": "A blue one"})).requireStatus(t, http.StatusCreated).object(t)
	assert.NotEmpty(t, it["id"])
	assert.Equal(t, "W-BLUE", it["item_code"])
	assert.Equal(t, "Blue widget", it["name"])
	assert.Equal(t, "A blue one", it["description"])
	assert.Equal(t, "SALES", it["item_type"], "item_type defaults to SALES")
	assert.Equal(t, num("12.50"), it["unit_price"])
	assert.Equal(t, true, it["is_taxable"], "is_taxable defaults to true")
	assert.Equal(t, SeedRevenueAccountID, it["account_id"])
	assert.Equal(t, SeedGSTTaxCodeID, it["tax_code_id"])
	assert.Equal(t, true, it["is_active"])
	assert.Equal(t, "2026-03-10T09:30:00Z", it["created_at"])
	assert.Contains(t, it, "updated_at")
	assert.Nil(t, it["updated_at"])

	got := get(t, srv, "/items/"+it["id"].(string)).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, it, got)
}

func TestCreateItemRules(t *testing.T) {
	srv, _ := newServer(t)
	post(t, srv, "/items", itemBody(nil)).requireStatus(t, http.StatusCreated)

	r := post(t, srv, "/items", itemBody(map[string]any{"name": "Another"})).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "Item code already exists", r.detail(t))

	for _, typ := range []string{"SALES", "PURCHASE"} {
		body := itemBody(map[string]any{"item_code": "P-" + typ, "item_type": typ})
		delete(body, "unit_price")
		r := post(t, srv, "/items", body).requireStatus(t, http.StatusUnprocessableEntity)
		assert.Equal(t, "unit_price is required for SALES and PURCHASE items", r.detail(t))
	}
	body := itemBody(map[string]any{"item_code": "NOTE", "item_type": "TEXT", "is_taxable": false})
	delete(body, "unit_price")
	text := post(t, srv, "/items", body).requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, "TEXT", text["item_type"])
	assert.Equal(t, false, text["is_taxable"])

	for _, typ := range []string{"SERVICE", "sales", ""} {
		r := post(t, srv, "/items", itemBody(map[string]any{"item_code": "T-" + typ, "item_type": typ})).requireStatus(t, http.StatusUnprocessableEntity)
		assert.Equal(t, "item_type must be one of: SALES, PURCHASE, TEXT", r.detail(t))
	}

	post(t, srv, "/items", itemBody(map[string]any{"item_code": "N", "name": " "})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "A", "account_id": ""})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "B", "tax_code_id": "nope"})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", `{"name": 5}`).requireStatus(t, http.StatusBadRequest)

	// Items without a code never conflict with each other.
	post(t, srv, "/items", itemBody(map[string]any{"item_code": ""})).requireStatus(t, http.StatusCreated)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": ""})).requireStatus(t, http.StatusCreated)
}

func TestListItemsByType(t *testing.T) {
	srv, _ := newServer(t)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "BUY", "item_type": "PURCHASE"})).requireStatus(t, http.StatusCreated)

	all := get(t, srv, "/items").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("2"), all["total"], "the seed item and the new one")
	require.Len(t, list(t, all, "items"), 2)
	assert.Equal(t, SeedItemID, list(t, all, "items")[0]["id"])

	purchase := get(t, srv, "/items?item_type=PURCHASE").object(t)
	items := list(t, purchase, "items")
	require.Len(t, items, 1)
	assert.Equal(t, "BUY", items[0]["item_code"])
	assert.Equal(t, num("0"), get(t, srv, "/items?item_type=TEXT").object(t)["total"])

	r := get(t, srv, "/items?item_type=GOODS").requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, "item_type must be one of: SALES, PURCHASE, TEXT", r.detail(t))
	assert.Equal(t, "Item not found", get(t, srv, "/items/nope").requireStatus(t, http.StatusNotFound).detail(t))
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

// bookkeeping sets up: an awaiting_payment invoice of 100 + 10 GST (issued
// 2026-03-02) with 55 paid on 2026-03-10, a draft invoice (not posted), and
// an approved bill of 200 + 20 GST (issued 2026-03-05).
func bookkeeping(t *testing.T) *Server {
	t.Helper()
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"status": "awaiting_payment", "issue_date": "2026-03-02", "default_tax_code_id": SeedGSTTaxCodeID,
	})
	_, err := srv.RecordPayment(inv["id"].(string), Payment{Amount: dec("55")})
	require.NoError(t, err)
	createInvoice(t, srv, map[string]any{"issue_date": "2026-03-02"})
	bill := post(t, srv, "/bills", billBody(map[string]any{"issue_date": "2026-03-05"})).requireStatus(t, http.StatusCreated).object(t)
	require.NoError(t, srv.ApproveBill(bill["id"].(string)))
	return srv
}

// byCode indexes report lines by account code.
func byCode(t *testing.T, report map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, l := range list(t, report, "lines") {
		out[l["account_code"].(string)] = l
	}
	return out
}

// report gets the report at path, which must answer 200 and name itself
// name.
func report(t *testing.T, srv *Server, path, name string) map[string]any {
	t.Helper()
	r := get(t, srv, path).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, name, r["report"])
	return r
}

func TestTrialBalance(t *testing.T) {
	srv := bookkeeping(t)
	tb := report(t, srv, "/reports/trial-balance", "trial_balance")
	assert.Equal(t, "2026-03-10", tb["as_at"], "as_at defaults to today")
	assert.Equal(t, "AUD", tb["currency"])

	lines := byCode(t, tb)
	assert.Equal(t, map[string]any{
		"account_id": SeedReceivablesAccountID, "account_code": "1100", "account_name": "Accounts Receivable",
		"account_type": "asset", "debit": num("110.00"), "credit": num("55.00"), "balance": num("55.00"),
	}, lines["1100"])
	assert.Equal(t, num("55.00"), lines["1000"]["balance"], "bank received the payment")
	assert.Equal(t, num("-100.00"), lines["4000"]["balance"], "revenue is a credit balance")
	assert.Equal(t, num("200.00"), lines["6000"]["balance"])
	assert.Equal(t, num("-220.00"), lines["2000"]["balance"])
	assert.Equal(t, num("10.00"), lines["2100"]["balance"], "GST paid 20 on purchases, collected 10 on sales")
	assert.Len(t, lines, 6)
	assert.Equal(t, map[string]any{"debit": num("385.00"), "credit": num("385.00")}, tb["totals"], "debits equal credits")

	early := get(t, srv, "/reports/trial-balance?as_at=2026-03-03").object(t)
	assert.Len(t, list(t, early, "lines"), 3, "only the invoice is posted by 2026-03-03")
	get(t, srv, "/reports/trial-balance?as_at=March").requireStatus(t, http.StatusBadRequest)
}

func TestProfitAndLoss(t *testing.T) {
	srv := bookkeeping(t)
	pl := report(t, srv, "/reports/profit-loss?from_date=2026-03-01&to_date=2026-03-31", "profit_loss")
	assert.Equal(t, "2026-03-01", pl["from_date"])
	assert.Equal(t, "2026-03-31", pl["to_date"])
	lines := byCode(t, pl)
	assert.Len(t, lines, 2)
	assert.Equal(t, num("100.00"), lines["4000"]["balance"])
	assert.Equal(t, num("200.00"), lines["6000"]["balance"])
	assert.Equal(t, map[string]any{"revenue": num("100.00"), "expenses": num("200.00"), "net_profit": num("-100.00")}, pl["totals"])

	march3 := get(t, srv, "/reports/profit-loss?from_date=2026-03-03&to_date=2026-03-31").object(t)
	assert.Equal(t, num("0.00"), march3["totals"].(map[string]any)["revenue"], "the invoice of 2026-03-02 is outside the period")

	def := get(t, srv, "/reports/profit-loss").object(t)
	assert.Equal(t, "2026-01-01", def["from_date"])
	assert.Equal(t, "2026-03-10", def["to_date"])
	get(t, srv, "/reports/profit-loss?from_date=2026-04-01&to_date=2026-03-01").requireStatus(t, http.StatusBadRequest)
}

func TestBalanceSheet(t *testing.T) {
	srv := bookkeeping(t)
	bs := report(t, srv, "/reports/balance-sheet?as_at=2026-03-31", "balance_sheet")
	assert.Equal(t, "2026-03-31", bs["as_at"])
	lines := byCode(t, bs)
	assert.Equal(t, num("55.00"), lines["1000"]["balance"])
	assert.Equal(t, num("55.00"), lines["1100"]["balance"])
	assert.Equal(t, num("220.00"), lines["2000"]["balance"])
	assert.Equal(t, num("-10.00"), lines["2100"]["balance"], "a GST refund due")
	assert.Equal(t, num("-100.00"), lines["3200"]["balance"], "the loss to date")
	assert.NotContains(t, lines, "4000")
	assert.NotContains(t, lines, "6000")
	assert.Equal(t, map[string]any{"assets": num("110.00"), "liabilities": num("210.00"), "equity": num("-100.00")}, bs["totals"],
		"assets = liabilities + equity")
}

func TestReportsFollowBillPayments(t *testing.T) {
	srv := bookkeeping(t)
	bills := list(t, get(t, srv, "/bills").object(t), "bills")
	require.NoError(t, srv.PayBill(bills[0]["id"].(string), time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)))
	bs := byCode(t, get(t, srv, "/reports/balance-sheet?as_at=2026-03-31").object(t))
	assert.Equal(t, num("-165.00"), bs["1000"]["balance"], "55 in, 220 out")
	assert.Equal(t, num("0.00"), bs["2000"]["balance"], "payables settled")
	assert.Equal(t, num("220.00"), bs["2000"]["debit"])
	before := byCode(t, get(t, srv, "/reports/balance-sheet?as_at=2026-03-19").object(t))
	assert.Equal(t, num("220.00"), before["2000"]["balance"])
}
