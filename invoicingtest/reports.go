package invoicingtest

import (
	"net/http"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// The reports are computed from a simple double-entry ledger derived from
// the stored documents in the business currency (AUD; documents in other
// currencies are left out, as the fake does no currency conversion):
//
//   - an invoice that is awaiting_payment, overdue or paid, on its issue
//     date: debit Accounts Receivable with the total; credit each line's
//     account with the line's net amount and GST with its tax;
//   - a payment, on the day received: debit the bank ledger account, credit
//     Accounts Receivable;
//   - a bill that is approved or paid, on its issue date: debit each line's
//     account with the net amount and GST with the tax; credit Accounts
//     Payable with the total;
//   - a paid bill, on the day paid: debit Accounts Payable, credit the bank
//     ledger account.
//
// Drafts, voided invoices and bills not yet approved do not post.

type posting struct {
	accountID     string
	date          time.Time
	debit, credit decimal.Decimal
}

// postings returns the ledger. The caller holds s.mu.
func (s *Server) postings() []posting {
	var out []posting
	dr := func(acct string, d time.Time, amt decimal.Decimal) {
		if !amt.IsZero() {
			out = append(out, posting{accountID: acct, date: d, debit: amt})
		}
	}
	cr := func(acct string, d time.Time, amt decimal.Decimal) {
		if !amt.IsZero() {
			out = append(out, posting{accountID: acct, date: d, credit: amt})
		}
	}
	posted := map[string]bool{}
	for _, inv := range s.data.invoices.all() {
		if inv.Currency != defaultCurrency ||
			(inv.Status != invoicing.InvoiceStatusAwaitingPayment && inv.Status != invoicing.InvoiceStatusOverdue && inv.Status != invoicing.InvoiceStatusPaid) {
			continue
		}
		posted[inv.ID] = true
		dr(SeedReceivablesAccountID, time.Time(inv.IssueDate), inv.total())
		for _, l := range inv.Lines {
			cr(l.AccountID, time.Time(inv.IssueDate), l.net)
			cr(SeedTaxAccountID, time.Time(inv.IssueDate), l.tax)
		}
	}
	for _, p := range s.data.payments {
		if posted[p.InvoiceID] {
			day := dateOf(p.ReceivedAt)
			dr(SeedBankLedgerAccountID, day, p.Amount)
			cr(SeedReceivablesAccountID, day, p.Amount)
		}
	}
	for _, b := range s.data.bills.all() {
		if b.Currency != defaultCurrency || (b.Status != invoicing.BillStatusApproved && b.Status != invoicing.BillStatusPaid) {
			continue
		}
		for _, l := range b.Lines {
			dr(l.AccountID, time.Time(b.IssueDate), l.net)
			dr(SeedTaxAccountID, time.Time(b.IssueDate), l.tax)
		}
		cr(SeedPayablesAccountID, time.Time(b.IssueDate), b.total())
		if b.Status == invoicing.BillStatusPaid {
			day := dateOf(b.PaidAt)
			dr(SeedPayablesAccountID, day, b.total())
			cr(SeedBankLedgerAccountID, day, b.total())
		}
	}
	return out
}

// ledgerLine is one account's debits and credits within a period.
type ledgerLine struct {
	account       *Account
	debit, credit decimal.Decimal
}

// naturalBalance is the balance on the account's normal side: debit minus
// credit for assets and expenses, credit minus debit otherwise.
func (l ledgerLine) naturalBalance() decimal.Decimal {
	if l.account.Type == AccountAsset || l.account.Type == AccountExpense {
		return l.debit.Sub(l.credit)
	}
	return l.credit.Sub(l.debit)
}

// ledger sums the postings dated within [from, to] per account (from may be
// zero for "since the beginning"), sorted by account code. The caller holds
// s.mu.
func (s *Server) ledger(from, to time.Time) []ledgerLine {
	sums := map[string]*ledgerLine{}
	for _, p := range s.postings() {
		if p.date.After(to) || (!from.IsZero() && p.date.Before(from)) {
			continue
		}
		l := sums[p.accountID]
		if l == nil {
			l = &ledgerLine{account: s.data.accounts.get(p.accountID)}
			sums[p.accountID] = l
		}
		l.debit = l.debit.Add(p.debit)
		l.credit = l.credit.Add(p.credit)
	}
	out := make([]ledgerLine, 0, len(sums))
	for _, l := range sums {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].account.Code < out[j].account.Code })
	return out
}

// reportJSON is the body of the three report endpoints.
type reportJSON struct {
	Report   string           `json:"report"`
	AsAt     string           `json:"as_at,omitempty"`
	FromDate string           `json:"from_date,omitempty"`
	ToDate   string           `json:"to_date,omitempty"`
	Currency string           `json:"currency"`
	Lines    []reportLineJSON `json:"lines"`
	Totals   map[string]money `json:"totals"`
}

type reportLineJSON struct {
	AccountID   string `json:"account_id"`
	AccountCode string `json:"account_code"`
	AccountName string `json:"account_name"`
	AccountType string `json:"account_type"`
	Debit       money  `json:"debit"`
	Credit      money  `json:"credit"`
	Balance     money  `json:"balance"`
}

