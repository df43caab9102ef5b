package invoicingtest

import (
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// The well-known ids of the seed data every Server starts with follow, each
// declared on its own so that go doc lists them all.

// SeedBusinessID is the id of the fake's single business.
const SeedBusinessID = "5eed0000-0000-4000-8000-000000000000"

// SeedClientID is the client "Acme Pty Ltd" (accounts@acme.example), with
// a Sydney address.
const SeedClientID = "5eed0001-0000-4000-8000-000000000001"

// SeedOtherClientID is the client "Globex Corporation".
const SeedOtherClientID = "5eed0001-0000-4000-8000-000000000002"

// SeedSupplierID is the supplier "Office Supplies Co".
const SeedSupplierID = "5eed0002-0000-4000-8000-000000000001"

// SeedOtherSupplierID is the supplier "Cloud Hosting Pty Ltd".
const SeedOtherSupplierID = "5eed0002-0000-4000-8000-000000000002"

// SeedBankLedgerAccountID is the asset account 1000 "Business Bank
// Account", which invoice payments and bill payments go through.
const SeedBankLedgerAccountID = "5eed0003-0000-4000-8000-000000000001"

// SeedReceivablesAccountID is the asset account 1100 "Accounts
// Receivable".
const SeedReceivablesAccountID = "5eed0003-0000-4000-8000-000000000002"

// SeedPayablesAccountID is the liability account 2000 "Accounts
// Payable".
const SeedPayablesAccountID = "5eed0003-0000-4000-8000-000000000003"

// SeedTaxAccountID is the liability account 2100 "GST", where tax on
// sales is credited and tax on purchases debited.
const SeedTaxAccountID = "5eed0003-0000-4000-8000-000000000004"

// SeedEquityAccountID is the equity account 3000 "Owner's Equity".
const SeedEquityAccountID = "5eed0003-0000-4000-8000-000000000005"

// SeedEarningsAccountID is the equity account 3200 "Current Year
// Earnings", where the balance sheet shows profit to date.
const SeedEarningsAccountID = "5eed0003-0000-4000-8000-000000000006"

// SeedRevenueAccountID is the revenue account 4000 "Sales".
const SeedRevenueAccountID = "5eed0003-0000-4000-8000-000000000007"

// SeedOtherRevenueAccountID is the revenue account 4100 "Consulting
// Revenue".
const SeedOtherRevenueAccountID = "5eed0003-0000-4000-8000-000000000008"

// SeedExpenseAccountID is the expense account 6000 "General Expenses".
const SeedExpenseAccountID = "5eed0003-0000-4000-8000-000000000009"

// SeedOtherExpenseAccountID is the expense account 6100 "Software and
// Hosting".
const SeedOtherExpenseAccountID = "5eed0003-0000-4000-8000-00000000000a"

// SeedGSTTaxCodeID is the AU tax code GST, 10%.
const SeedGSTTaxCodeID = "5eed0004-0000-4000-8000-000000000001"

// SeedOnePercentTaxCodeID is the AU tax code LEVY1, 1%.
const SeedOnePercentTaxCodeID = "5eed0004-0000-4000-8000-000000000002"

// SeedGSTFreeTaxCodeID is the AU tax code FRE, 0%.
const SeedGSTFreeTaxCodeID = "5eed0004-0000-4000-8000-000000000003"

// SeedNZGSTTaxCodeID is the NZ tax code NZGST, 15%.
const SeedNZGSTTaxCodeID = "5eed0004-0000-4000-8000-000000000004"

// SeedItemID is the SALES item CONSULT "Consulting hour" at 150.00,
// revenue account SeedOtherRevenueAccountID, tax code SeedGSTTaxCodeID.
const SeedItemID = "5eed0005-0000-4000-8000-000000000001"

// SeedBankAccountID is the AUD bank account "Business Cheque Account"
// (opening balance 10000.00).
const SeedBankAccountID = "5eed0006-0000-4000-8000-000000000001"

// SeedSavingsBankAccountID is the AUD bank account "Business Savings
// Account" (opening balance 50000.00).
const SeedSavingsBankAccountID = "5eed0006-0000-4000-8000-000000000002"

// SeedBankTransactionID is the first of the four seed bank
// transactions: 2026-01-05, +1100.00 into SeedBankAccountID. The others
// are 2026-01-12 -220.00 and 2026-02-03 -10.00 on the same account and
// 2026-01-31 +41.10 on SeedSavingsBankAccountID.
const SeedBankTransactionID = "5eed0007-0000-4000-8000-000000000001"

// seed loads the seed data. It runs before the server is reachable, so it
// fires no events.
func (s *Server) seed() {
	now := s.now()
	d := &s.data
	addContact := func(t *table[contact], c Contact) {
		t.add(c.ID, &contact{Contact: c, CreatedAt: now})
	}
	addContact(&d.clients, Contact{
		ID: SeedClientID, Name: "Acme Pty Ltd", Email: "accounts@acme.example", Phone: "+61 2 9000 0000",
		Address: Address{Line1: "1 Example Street", Line2: "Level 2", City: "Sydney", State: "NSW", Postcode: "2000", Country: "AU"},
	})
	addContact(&d.clients, Contact{
		ID: SeedOtherClientID, Name: "Globex Corporation", Email: "ap@globex.example", Phone: "+61 3 9000 0000",
		Address: Address{Line1: "200 Collins Street", City: "Melbourne", State: "VIC", Postcode: "3000", Country: "AU"},
	})
	addContact(&d.suppliers, Contact{ID: SeedSupplierID, Name: "Office Supplies Co", Email: "billing@officesupplies.example"})
	addContact(&d.suppliers, Contact{ID: SeedOtherSupplierID, Name: "Cloud Hosting Pty Ltd", Email: "invoices@cloudhosting.example"})

	for _, a := range []Account{
		{ID: SeedBankLedgerAccountID, Code: "1000", Name: "Business Bank Account", Type: AccountAsset},
		{ID: SeedReceivablesAccountID, Code: "1100", Name: "Accounts Receivable", Type: AccountAsset},
		{ID: SeedPayablesAccountID, Code: "2000", Name: "Accounts Payable", Type: AccountLiability},
		{ID: SeedTaxAccountID, Code: "2100", Name: "GST", Type: AccountLiability},
		{ID: SeedEquityAccountID, Code: "3000", Name: "Owner's Equity", Type: AccountEquity},
		{ID: SeedEarningsAccountID, Code: "3200", Name: "Current Year Earnings", Type: AccountEquity},
		{ID: SeedRevenueAccountID, Code: "4000", Name: "Sales", Type: AccountRevenue},
		{ID: SeedOtherRevenueAccountID, Code: "4100", Name: "Consulting Revenue", Type: AccountRevenue},
		{ID: SeedExpenseAccountID, Code: "6000", Name: "General Expenses", Type: AccountExpense},
		{ID: SeedOtherExpenseAccountID, Code: "6100", Name: "Software and Hosting", Type: AccountExpense},
	} {
		d.accounts.add(a.ID, &a)
	}

	for _, t := range []TaxCode{
		{ID: SeedGSTTaxCodeID, Code: "GST", Name: "GST on Income", Rate: decimal.NewFromInt(10), Region: "AU"},
		{ID: SeedOnePercentTaxCodeID, Code: "LEVY1", Name: "1% Levy", Rate: decimal.NewFromInt(1), Region: "AU"},
		{ID: SeedGSTFreeTaxCodeID, Code: "FRE", Name: "GST Free", Rate: decimal.Zero, Region: "AU"},
		{ID: SeedNZGSTTaxCodeID, Code: "NZGST", Name: "NZ GST", Rate: decimal.NewFromInt(15), Region: "NZ"},
	} {
		d.taxCodes.add(t.ID, &t)
	}

	d.items.add(SeedItemID, &item{
		ID: SeedItemID, Code: "CONSULT", Name: "Consulting hour", Description: "One hour of consulting",
		ItemType: invoicing.ItemTypeSales, UnitPrice: decimal.New(15000, -2), IsTaxable: true, IsActive: true,
		AccountID: SeedOtherRevenueAccountID, TaxCodeID: SeedGSTTaxCodeID, CreatedAt: now,
	})

	for _, b := range []BankAccount{
		{ID: SeedBankAccountID, Name: "Business Cheque Account", AccountNumber: "062-000 12345678", Currency: "AUD", OpeningBalance: decimal.New(1000000, -2)},
		{ID: SeedSavingsBankAccountID, Name: "Business Savings Account", AccountNumber: "062-000 87654321", Currency: "AUD", OpeningBalance: decimal.New(5000000, -2)},
	} {
		d.bankAccounts.add(b.ID, &b)
	}

	day := func(m time.Month, dd int) time.Time { return time.Date(2026, m, dd, 0, 0, 0, 0, time.UTC) }
	for _, t := range []BankTransaction{
		{ID: SeedBankTransactionID, BankAccountID: SeedBankAccountID, Date: day(time.January, 5), Description: "Deposit Acme Pty Ltd", Amount: decimal.New(110000, -2), Reference: "ACME-0001", Status: BankTransactionReconciled},
		{ID: "5eed0007-0000-4000-8000-000000000002", BankAccountID: SeedBankAccountID, Date: day(time.January, 12), Description: "Office Supplies Co", Amount: decimal.New(-22000, -2), Reference: "OS-7781", Status: BankTransactionUnreconciled},
		{ID: "5eed0007-0000-4000-8000-000000000003", BankAccountID: SeedBankAccountID, Date: day(time.February, 3), Description: "Account fee", Amount: decimal.New(-1000, -2), Status: BankTransactionUnreconciled},
		{ID: "5eed0007-0000-4000-8000-000000000004", BankAccountID: SeedSavingsBankAccountID, Date: day(time.January, 31), Description: "Interest", Amount: decimal.New(4110, -2), Status: BankTransactionReconciled},
	} {
		d.bankTxns.add(t.ID, &t)
	}
}
