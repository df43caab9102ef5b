package invoicingtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
