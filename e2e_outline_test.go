package invoicing_test

// The resources API.md documents only in outline, end to end: clients and
// suppliers, bills, accounts and tax codes, bank accounts and transactions,
// reports. Their fields follow invoicingtest's documented choices; the
// amounts follow API.md's rules for invoices (line amount = quantity x
// unit_price + tax) and double-entry bookkeeping.

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// e2eContacts is what ClientService and SupplierService have in common.
type e2eContacts interface {
	List(context.Context, *invoicing.ContactListParams, ...invoicing.ListOption) iter.Seq2[*invoicing.Contact, error]
	ListPage(context.Context, *invoicing.ContactListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Contact], error)
	Get(context.Context, string, ...invoicing.RequestOption) (*invoicing.Contact, error)
	Create(context.Context, *invoicing.ContactCreateParams, ...invoicing.RequestOption) (*invoicing.Contact, error)
}

func TestE2EClientsAndSuppliers(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	for _, tc := range []struct {
		path string
		svc  e2eContacts
		seed []string
	}{
		{"/clients", c.Clients, []string{invoicingtest.SeedClientID, invoicingtest.SeedOtherClientID}},
		{"/suppliers", c.Suppliers, []string{invoicingtest.SeedSupplierID, invoicingtest.SeedOtherSupplierID}},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			first, err := tc.svc.ListPage(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, len(tc.seed), first.Total)

			created, err := tc.svc.Create(ctx, &invoicing.ContactCreateParams{
				Name: "Harbour Lane Bakery", Email: "accounts@harbourlane.example", Phone: "+61 3 6200 0000",
				Extra: map[string]any{"address": map[string]any{"address_line1": "9 Wharf Rd", "city": "Hobart", "country": "AU"}},
			})
			require.NoError(t, err)
			assert.NotEmpty(t, created.ID)
			assert.Equal(t, "Harbour Lane Bakery", created.Name)
			assert.Equal(t, "accounts@harbourlane.example", created.Email)
			assert.Equal(t, "+61 3 6200 0000", created.Phone)
			assert.Nil(t, created.UpdatedAt)
			assert.WithinDuration(t, srv.Now(), created.CreatedAt, 5*time.Second)
			assert.True(t, created.Has("id"), "the raw object is kept")
			assert.Empty(t, created.MismatchedFields())

			got, err := tc.svc.Get(ctx, created.ID)
			require.NoError(t, err)
			assert.Equal(t, created.ID, got.ID)
			assert.Equal(t, created.Name, got.Name)
			assert.Equal(t, created.Email, got.Email)
			assert.JSONEq(t, string(rawJSON(t, created)), string(rawJSON(t, got)))

			all := e2eAll(t, tc.svc.List(ctx, nil))
			assert.Equal(t, append(slices.Clone(tc.seed), created.ID), e2eIDs(all))

			last, err := tc.svc.ListPage(ctx, &invoicing.ContactListParams{
				ListParams: invoicing.ListParams{Page: len(all), PageSize: 1},
				Extra:      url.Values{"search": {"Harbour"}},
			})
			require.NoError(t, err)
			assert.Equal(t, len(all), last.Total)
			assert.False(t, last.HasMore)
			assert.Equal(t, []string{created.ID}, e2ePageIDs(last))
			reqs := e2eRequests(srv, http.MethodGet, tc.path)
			q, err := url.ParseQuery(reqs[len(reqs)-1].RawQuery)
			require.NoError(t, err)
			assert.Equal(t, "Harbour", q.Get("search"), "Extra query values are sent")

			before := len(srv.Requests())
			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Name: "Clash", Extra: map[string]any{"name": "Other"}})
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			_, err = tc.svc.Get(ctx, "not-a-uuid")
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			_, err = tc.svc.ListPage(ctx, &invoicing.ContactListParams{Extra: url.Values{"page": {"2"}}})
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "page is ListParams's")
			assert.Len(t, srv.Requests(), before, "nothing reached the service")

			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Email: "nameless@example.com"})
			assert.ErrorIs(t, err, invoicing.ErrValidation, "the service requires a name")
			_, err = tc.svc.Get(ctx, uuid.NewString())
			assert.ErrorIs(t, err, invoicing.ErrNotFound)
		})
	}

	// The address sent through Extra reached the service: quote webhooks
	// carry the client's address.
	clients := e2eAll(t, c.Clients.List(ctx, nil))
	bakery := clients[len(clients)-1]
	_, err := c.Quotes.Create(ctx, e2eQuote(bakery.ID, e2eLine("Bread", "1", "5")))
	require.NoError(t, err)
	events := srv.Events()
	last := events[len(events)-1]
	require.Equal(t, webhooks.EventQuoteCreated, last.Name)
	ev, err := webhooks.Parse(webhooks.EventQuoteCreated, last.Body)
	require.NoError(t, err)
	qc := ev.(*webhooks.QuoteCreated)
	assert.Equal(t, "Hobart", qc.ClientAddress.City)
	assert.Equal(t, "9 Wharf Rd", qc.ClientAddress.AddressLine1)
	assert.Equal(t, bakery.Email, qc.ClientEmail)
}

