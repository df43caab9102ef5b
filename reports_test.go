package invoicing_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestReportsTrialBalance(t *testing.T) {
	r, body := getFixture(t, "reports_trial_balance.json", "/reports/trial-balance", "as_at=2026-06-30", func(c *invoicing.Client) (*invoicing.Report, error) {
		return c.Reports.TrialBalance(context.Background(), &invoicing.TrialBalanceParams{AsAt: invoicing.NewDate(2026, time.June, 30)})
	})

	assert.Equal(t, "trial_balance", r.Name)
	assert.Equal(t, "2026-06-30", r.AsAt.String())
	assert.True(t, r.FromDate.IsZero())
	assert.False(t, r.Has("from_date"))
	assert.Equal(t, "AUD", r.Currency)
	require.Len(t, r.Lines, 2)
	sales, ar := r.Lines[0], r.Lines[1]
	assert.Equal(t, idAccount, sales.AccountID)
	assert.Equal(t, "200", sales.AccountCode)
	assert.Equal(t, "Sales", sales.AccountName)
	assert.Equal(t, invoicing.AccountTypeRevenue, sales.AccountType)
	assert.True(t, sales.Debit.IsZero())
	assert.Equal(t, "15500.1", sales.Credit.String())
	assert.Equal(t, "-15500.1", sales.Balance.String())
	assert.True(t, sales.Balance.Add(ar.Balance).IsZero(), "exact: the trial balance balances")
	assert.Equal(t, "1200", extraValue[decimal.Decimal](t, ar.Extra, "ytd_movement").String())

	debit, err := r.Totals.Amount("debit")
	require.NoError(t, err)
	credit, err := r.Totals.Amount("credit")
	require.NoError(t, err)
	assert.True(t, debit.Equal(credit))
	assert.Equal(t, "15500.1", debit.String())
	_, err = r.Totals.Amount("net")
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `"net"`)
	assert.JSONEq(t, `{"debit": 15500.10, "credit": 15500.10}`, string(r.Totals.Raw()))

	var generated time.Time
	require.NoError(t, r.Extra.Get("generated_at", &generated))
	assert.Equal(t, time.Date(2026, 7, 1, 0, 0, 5, 0, time.UTC), generated)

	out, err := json.Marshal(r)
	require.NoError(t, err)
	compact := jsontext.Value(body).Clone()
	require.NoError(t, compact.Compact())
	assert.Equal(t, string(compact), string(out), "the report encodes back byte for byte")
}

func TestReportsProfitAndLossWithExtra(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "reports_profit_loss.json")))
	r, err := c.Reports.ProfitAndLoss(context.Background(), &invoicing.ProfitAndLossParams{
		FromDate: invoicing.NewDate(2026, time.January, 1),
		ToDate:   invoicing.NewDate(2026, time.June, 30),
		Extra:    url.Values{"basis": {"cash"}, "tracking_category": {"Region"}},
	})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/reports/profit-loss", "basis=cash&from_date=2026-01-01&to_date=2026-06-30&tracking_category=Region")

	assert.Equal(t, "profit_and_loss", r.Name)
	assert.Equal(t, invoicing.NewDate(2026, time.January, 1), r.FromDate)
	assert.Equal(t, invoicing.NewDate(2026, time.June, 30), r.ToDate)
	assert.True(t, r.AsAt.IsZero())
	require.Len(t, r.Lines, 2)
	assert.Equal(t, invoicing.AccountTypeExpense, r.Lines[1].AccountType)
	revenue, err := r.Totals.Amount("revenue")
	require.NoError(t, err)
	expenses, err := r.Totals.Amount("expenses")
	require.NoError(t, err)
	net, err := r.Totals.Amount("net_profit")
	require.NoError(t, err)
	assert.True(t, revenue.Sub(expenses).Equal(net), "exact decimal arithmetic")
	assert.Equal(t, "8000.25", net.String())
}

func TestReportsBalanceSheetOfAnotherShape(t *testing.T) {
	// A report shaped unlike the guess still decodes.
	r, body := getFixture(t, "reports_balance_sheet_other_shape.json", "/reports/balance-sheet", "", func(c *invoicing.Client) (*invoicing.Report, error) {
		return c.Reports.BalanceSheet(context.Background(), nil)
	})

	assert.Equal(t, "balance_sheet", r.Name)
	assert.Equal(t, "2026-06-30", r.AsAt.String())
	assert.Empty(t, r.Lines)
	assert.Nil(t, r.MismatchedFields())
	assert.JSONEq(t, `[15500.10, 15500.10]`, string(r.Totals.Raw()), "a totals array is kept as sent")
	_, err := r.Totals.Amount("debit")
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)

	var sections []struct {
		Name  string          `json:"name"`
		Total decimal.Decimal `json:"total"`
	}
	require.NoError(t, r.Extra.Get("sections", &sections))
	require.Len(t, sections, 2)
	assert.Equal(t, "Assets", sections[0].Name)
	assert.True(t, sections[0].Total.Equal(sections[1].Total))

	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))
}

func TestReportsQueryForEachReport(t *testing.T) {
	c, api := newMock(t, always(200, `{"report":"x"}`))
	ctx := context.Background()
	d := invoicing.NewDate(2026, time.March, 31)

	_, err := c.Reports.BalanceSheet(ctx, &invoicing.BalanceSheetParams{AsAt: d, Extra: url.Values{"periods": {"3"}}})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/reports/balance-sheet", "as_at=2026-03-31&periods=3")

	_, err = c.Reports.TrialBalance(ctx, nil)
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/reports/trial-balance", "")

	_, err = c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: d})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/reports/profit-loss", "from_date=2026-03-31")

	// Extra may carry a parameter whose typed field is unset.
	_, err = c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{Extra: url.Values{"as_at": {"2026-03-31"}}})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/reports/trial-balance", "as_at=2026-03-31")
}

