package invoicing_test

import (
	"context"
	"errors"
	"iter"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// resCall is one method of the section 4.5 services, called with valid
// arguments.
type resCall struct {
	name string
	post bool
	call func(context.Context, *invoicing.Client) error
}

// resFirstErr drains a list iterator and returns its error, if any.
func resFirstErr[T any](seq iter.Seq2[*T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func resErrOnly[T any](_ T, err error) error { return err }

func resCalls() []resCall {
	return []resCall{
		{"Clients.List", false, func(ctx context.Context, c *invoicing.Client) error { return resFirstErr(c.Clients.List(ctx, nil)) }},
		{"Clients.ListPage", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.Clients.ListPage(ctx, nil)) }},
		{"Clients.Get", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.Clients.Get(ctx, clientID)) }},
		{"Clients.Create", true, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "A"}))
		}},
		{"Suppliers.List", false, func(ctx context.Context, c *invoicing.Client) error { return resFirstErr(c.Suppliers.List(ctx, nil)) }},
		{"Suppliers.ListPage", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Suppliers.ListPage(ctx, nil))
		}},
		{"Suppliers.Get", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Suppliers.Get(ctx, supplierID))
		}},
		{"Suppliers.Create", true, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "A"}))
		}},
		{"Bills.List", false, func(ctx context.Context, c *invoicing.Client) error { return resFirstErr(c.Bills.List(ctx, nil)) }},
		{"Bills.ListPage", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.Bills.ListPage(ctx, nil)) }},
		{"Bills.Get", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.Bills.Get(ctx, billID)) }},
		{"Bills.Create", true, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: supplierID}))
		}},
		{"Accounts.List", false, func(ctx context.Context, c *invoicing.Client) error { return resFirstErr(c.Accounts.List(ctx, nil)) }},
		{"Accounts.ListPage", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.Accounts.ListPage(ctx, nil)) }},
		{"Accounts.Get", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Accounts.Get(ctx, accountID))
		}},
		{"TaxCodes.List", false, func(ctx context.Context, c *invoicing.Client) error { return resFirstErr(c.TaxCodes.List(ctx, nil)) }},
		{"TaxCodes.ListPage", false, func(ctx context.Context, c *invoicing.Client) error { return resErrOnly(c.TaxCodes.ListPage(ctx, nil)) }},
		{"TaxCodes.Get", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.TaxCodes.Get(ctx, taxCodeID))
		}},
		{"Reports.TrialBalance", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Reports.TrialBalance(ctx, nil))
		}},
		{"Reports.ProfitAndLoss", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Reports.ProfitAndLoss(ctx, nil))
		}},
		{"Reports.BalanceSheet", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.Reports.BalanceSheet(ctx, nil))
		}},
		{"BankAccounts.List", false, func(ctx context.Context, c *invoicing.Client) error {
			return resFirstErr(c.BankAccounts.List(ctx, nil))
		}},
		{"BankAccounts.ListPage", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.BankAccounts.ListPage(ctx, nil))
		}},
		{"BankTransactions.List", false, func(ctx context.Context, c *invoicing.Client) error {
			return resFirstErr(c.BankTransactions.List(ctx, nil))
		}},
		{"BankTransactions.ListPage", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.BankTransactions.ListPage(ctx, nil))
		}},
		{"BankTransactions.Get", false, func(ctx context.Context, c *invoicing.Client) error {
			return resErrOnly(c.BankTransactions.Get(ctx, bankTxID))
		}},
	}
}

func TestResourcesNotFoundWithDetail(t *testing.T) {
	for _, rc := range resCalls() {
		t.Run(rc.name, func(t *testing.T) {
			c, api := newTestAPI(t, always(404, `{"detail":"Resource not found"}`))
			err := rc.call(context.Background(), c)
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 404, apiErr.StatusCode)
			assert.Equal(t, "Resource not found", apiErr.Detail)
			assert.ErrorIs(t, err, invoicing.ErrNotFound)
			assert.Equal(t, api.last(t).Path, apiErr.Path)
			assert.Len(t, api.requests(), 1, "4xx is never retried")
		})
	}
}