func TestE2EBills(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)
	supplier, err := c.Suppliers.Get(ctx, invoicingtest.SeedSupplierID)
	require.NoError(t, err)

	b1, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		IssueDate: invoicing.NewDate(2026, time.March, 1), DueDate: invoicing.NewDate(2026, time.March, 31),
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{
			e2eLine("Paper, boxes", "10", "5.50"),
			{Description: "Toner", Quantity: invoicing.Ptr(e2eD("2")), UnitPrice: e2eD("89.99"), AccountID: invoicingtest.SeedOtherExpenseAccountID},
		},
	})
	require.NoError(t, err)
	assert.NotEmpty(t, b1.ID)
	assert.Equal(t, "OS-1001", b1.BillNumber)
	assert.Equal(t, invoicingtest.SeedSupplierID, b1.SupplierID)
	assert.Equal(t, supplier.Name, b1.SupplierName)
	assert.Equal(t, invoicing.BillStatusDraft, b1.Status, "invoicingtest's default bill status")
	assert.Equal(t, invoicing.NewDate(2026, time.March, 1), b1.IssueDate)
	assert.Equal(t, invoicing.NewDate(2026, time.March, 31), b1.DueDate)
	assert.Equal(t, "AUD", b1.Currency)
	assert.Empty(t, b1.MismatchedFields())
	n0, t0, a0 := e2eAmounts(e2eD("10"), e2eD("5.50"), gst)
	n1, t1, a1 := e2eAmounts(e2eD("2"), e2eD("89.99"), gst)
	require.Len(t, b1.LineItems, 2)
	e2eDecEqual(t, a0, b1.LineItems[0].Amount)
	e2eDecEqual(t, t1, b1.LineItems[1].TaxAmount)
	require.NotNil(t, b1.LineItems[1].AccountID)
	assert.Equal(t, invoicingtest.SeedOtherExpenseAccountID, *b1.LineItems[1].AccountID, "the line's account overrides the default")
	e2eDecEqual(t, n0.Add(n1), b1.Subtotal)
	e2eDecEqual(t, t0.Add(t1), b1.TaxTotal)
	e2eDecEqual(t, a0.Add(a1), b1.Total)

	b2, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedOtherSupplierID, BillNumber: "OS-1001", Status: invoicing.BillStatusAwaitingApproval,
		DefaultAccountID: invoicingtest.SeedOtherExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Hosting, March", "1", "49")},
		Extra:     map[string]any{"reference": "CH-3"},
	})
	require.NoError(t, err, "another supplier may use the same bill number")
	assert.Equal(t, invoicing.BillStatusAwaitingApproval, b2.Status)

	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Again", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID,
		LineItems:  []invoicing.LineItemParams{e2eLine("No account", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrValidation, "the service, not the SDK, requires an account and a tax code")

	got, err := c.Bills.Get(ctx, b1.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(rawJSON(t, b1)), string(rawJSON(t, got)))
	_, err = c.Bills.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	assert.Equal(t, []string{b1.ID, b2.ID}, e2eListIDs(t, c.Bills.List(ctx, nil)))
	assert.Equal(t, []string{b2.ID}, e2eListIDs(t, c.Bills.List(ctx, &invoicing.BillListParams{Status: invoicing.BillStatusAwaitingApproval})))
	assert.Equal(t, []string{b1.ID}, e2eListIDs(t, c.Bills.List(ctx, &invoicing.BillListParams{SupplierID: invoicingtest.SeedSupplierID})))
	page, err := c.Bills.ListPage(ctx, &invoicing.BillListParams{ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)
	assert.Equal(t, []string{b1.ID}, e2ePageIDs(page))

	require.NoError(t, srv.ApproveBill(b1.ID))
	got, err = c.Bills.Get(ctx, b1.ID)
	require.NoError(t, err)
	assert.Equal(t, invoicing.BillStatusApproved, got.Status)
	assert.NotNil(t, got.UpdatedAt)
}

func TestE2EAccountsAndTaxCodes(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	closed := srv.AddAccount(invoicingtest.Account{Code: "4900", Name: "Old revenue", Type: invoicingtest.AccountRevenue, Inactive: true})

	all := e2eAll(t, c.Accounts.List(ctx, nil))
	require.NotEmpty(t, all)
	byID := map[string]*invoicing.Account{}
	for _, a := range all {
		byID[a.ID] = a
	}
	assert.Len(t, byID, len(all), "ids are unique")
	for _, typ := range []invoicing.AccountType{invoicing.AccountTypeRevenue, invoicing.AccountTypeExpense, invoicing.AccountTypeAsset} {
		var want []string
		for _, a := range all {
			if a.Type == typ {
				want = append(want, a.ID)
			}
		}
		require.NotEmpty(t, want, typ)
		assert.Equal(t, want, e2eListIDs(t, c.Accounts.List(ctx, &invoicing.AccountListParams{Type: typ})), "type=%s", typ)
		page, err := c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: typ, ListParams: invoicing.ListParams{PageSize: 1}})
		require.NoError(t, err)
		assert.Equal(t, len(want), page.Total)
	}

	sales, err := c.Accounts.Get(ctx, invoicingtest.SeedRevenueAccountID)
	require.NoError(t, err)
	assert.JSONEq(t, string(rawJSON(t, byID[invoicingtest.SeedRevenueAccountID])), string(rawJSON(t, sales)))
	assert.Equal(t, invoicing.AccountTypeRevenue, sales.Type)
	assert.NotEmpty(t, sales.Code)
	assert.NotEmpty(t, sales.Name)
	require.NotNil(t, sales.IsActive)
	assert.True(t, *sales.IsActive)
	old, err := c.Accounts.Get(ctx, closed)
	require.NoError(t, err)
	require.NotNil(t, old.IsActive)
	assert.False(t, *old.IsActive)
	assert.Equal(t, "4900", old.Code)
	_, err = c.Accounts.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	fancy := srv.AddTaxCode(invoicingtest.TaxCode{Code: "ODD", Name: "Odd rate", Rate: e2eD("12.345"), Region: "NZ"})
	codes := e2eAll(t, c.TaxCodes.List(ctx, nil))
	for _, region := range []string{"AU", "NZ"} {
		var want []string
		for _, tc := range codes {
			if strings.EqualFold(tc.Region, region) {
				want = append(want, tc.ID)
			}
		}
		require.NotEmpty(t, want, region)
		assert.Equal(t, want, e2eListIDs(t, c.TaxCodes.List(ctx, &invoicing.TaxCodeListParams{Region: region})), "region=%s", region)
	}
	var nz int
	for _, tc := range codes {
		if strings.EqualFold(tc.Region, "NZ") {
			nz++
		}
	}
	page, err := c.TaxCodes.ListPage(ctx, &invoicing.TaxCodeListParams{Region: "NZ", ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, nz, page.Total)
	assert.Equal(t, nz > 1, page.HasMore)

	levy, err := c.TaxCodes.Get(ctx, invoicingtest.SeedOnePercentTaxCodeID)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("1"), levy.Rate, "the 1% tax code of API.md's example")
	odd, err := c.TaxCodes.Get(ctx, fancy)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("12.345"), odd.Rate, "rates are exact")
	assert.Equal(t, "ODD", odd.Code)
	_, err = c.TaxCodes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}