func reportLine(l ledgerLine, balance decimal.Decimal) reportLineJSON {
	return reportLineJSON{
		AccountID: l.account.ID, AccountCode: l.account.Code, AccountName: l.account.Name,
		AccountType: l.account.Type, Debit: money(l.debit), Credit: money(l.credit), Balance: money(balance),
	}
}

// reportAsAt serves a report as at as_at (default today), which build makes
// under s.mu from the ledger up to that day.
func (s *Server) reportAsAt(build func(asAt time.Time, ledger []ledgerLine) reportJSON) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		asAt, err := s.asAt(r)
		if err != nil {
			writeError(w, err)
			return
		}
		s.mu.Lock()
		rep := build(asAt, s.ledger(time.Time{}, asAt))
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, rep)
	}
}

// trialBalance is GET /reports/trial-balance?as_at= (default today): every
// account with postings up to as_at, balance = debit - credit; totals
// {debit, credit}, which are equal.
func trialBalance(asAt time.Time, ledger []ledgerLine) reportJSON {
	rep := reportJSON{Report: "trial_balance", AsAt: formatDate(asAt), Currency: defaultCurrency, Lines: []reportLineJSON{}}
	var debit, credit decimal.Decimal
	for _, l := range ledger {
		rep.Lines = append(rep.Lines, reportLine(l, l.debit.Sub(l.credit)))
		debit = debit.Add(l.debit)
		credit = credit.Add(l.credit)
	}
	rep.Totals = map[string]money{"debit": money(debit), "credit": money(credit)}
	return rep
}

// profitAndLoss serves GET /reports/profit-loss?from_date=&to_date= (to_date
// default today, from_date default 1 January of to_date's year): revenue and
// expense accounts with postings in the period, balance on the account's
// normal side; totals {revenue, expenses, net_profit}.
func (s *Server) profitAndLoss(w http.ResponseWriter, r *http.Request) {
	dates, err := parseDateRange(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	to := s.today()
	if dates.hasTo {
		to = dates.to
	}
	from := time.Date(to.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	if dates.hasFrom {
		from = dates.from
	}
	if to.Before(from) {
		writeError(w, badRequest("to_date must not be before from_date"))
		return
	}
	s.mu.Lock()
	ledger := s.ledger(from, to)
	s.mu.Unlock()
	rep := reportJSON{Report: "profit_loss", FromDate: formatDate(from), ToDate: formatDate(to), Currency: defaultCurrency, Lines: []reportLineJSON{}}
	var revenue, expenses decimal.Decimal
	for _, l := range ledger {
		switch l.account.Type {
		case AccountRevenue:
			revenue = revenue.Add(l.naturalBalance())
		case AccountExpense:
			expenses = expenses.Add(l.naturalBalance())
		default:
			continue
		}
		rep.Lines = append(rep.Lines, reportLine(l, l.naturalBalance()))
	}
	rep.Totals = map[string]money{
		"revenue": money(revenue), "expenses": money(expenses), "net_profit": money(revenue.Sub(expenses)),
	}
	writeJSON(w, http.StatusOK, rep)
}

// balanceSheet is GET /reports/balance-sheet?as_at= (default today):
// asset, liability and equity accounts at as_at, with profit to date shown
// on Current Year Earnings; balance on the account's normal side; totals
// {assets, liabilities, equity}, where assets = liabilities + equity. The
// caller holds s.mu.
func (s *Server) balanceSheet(asAt time.Time, ledger []ledgerLine) reportJSON {
	earnings := ledgerLine{account: s.data.accounts.get(SeedEarningsAccountID)}
	var kept []ledgerLine
	for _, l := range ledger {
		switch l.account.Type {
		case AccountRevenue, AccountExpense:
			earnings.debit = earnings.debit.Add(l.debit)
			earnings.credit = earnings.credit.Add(l.credit)
		default:
			if l.account.ID != SeedEarningsAccountID {
				kept = append(kept, l)
				continue
			}
			earnings.debit = earnings.debit.Add(l.debit)
			earnings.credit = earnings.credit.Add(l.credit)
		}
	}
	if !earnings.debit.IsZero() || !earnings.credit.IsZero() {
		kept = append(kept, earnings)
		sort.Slice(kept, func(i, j int) bool { return kept[i].account.Code < kept[j].account.Code })
	}
	rep := reportJSON{Report: "balance_sheet", AsAt: formatDate(asAt), Currency: defaultCurrency, Lines: []reportLineJSON{}}
	totals := map[string]decimal.Decimal{}
	for _, l := range kept {
		rep.Lines = append(rep.Lines, reportLine(l, l.naturalBalance()))
		switch l.account.Type {
		case AccountAsset:
			totals["assets"] = totals["assets"].Add(l.naturalBalance())
		case AccountLiability:
			totals["liabilities"] = totals["liabilities"].Add(l.naturalBalance())
		default:
			totals["equity"] = totals["equity"].Add(l.naturalBalance())
		}
	}
	rep.Totals = map[string]money{
		"assets": money(totals["assets"]), "liabilities": money(totals["liabilities"]), "equity": money(totals["equity"]),
	}
	return rep
}

// asAt reads the as_at query parameter (default today).
func (s *Server) asAt(r *http.Request) (time.Time, *apiError) {
	d, ok, err := dateQuery(r.URL.Query(), "as_at")
	if err != nil || ok {
		return d, err
	}
	return s.today(), nil
}