func TestResourcesValidationErrorWithArrayDetail(t *testing.T) {
	for _, rc := range resCalls() {
		t.Run(rc.name, func(t *testing.T) {
			c, _ := newTestAPI(t, always(422, fixture(t, "resources_error_422.json")))
			err := rc.call(context.Background(), c)
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.ErrorIs(t, err, invoicing.ErrValidation)
			require.Len(t, apiErr.Problems, 2)
			assert.Equal(t, []string{"body", "line_items", "0", "account_id"}, apiErr.Problems[1].Loc)
			assert.Equal(t, "unknown account", apiErr.Problems[1].Msg)
		})
	}
}

func TestResourcesHTMLServerErrorPage(t *testing.T) {
	for _, rc := range resCalls() {
		t.Run(rc.name, func(t *testing.T) {
			c, api := newTestAPI(t, always(500, fixture(t, "resources_error_500.html"), "Content-Type", "text/html"),
				invoicing.WithMaxRetries(2))
			err := rc.call(context.Background(), c)
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.ErrorIs(t, err, invoicing.ErrServer)
			assert.Equal(t, 500, apiErr.StatusCode)
			assert.Equal(t, "Internal Server Error", apiErr.Detail)
			assert.Contains(t, string(apiErr.Body), "<h1>Internal Server Error</h1>")
			if rc.post {
				assert.Len(t, api.requests(), 1, "a create is not repeated")
			} else {
				assert.Len(t, api.requests(), 3, "a read is retried")
			}
		})
	}
}

func TestResourcesMalformedJSON(t *testing.T) {
	for name, body := range map[string]string{"truncated": `{"id": "7b1e2c3d`, "html": `<html>ok</html>`} {
		for _, rc := range resCalls() {
			t.Run(name+"/"+rc.name, func(t *testing.T) {
				c, api := newTestAPI(t, always(200, body))
				err := rc.call(context.Background(), c)
				require.Error(t, err)
				var apiErr *invoicing.Error
				assert.False(t, errors.As(err, &apiErr), "a decoding failure is not an *Error")
				assert.Contains(t, err.Error(), "decoding")
				assert.Len(t, api.requests(), 1, "decoding failures are not retried")
			})
		}
	}
}