func TestE2EBankAccountsAndTransactions(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	opening := e2eD("250.00")
	before := e2eAll(t, c.BankAccounts.List(ctx, nil))
	acct := srv.AddBankAccount(invoicingtest.BankAccount{Name: "E2E Float", AccountNumber: "062-999 0001", OpeningBalance: opening})
	jan := func(d int) time.Time { return time.Date(2026, time.January, d, 0, 0, 0, 0, time.UTC) }
	tx1 := srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: acct, Date: jan(3), Description: "Float top-up", Amount: e2eD("100.10")})
	tx2 := srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: acct, Date: jan(20), Description: "Petty cash", Amount: e2eD("-50.05"), Reference: "PC-1"})

	txns := e2eAll(t, c.BankTransactions.List(ctx, nil))
	sumFor := func(account string) decimal.Decimal {
		var sum decimal.Decimal
		for _, tx := range txns {
			if tx.BankAccountID == account {
				sum = sum.Add(tx.Amount)
			}
		}
		return sum
	}

	accounts := e2eAll(t, c.BankAccounts.List(ctx, nil))
	require.Len(t, accounts, len(before)+1)
	mine := accounts[len(accounts)-1]
	require.Equal(t, acct, mine.ID, "lists are in creation order")
	assert.Equal(t, "E2E Float", mine.Name)
	assert.Equal(t, "062-999 0001", mine.AccountNumber)
	assert.Equal(t, "AUD", mine.Currency)
	e2eDecEqual(t, opening.Add(sumFor(acct)), mine.Balance, "balance = opening balance + transactions")
	e2eDecEqual(t, e2eD("300.05"), mine.Balance)
	page, err := c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{ListParams: invoicing.ListParams{PageSize: 2}})
	require.NoError(t, err)
	assert.Equal(t, len(accounts), page.Total)
	assert.Equal(t, len(accounts) > 2, page.HasMore)
	assert.Equal(t, e2eIDs(accounts[:2]), e2ePageIDs(page))

	assert.Equal(t, []string{tx1, tx2}, e2eListIDs(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{BankAccountID: acct})))

	from, to := invoicing.NewDate(2026, time.January, 1), invoicing.NewDate(2026, time.January, 12)
	var want []string
	for _, tx := range txns {
		if tx.BankAccountID == invoicingtest.SeedBankAccountID && !tx.Date.Before(from) && !tx.Date.After(to) {
			want = append(want, tx.ID)
		}
	}
	require.NotEmpty(t, want)
	assert.Equal(t, want, e2eListIDs(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{
		BankAccountID: invoicingtest.SeedBankAccountID, FromDate: from, ToDate: to,
	})))
	tpage, err := c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{FromDate: from, ToDate: to, ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.True(t, tpage.HasMore)
	assert.Len(t, tpage.Items, 1)

	got, err := c.BankTransactions.Get(ctx, tx2)
	require.NoError(t, err)
	assert.Equal(t, acct, got.BankAccountID)
	assert.Equal(t, invoicing.NewDate(2026, time.January, 20), got.Date)
	e2eDecEqual(t, e2eD("-50.05"), got.Amount, "money out is negative")
	assert.Equal(t, "Petty cash", got.Description)
	assert.Equal(t, "PC-1", got.Reference)
	assert.Equal(t, invoicingtest.BankTransactionUnreconciled, got.Status)
	_, err = c.BankTransactions.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
	sent := len(srv.Requests())
	_, err = c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{FromDate: to, ToDate: from})
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "to_date before from_date")
	assert.Len(t, srv.Requests(), sent, "nothing reached the service")
}