func TestReportsParamsValidatedBeforeSending(t *testing.T) {
	c, api := newMock(t, always(200, `{}`))
	ctx := context.Background()
	d := invoicing.NewDate(2026, time.June, 30)
	var pe *invoicing.ParamError

	_, err := c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: d, ToDate: d.AddDays(-1)})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "from_date", pe.Field)

	_, err = c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{AsAt: d, Extra: url.Values{"as_at": {"2026-01-01"}}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "as_at", pe.Field)

	_, err = c.Reports.BalanceSheet(ctx, &invoicing.BalanceSheetParams{Extra: url.Values{"": {"x"}}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Extra", pe.Field)

	_, err = c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{ToDate: d, Extra: url.Values{"to_date": {"2026-01-01"}}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "to_date", pe.Field)
	assert.Empty(t, api.requests())
}

func TestReportTotals(t *testing.T) {
	var zero invoicing.ReportTotals
	out, err := json.Marshal(zero)
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(out), "totals not decoded from JSON")
	assert.Nil(t, zero.Raw())
	_, err = zero.Amount("x")
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	var s string
	assert.ErrorIs(t, zero.Get("x", &s), invoicing.ErrFieldMissing)

	var r invoicing.Report
	require.NoError(t, json.Unmarshal([]byte(`{"report":"x","totals":null}`), &r))
	assert.Nil(t, r.Totals.Raw(), "null totals hold nothing")
	_, err = r.Totals.Amount("net")
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Equal(t, `{"report":"x","totals":null}`, string(rawJSON(t, r)), "and are written back as null")

	require.NoError(t, json.Unmarshal([]byte(`{"report":"x","totals":{"net":"12.30","gross":1.50,"label":"FY26","none":null}}`), &r))
	net, err := r.Totals.Amount("net")
	require.NoError(t, err)
	assert.Equal(t, "12.3", net.String(), "a numeric string is read too")
	gross, err := r.Totals.Amount("gross")
	require.NoError(t, err)
	assert.Equal(t, "1.5", gross.String())
	var label string
	require.NoError(t, r.Totals.Get("label", &label))
	assert.Equal(t, "FY26", label)
	none := decimal.NewFromInt(7)
	require.NoError(t, r.Totals.Get("none", &none), "null leaves the destination")
	assert.Equal(t, "7", none.String())
	_, err = r.Totals.Amount("label")
	require.Error(t, err, "not a number")
	assert.NotErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `"label"`)

	// Raw is a copy.
	raw := r.Totals.Raw()
	raw[0] = 'X'
	assert.Equal(t, byte('{'), r.Totals.Raw()[0])

	// Totals of another shape are kept, never an error.
	for _, v := range []string{`[1, 2]`, `"n/a"`, `7`, `true`, `{}`} {
		var r invoicing.Report
		require.NoError(t, json.Unmarshal([]byte(`{"totals":`+v+`}`), &r), v)
		assert.JSONEq(t, v, string(r.Totals.Raw()), v)
		assert.Nil(t, r.MismatchedFields(), v)
		_, err := r.Totals.Amount("debit")
		assert.ErrorIs(t, err, invoicing.ErrFieldMissing, v)
		assert.JSONEq(t, `{"totals":`+v+`}`, string(rawJSON(t, r)), v)
	}

	// UnmarshalJSON on its own: null leaves totals unchanged.
	var tot invoicing.ReportTotals
	require.NoError(t, tot.UnmarshalJSON([]byte(`{"a":1}`)))
	require.NoError(t, tot.UnmarshalJSON([]byte(`null`)))
	assert.JSONEq(t, `{"a":1}`, string(tot.Raw()))
	b, err := tot.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1}`, string(b))
}

// A report's odd row does not fail the report; rows that are not an array
// of objects are a mismatch of Lines.
func TestReportsLenientLines(t *testing.T) {
	reports := svcLenientRecords(t, "lenient_reports.json")
	ctx := context.Background()

	r := answered(t, string(reports[3]), func(c *invoicing.Client) (*invoicing.Report, error) { return c.Reports.TrialBalance(ctx, nil) })
	assert.Nil(t, r.MismatchedFields())
	require.Len(t, r.Lines, 2)
	l := r.Lines[0]
	assert.Equal(t, []string{"account_type", "debit"}, l.MismatchedFields())
	assert.Empty(t, l.AccountType)
	assert.True(t, l.Debit.IsZero())
	assert.True(t, l.Balance.Equal(decimal.NewFromInt(-1000)))
	assert.Equal(t, "Sales", l.AccountName)
	assert.Nil(t, r.Lines[1].MismatchedFields())
	assert.True(t, r.Lines[1].Debit.Equal(decimal.NewFromInt(1000)))
	total, err := r.Totals.Amount("debit")
	require.NoError(t, err)
	assert.True(t, total.Equal(decimal.NewFromInt(1000)))
	assert.JSONEq(t, string(reports[3]), string(rawJSON(t, r)))

	r = answered(t, string(reports[1]), func(c *invoicing.Client) (*invoicing.Report, error) { return c.Reports.TrialBalance(ctx, nil) })
	assert.Equal(t, []string{"lines"}, r.MismatchedFields())
	assert.Nil(t, r.Lines)
	assert.Equal(t, "trial_balance", r.Name)
	assert.Equal(t, invoicing.NewDate(2026, 6, 30), r.AsAt)
	var byType map[string][]json.RawMessage
	require.NoError(t, r.Extra.Get("lines", &byType))
	assert.Len(t, byType["revenue"], 1)
	assert.JSONEq(t, string(reports[1]), string(rawJSON(t, r)))
}