func TestResourcesInvalidIDsSendNothing(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{}`))
	ctx := context.Background()
	for _, id := range []string{"", "123", "../clients", billID + "/pdf", billID + "?x=1"} {
		for name, get := range map[string]func(string) error{
			"clients":           func(id string) error { return resErrOnly(c.Clients.Get(ctx, id)) },
			"suppliers":         func(id string) error { return resErrOnly(c.Suppliers.Get(ctx, id)) },
			"bills":             func(id string) error { return resErrOnly(c.Bills.Get(ctx, id)) },
			"accounts":          func(id string) error { return resErrOnly(c.Accounts.Get(ctx, id)) },
			"tax codes":         func(id string) error { return resErrOnly(c.TaxCodes.Get(ctx, id)) },
			"bank transactions": func(id string) error { return resErrOnly(c.BankTransactions.Get(ctx, id)) },
		} {
			err := get(id)
			var pe *invoicing.ParamError
			require.ErrorAs(t, err, &pe, "%s %q", name, id)
			assert.Equal(t, "id", pe.Field)
		}
	}
	assert.Empty(t, api.requests())
}

func TestResourcesGetCanonicalisesUUIDs(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "bills_get.json")))
	_, err := c.Bills.Get(context.Background(), "{9C8B7A6D-5E4F-4A3B-9C2D-1E0F9A8B7C6D}")
	require.NoError(t, err)
	assert.Equal(t, "/bills/"+billID, api.last(t).Path)
}

func TestResourcesListParamsValidatedBeforeSending(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{}`))
	ctx := context.Background()
	big := invoicing.ListParams{PageSize: 101}
	for _, tc := range []struct {
		name, field string
		err         error
	}{
		{"clients page size", "page_size", resErrOnly(c.Clients.ListPage(ctx, &invoicing.ContactListParams{ListParams: big}))},
		{"suppliers page", "page", resFirstErr(c.Suppliers.List(ctx, &invoicing.ContactListParams{ListParams: invoicing.ListParams{Page: -1}}))},
		{"bills page size", "page_size", resFirstErr(c.Bills.List(ctx, &invoicing.BillListParams{ListParams: big}))},
		{"accounts page size", "page_size", resErrOnly(c.Accounts.ListPage(ctx, &invoicing.AccountListParams{ListParams: big}))},
		{"tax codes page size", "page_size", resFirstErr(c.TaxCodes.List(ctx, &invoicing.TaxCodeListParams{ListParams: big}))},
		{"bank accounts page size", "page_size", resErrOnly(c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{ListParams: big}))},
		{"bank transactions page size", "page_size", resFirstErr(c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{ListParams: big}))},

		{"extra page", "page", resFirstErr(c.Clients.List(ctx, &invoicing.ContactListParams{Extra: url.Values{"page": {"3"}}}))},
		{"extra page_size", "page_size", resErrOnly(c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{Extra: url.Values{"page_size": {"3"}}}))},
		{"extra empty name", "Extra", resErrOnly(c.Suppliers.ListPage(ctx, &invoicing.ContactListParams{Extra: url.Values{"": {"3"}}}))},
		{"extra clashes with status", "status", resErrOnly(c.Bills.ListPage(ctx, &invoicing.BillListParams{Status: invoicing.BillStatusPaid, Extra: url.Values{"status": {"draft"}}}))},
		{"extra clashes with supplier_id", "supplier_id", resFirstErr(c.Bills.List(ctx, &invoicing.BillListParams{SupplierID: supplierID, Extra: url.Values{"supplier_id": {"x"}}}))},
		{"extra clashes with type", "type", resErrOnly(c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: invoicing.AccountTypeEquity, Extra: url.Values{"type": {"asset"}}}))},
		{"extra clashes with region", "region", resErrOnly(c.TaxCodes.ListPage(ctx, &invoicing.TaxCodeListParams{Region: "AU", Extra: url.Values{"region": {"NZ"}}}))},
		{"extra clashes with bank_account_id", "bank_account_id", resErrOnly(c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{BankAccountID: "a", Extra: url.Values{"bank_account_id": {"b"}}}))},
	} {
		var pe *invoicing.ParamError
		if assert.ErrorAs(t, tc.err, &pe, tc.name) {
			assert.Equal(t, tc.field, pe.Field, tc.name)
			assert.ErrorIs(t, tc.err, invoicing.ErrInvalidParams, tc.name)
		}
	}
	assert.Empty(t, api.requests())
}

func TestResourcesExtraMayCarryUnsetTypedParam(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"bills": []}`))
	_, err := c.Bills.ListPage(context.Background(), &invoicing.BillListParams{Extra: url.Values{"status": {"draft", "approved"}}})
	require.NoError(t, err)
	resAssertGET(t, api.last(t), "/bills", "status=draft&status=approved")
}

func TestResourcesExtraNotAliased(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"bank_accounts": []}`))
	extra := url.Values{"currency": {"AUD"}}
	p := &invoicing.BankAccountListParams{Extra: extra}
	_, err := c.BankAccounts.ListPage(context.Background(), p)
	require.NoError(t, err)
	_, err = c.BankAccounts.ListPage(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, url.Values{"currency": {"AUD"}}, extra, "the caller's Extra is not modified")
	for _, r := range api.requests() {
		assert.Equal(t, "currency=AUD", r.Query)
	}
}
