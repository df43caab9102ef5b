package invoicing_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestBankAccountsList(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "bank_accounts_list.json")))
	got := testkit.Collect(t, c.BankAccounts.List(context.Background(), nil))
	svcAssertGET(t, api.last(t), "/bank-accounts", "page=1&page_size=100")
	require.Len(t, got, 2)
	op, cc := got[0], got[1]
	assert.Equal(t, "acc-op-1", op.ID, "a bank account id need not be a UUID")
	assert.Equal(t, "Operating", op.Name)
	assert.Equal(t, "062-000 1234 5678", op.AccountNumber)
	assert.Equal(t, "AUD", op.Currency)
	assert.Equal(t, "25031.07", op.Balance.String())
	assert.Equal(t, "062-000", extraValue[string](t, op.Extra, "bsb"))
	assert.Equal(t, "-812.3", cc.Balance.String())
	assert.True(t, cc.Balance.IsNegative())
	assert.False(t, cc.Has("bsb"))
	assert.True(t, cc.Has("balance"))
}

func TestBankAccountsListPageItemsKeyAndExtra(t *testing.T) {
	pg, _ := getFixture(t, "bank_accounts_list_items.json", "/bank-accounts", "currency=USD&page_size=5", func(c *invoicing.Client) (*invoicing.Page[invoicing.BankAccount], error) {
		return c.BankAccounts.ListPage(context.Background(), &invoicing.BankAccountListParams{
			ListParams: invoicing.ListParams{PageSize: 5},
			Extra:      url.Values{"currency": {"USD"}},
		})
	})
	require.Len(t, pg.Items, 1)
	assert.Equal(t, "USD", pg.Items[0].Currency)
	assert.Equal(t, "0.1", pg.Items[0].Balance.String())
	assert.Equal(t, `{"id":"acc-usd","name":"USD account","account_number":"9999","currency":"USD","balance":0.10}`, string(rawJSON(t, pg.Items[0])))
}

// The caller's Extra is not modified, and each call sends it again.
func TestBankAccountsExtraNotAliased(t *testing.T) {
	c, api := newMock(t, always(200, `{"bank_accounts": []}`))
	extra := url.Values{"currency": {"AUD"}}
	p := &invoicing.BankAccountListParams{Extra: extra}
	for range 2 {
		_, err := c.BankAccounts.ListPage(context.Background(), p)
		require.NoError(t, err)
	}
	assert.Equal(t, url.Values{"currency": {"AUD"}}, extra, "the caller's Extra is not modified")
	reqs := api.requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "currency=AUD", r.Query)
	}
}

func TestBankTransactionsListPageFilters(t *testing.T) {
	pg, _ := getFixture(t, "bank_transactions_list.json", "/bank-transactions", "bank_account_id=acc-op-1&from_date=2026-11-01&page=1&page_size=20&status=unreconciled&to_date=2026-11-30", func(c *invoicing.Client) (*invoicing.Page[invoicing.BankTransaction], error) {
		return c.BankTransactions.ListPage(context.Background(), &invoicing.BankTransactionListParams{
			ListParams:    invoicing.ListParams{Page: 1, PageSize: 20},
			BankAccountID: "acc-op-1",
			FromDate:      invoicing.NewDate(2026, time.November, 1),
			ToDate:        invoicing.NewDate(2026, time.November, 30),
			Extra:         url.Values{"status": {"unreconciled"}},
		})
	})
	require.Len(t, pg.Items, 2)
	out, in := pg.Items[0], pg.Items[1]
	assert.Equal(t, idBankTx, out.ID)
	assert.Equal(t, "acc-op-1", out.BankAccountID)
	assert.Equal(t, invoicing.NewDate(2026, time.November, 3), out.Date)
	assert.Equal(t, "Paper Supplies Co", out.Description)
	assert.Equal(t, "-1100.11", out.Amount.String(), "money out is negative")
	assert.True(t, out.Amount.IsNegative())
	assert.Equal(t, "SUP-INV-7781", out.Reference)
	assert.Equal(t, "reconciled", out.Status)
	assert.Equal(t, "1357.95", in.Amount.String())
	assert.Equal(t, "ACME", extraValue[string](t, in.Extra, "payee"))
	assert.Equal(t, 2, pg.Total)
	assert.Equal(t, 20, pg.PageSize)
}

func TestBankTransactionsListItemsKey(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "bank_transactions_list_items.json")))
	got := testkit.Collect(t, c.BankTransactions.List(context.Background(), &invoicing.BankTransactionListParams{BankAccountID: "acc-op-1"}))
	require.Len(t, got, 1)
	assert.Equal(t, "-0.01", got[0].Amount.String())
	svcAssertGET(t, api.last(t), "/bank-transactions", "bank_account_id=acc-op-1&page=1&page_size=100")
}

func TestBankTransactionsGet(t *testing.T) {
	tx, body := getFixture(t, "bank_transactions_get.json", "/bank-transactions/"+idBankTx, "", func(c *invoicing.Client) (*invoicing.BankTransaction, error) {
		return c.BankTransactions.Get(context.Background(), idBankTx)
	})
	assert.Equal(t, "-1100.11", tx.Amount.String())
	var cp struct {
		Name    string `json:"name"`
		Account string `json:"account"`
	}
	require.NoError(t, tx.Extra.Get("counterparty", &cp))
	assert.Equal(t, "Paper Supplies Co", cp.Name)
	assert.Equal(t, "23931", extraValue[decimal.Decimal](t, tx.Extra, "running_balance").String())
	assert.JSONEq(t, body, string(rawJSON(t, tx)))
	assert.Contains(t, string(rawJSON(t, tx)), `"running_balance":23931.00`, "as sent")
}

func TestBankTransactionsParamsValidatedBeforeSending(t *testing.T) {
	c, api := newMock(t, always(200, `{}`))
	d := invoicing.NewDate(2026, time.November, 30)
	_, err := c.BankTransactions.ListPage(context.Background(), &invoicing.BankTransactionListParams{FromDate: d, ToDate: d.AddDays(-1)})
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "from_date", pe.Field)

	n := 0
	for tx, err := range c.BankTransactions.List(context.Background(), &invoicing.BankTransactionListParams{FromDate: d, Extra: url.Values{"from_date": {"2026-01-01"}}}) {
		n++
		assert.Nil(t, tx)
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "from_date", pe.Field)
	}
	assert.Equal(t, 1, n, "the error is yielded once")
	assert.Empty(t, api.requests())
}

// Transactions the service sends with odd members still decode.
func TestBankTransactionsLenient(t *testing.T) {
	recs := svcLenientRecords(t, "lenient_bank_transactions.json")
	pg := answered(t, svcPageBody("bank_transactions", recs), func(c *invoicing.Client) (*invoicing.Page[invoicing.BankTransaction], error) {
		return c.BankTransactions.ListPage(context.Background(), nil)
	})
	require.Len(t, pg.Items, len(recs))
	assert.Equal(t, []string{"date"}, pg.Items[1].MismatchedFields(), "a datetime is not a date")
	assert.True(t, pg.Items[1].Date.IsZero())
	svcDecEqual(t, "-12.50", pg.Items[1].Amount)
	assert.Equal(t, []string{"amount"}, pg.Items[2].MismatchedFields())
	assert.Nil(t, pg.Items[4].MismatchedFields(), `"" for a date and null for a string fit`)
	assert.True(t, pg.Items[4].Date.IsZero())
	assert.True(t, pg.Items[4].Has("date"))
	assert.Contains(t, string(rawJSON(t, pg.Items[4])), `"date":"","description":"No date yet","amount":1,"reference":null`)
}