func TestE2EReports(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	today := e2eToday(srv)

	// Two invoices that post to the ledger, a draft that does not, an
	// approved bill and a partial payment.
	var posted []*invoicing.Invoice
	for _, lines := range [][]invoicing.LineItemParams{
		{e2eLine("Design", "1", "1200"), e2eLine("Hosting", "12", "19.90")},
		{e2eLine("Support", "3", "33.333")},
	} {
		p := e2eInvoice(invoicingtest.SeedClientID, lines...)
		p.IssueDate, p.Status = today, invoicing.InvoiceStatusAwaitingPayment
		res, err := c.Invoices.Create(ctx, p)
		require.NoError(t, err)
		posted = append(posted, res.Invoice)
	}
	draft := e2eInvoice(invoicingtest.SeedClientID, e2eLine("Not yet sent", "1", "999"))
	draft.IssueDate = today
	_, err := c.Invoices.Create(ctx, draft)
	require.NoError(t, err)
	bill, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, IssueDate: today,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Stationery", "4", "12.25")},
	})
	require.NoError(t, err)
	require.NoError(t, srv.ApproveBill(bill.ID))
	payment := e2eD("500")
	_, err = srv.RecordPayment(posted[0].ID, invoicingtest.Payment{Amount: payment})
	require.NoError(t, err)

	var revenue, sales, salesTax decimal.Decimal
	for _, inv := range posted {
		revenue = revenue.Add(inv.Subtotal)
		sales = sales.Add(inv.Total)
		salesTax = salesTax.Add(inv.TaxTotal)
	}
	amount := func(r *invoicing.Report, name string) decimal.Decimal {
		t.Helper()
		v, err := r.Totals.Amount(name)
		require.NoError(t, err, "total %q", name)
		return v
	}
	line := func(r *invoicing.Report, accountID string) invoicing.ReportLine {
		t.Helper()
		for _, l := range r.Lines {
			if l.AccountID == accountID {
				return l
			}
		}
		require.Failf(t, "no report line", "account %s", accountID)
		return invoicing.ReportLine{}
	}

	t.Run("trial balance", func(t *testing.T) {
		tb, err := c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{AsAt: today})
		require.NoError(t, err)
		assert.Equal(t, today, tb.AsAt)
		assert.Empty(t, tb.MismatchedFields())
		debit, credit := amount(tb, "debit"), amount(tb, "credit")
		e2eDecEqual(t, debit, credit, "debits equal credits")
		var sumDebit, sumCredit decimal.Decimal
		for _, l := range tb.Lines {
			sumDebit, sumCredit = sumDebit.Add(l.Debit), sumCredit.Add(l.Credit)
			e2eDecEqual(t, l.Debit.Sub(l.Credit), l.Balance, "account %s", l.AccountName)
		}
		e2eDecEqual(t, debit, sumDebit)
		e2eDecEqual(t, credit, sumCredit)
		ar := line(tb, invoicingtest.SeedReceivablesAccountID)
		e2eDecEqual(t, sales, ar.Debit, "receivables are debited with the posted invoices' totals")
		e2eDecEqual(t, payment, ar.Credit, "and credited with the payment")
		e2eDecEqual(t, payment, line(tb, invoicingtest.SeedBankLedgerAccountID).Debit)
		e2eDecEqual(t, revenue, line(tb, invoicingtest.SeedRevenueAccountID).Credit, "the draft is not posted")
		_, err = tb.Totals.Amount("no_such_total")
		assert.ErrorIs(t, err, invoicing.ErrFieldMissing)

		empty, err := c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{AsAt: today.AddDays(-1)})
		require.NoError(t, err)
		assert.Empty(t, empty.Lines, "nothing was posted before today")
		e2eDecEqual(t, decimal.Zero, amount(empty, "debit"))
	})

	t.Run("profit and loss", func(t *testing.T) {
		pl, err := c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: today, ToDate: today})
		require.NoError(t, err)
		assert.Equal(t, today, pl.FromDate)
		assert.Equal(t, today, pl.ToDate)
		e2eDecEqual(t, revenue, amount(pl, "revenue"), "revenue equals the posted invoices' subtotals")
		e2eDecEqual(t, bill.Subtotal, amount(pl, "expenses"), "expenses equal the approved bill's subtotal")
		e2eDecEqual(t, revenue.Sub(bill.Subtotal), amount(pl, "net_profit"))

		before, err := c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: today.AddDays(-10), ToDate: today.AddDays(-1)})
		require.NoError(t, err)
		e2eDecEqual(t, decimal.Zero, amount(before, "revenue"))

		sent := len(srv.Requests())
		_, err = c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: today, ToDate: today.AddDays(-1)})
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "to_date before from_date")
		assert.Len(t, srv.Requests(), sent)
	})

	t.Run("balance sheet", func(t *testing.T) {
		bs, err := c.Reports.BalanceSheet(ctx, &invoicing.BalanceSheetParams{AsAt: today})
		require.NoError(t, err)
		assets, liabilities, equity := amount(bs, "assets"), amount(bs, "liabilities"), amount(bs, "equity")
		e2eDecEqual(t, assets, liabilities.Add(equity), "assets = liabilities + equity")
		e2eDecEqual(t, sales, assets, "receivables less the payment, plus the payment in the bank")
		e2eDecEqual(t, bill.Total.Add(salesTax).Sub(bill.TaxTotal), liabilities, "payables plus net GST")
		e2eDecEqual(t, revenue.Sub(bill.Subtotal), equity, "profit to date")
	})

	t.Run("defaults", func(t *testing.T) {
		tb, err := c.Reports.TrialBalance(ctx, nil)
		require.NoError(t, err)
		assert.Contains(t, []invoicing.Date{today, e2eToday(srv)}, tb.AsAt, "as at today by default")
		_, err = c.Reports.ProfitAndLoss(ctx, nil)
		require.NoError(t, err)
		_, err = c.Reports.BalanceSheet(ctx, nil)
		require.NoError(t, err)
		for _, p := range []string{"/reports/trial-balance", "/reports/profit-loss", "/reports/balance-sheet"} {
			assert.NotEmpty(t, e2eRequests(srv, http.MethodGet, p), p)
		}
	})
}
