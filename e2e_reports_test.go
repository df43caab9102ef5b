package invoicing_test

import (
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

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
