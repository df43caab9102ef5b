package invoicing_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EBankAccountsAndTransactions(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	opening := e2eD("250.00")
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
	require.Len(t, accounts, 3)
	var mine *invoicing.BankAccount
	for _, a := range accounts {
		if a.ID == acct {
			mine = a
		}
	}
	require.NotNil(t, mine)
	assert.Equal(t, "E2E Float", mine.Name)
	assert.Equal(t, "062-999 0001", mine.AccountNumber)
	assert.Equal(t, "AUD", mine.Currency)
	e2eDecEqual(t, opening.Add(sumFor(acct)), mine.Balance, "balance = opening balance + transactions")
	e2eDecEqual(t, e2eD("300.05"), mine.Balance)
	page, err := c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{ListParams: invoicing.ListParams{PageSize: 2}})
	require.NoError(t, err)
	assert.Equal(t, 3, page.Total)
	assert.True(t, page.HasMore)
	assert.Len(t, page.Items, 2)

	txIDs := func(ts []*invoicing.BankTransaction) []string {
		var out []string
		for _, tx := range ts {
			out = append(out, tx.ID)
		}
		return out
	}
	assert.Equal(t, []string{tx1, tx2}, txIDs(e2eAll(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{BankAccountID: acct}))))

	from, to := invoicing.NewDate(2026, time.January, 1), invoicing.NewDate(2026, time.January, 12)
	var want []string
	for _, tx := range txns {
		if tx.BankAccountID == invoicingtest.SeedBankAccountID && !tx.Date.Before(from) && !tx.Date.After(to) {
			want = append(want, tx.ID)
		}
	}
	require.NotEmpty(t, want)
	filtered := e2eAll(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{
		BankAccountID: invoicingtest.SeedBankAccountID, FromDate: from, ToDate: to,
	}))
	assert.Equal(t, want, txIDs(filtered))
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
	before := len(srv.Requests())
	_, err = c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{FromDate: to, ToDate: from})
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "to_date before from_date")
	assert.Len(t, srv.Requests(), before, "nothing reached the service")
}
