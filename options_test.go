package invoicing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// method is one SDK method, called with the options under test.
type method struct {
	name   string
	verb   string // the HTTP method it sends
	path   string // the path it sends, relative to the base URL
	create bool   // a POST without an idempotency reference
	call   func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) error
}

// every method of every service, and Client.Do.
func everyMethod() []method {
	const id = invoiceID
	pdf := func(f *invoicing.File, err error) error {
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, f)
		f.Close()
		return err
	}
	return []method{
		{"Invoices.List", "GET", "/invoices", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Invoices.List(ctx, nil, o...))
		}},
		{"Invoices.ListPage", "GET", "/invoices", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Invoices.ListPage(ctx, nil, o...)
			return err
		}},
		{"Invoices.Get", "GET", "/invoices/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Invoices.Get(ctx, id, o...)
			return err
		}},
		{"Invoices.PDF", "GET", "/invoices/" + id + "/pdf", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return pdf(c.Invoices.PDF(ctx, id, o...))
		}},
		{"Invoices.Create", "POST", "/invoices", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Invoices.Create(ctx, validInvoice(), o...)
			return err
		}},
		{"Items.List", "GET", "/items", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Items.List(ctx, nil, o...))
		}},
		{"Items.ListPage", "GET", "/items", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Items.ListPage(ctx, nil, o...)
			return err
		}},
		{"Items.Get", "GET", "/items/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Items.Get(ctx, id, o...)
			return err
		}},
		{"Items.Create", "POST", "/items", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Items.Create(ctx, validItem(), o...)
			return err
		}},
		{"Quotes.List", "GET", "/quotes", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Quotes.List(ctx, nil, o...))
		}},
		{"Quotes.ListPage", "GET", "/quotes", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Quotes.ListPage(ctx, nil, o...)
			return err
		}},
		{"Quotes.Get", "GET", "/quotes/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Quotes.Get(ctx, id, o...)
			return err
		}},
		{"Quotes.PDF", "GET", "/quotes/" + id + "/pdf", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return pdf(c.Quotes.PDF(ctx, id, o...))
		}},
		{"Quotes.Create", "POST", "/quotes", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Quotes.Create(ctx, validQuote(), o...)
			return err
		}},
		{"Clients.List", "GET", "/clients", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Clients.List(ctx, nil, o...))
		}},
		{"Clients.ListPage", "GET", "/clients", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Clients.ListPage(ctx, nil, o...)
			return err
		}},
		{"Clients.Get", "GET", "/clients/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Clients.Get(ctx, id, o...)
			return err
		}},
		{"Clients.Create", "POST", "/clients", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Acme"}, o...)
			return err
		}},
		{"Suppliers.List", "GET", "/suppliers", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Suppliers.List(ctx, nil, o...))
		}},
		{"Suppliers.ListPage", "GET", "/suppliers", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Suppliers.ListPage(ctx, nil, o...)
			return err
		}},
		{"Suppliers.Get", "GET", "/suppliers/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Suppliers.Get(ctx, id, o...)
			return err
		}},
		{"Suppliers.Create", "POST", "/suppliers", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "Paper Co"}, o...)
			return err
		}},
		{"Bills.List", "GET", "/bills", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Bills.List(ctx, nil, o...))
		}},
		{"Bills.ListPage", "GET", "/bills", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Bills.ListPage(ctx, nil, o...)
			return err
		}},
		{"Bills.Get", "GET", "/bills/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Bills.Get(ctx, id, o...)
			return err
		}},
		{"Bills.Create", "POST", "/bills", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: id}, o...)
			return err
		}},
		{"Accounts.List", "GET", "/accounts", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.Accounts.List(ctx, nil, o...))
		}},
		{"Accounts.ListPage", "GET", "/accounts", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Accounts.ListPage(ctx, nil, o...)
			return err
		}},
		{"Accounts.Get", "GET", "/accounts/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Accounts.Get(ctx, id, o...)
			return err
		}},
		{"TaxCodes.List", "GET", "/tax-codes", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.TaxCodes.List(ctx, nil, o...))
		}},
		{"TaxCodes.ListPage", "GET", "/tax-codes", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.TaxCodes.ListPage(ctx, nil, o...)
			return err
		}},
		{"TaxCodes.Get", "GET", "/tax-codes/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.TaxCodes.Get(ctx, id, o...)
			return err
		}},
		{"BankAccounts.List", "GET", "/bank-accounts", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.BankAccounts.List(ctx, nil, o...))
		}},
		{"BankAccounts.ListPage", "GET", "/bank-accounts", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.BankAccounts.ListPage(ctx, nil, o...)
			return err
		}},
		{"BankTransactions.List", "GET", "/bank-transactions", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return rangeErr(c.BankTransactions.List(ctx, nil, o...))
		}},
		{"BankTransactions.ListPage", "GET", "/bank-transactions", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.BankTransactions.ListPage(ctx, nil, o...)
			return err
		}},
		{"BankTransactions.Get", "GET", "/bank-transactions/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.BankTransactions.Get(ctx, id, o...)
			return err
		}},
		{"Reports.TrialBalance", "GET", "/reports/trial-balance", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Reports.TrialBalance(ctx, nil, o...)
			return err
		}},
		{"Reports.ProfitAndLoss", "GET", "/reports/profit-loss", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Reports.ProfitAndLoss(ctx, nil, o...)
			return err
		}},
		{"Reports.BalanceSheet", "GET", "/reports/balance-sheet", false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			_, err := c.Reports.BalanceSheet(ctx, nil, o...)
			return err
		}},
		{"Client.Do GET", "GET", "/invoices/" + id, false, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			var out map[string]any
			return c.Do(ctx, "GET", "/invoices/"+id, nil, &out, o...)
		}},
		{"Client.Do POST", "POST", "/credit-notes", true, func(ctx context.Context, c *invoicing.Client, o ...invoicing.RequestOption) error {
			return c.Do(ctx, "POST", "/credit-notes", map[string]any{"invoice_id": id}, nil, o...)
		}},
	}
}

// rangeErr ranges over seq and returns the error it yields, if any.
func rangeErr[T any](seq func(func(*T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// optionsAPI answers every endpoint with a minimal valid body, and obeys
// the test's instructions in the request's X-Test header (sent with
// WithHeader, which this also tests): "fail=N" answers 503 to the first N
// attempts of the request named by X-Test-Call, "stall" never answers the
// first attempt (it ends when the client gives up on it), "notfound"
// answers 404.
type optionsAPI struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (a *optionsAPI) handle(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	call := r.Header.Get("X-Test-Call")
	a.attempts[call]++
	n := a.attempts[call]
	a.mu.Unlock()
	w.Header().Set("X-Request-Id", "req-"+call+"-"+strconv.Itoa(n))
	mode := r.Header.Get("X-Test")
	switch {
	case strings.HasPrefix(mode, "fail="):
		if limit, _ := strconv.Atoi(strings.TrimPrefix(mode, "fail=")); n <= limit {
			reply(w, 503, `{"detail": "busy"}`)
			return
		}
	case mode == "stall":
		if n == 1 {
			<-r.Context().Done()
			return
		}
	case mode == "notfound":
		reply(w, 404, `{"detail": "Not found"}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, prefix)
	status := 200
	if r.Method == http.MethodPost {
		status = 201
	}
	switch {
	case strings.HasSuffix(path, "/pdf"):
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = io.WriteString(w, "%PDF-1.7\n")
	case strings.Count(path, "/") == 1 && r.Method == http.MethodGet: // a list
		reply(w, status, `{"items": [], "total": 0, "page": 1, "page_size": 100, "has_more": false}`)
	default:
		reply(w, status, `{"id": "`+invoiceID+`"}`)
	}
}

func (a *optionsAPI) attemptsOf(call string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attempts[call]
}

func TestEveryMethodTakesRequestOptions(t *testing.T) {
	api := &optionsAPI{attempts: map[string]int{}}
	c, seen := newTestAPI(t, api.handle)
	ctx := context.Background()
	for _, m := range everyMethod() {
		t.Run(m.name, func(t *testing.T) {
			tag := func(s string) invoicing.RequestOption { return invoicing.WithHeader("X-Test-Call", m.name+"/"+s) }

			// A header is sent, and the response is filled on success.
			var resp invoicing.Response
			require.NoError(t, m.call(ctx, c, tag("ok"), invoicing.WithHeader("X-Correlation-Id", "corr-7"), invoicing.WithResponseInto(&resp)))
			last := seen.last(t)
			assert.Equal(t, m.verb, last.Method)
			assert.Equal(t, m.path, last.Path)
			assert.Equal(t, "corr-7", last.Header.Get("X-Correlation-Id"))
			assert.Equal(t, "Bearer "+testKey, last.Header.Get("Authorization"), "the SDK's headers are still sent")
			assert.Contains(t, []int{200, 201}, resp.StatusCode)
			assert.Equal(t, 1, resp.Attempts)
			assert.Equal(t, "req-"+m.name+"/ok-1", resp.RequestID)
			assert.NotNil(t, resp.Header)

			// The response is filled on failure too, and matches the *Error.
			resp = invoicing.Response{}
			err := m.call(ctx, c, tag("notfound"), invoicing.WithHeader("X-Test", "notfound"), invoicing.WithResponseInto(&resp))
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 404, resp.StatusCode)
			assert.Equal(t, "req-"+m.name+"/notfound-1", resp.RequestID)
			assert.Equal(t, resp, apiErr.Response)

			// WithRetries sets this call's budget; what is retried does not
			// change (a create is not repeated after a 503 unless the
			// caller says it is safe).
			resp = invoicing.Response{}
			err = m.call(ctx, c, tag("fail"), invoicing.WithHeader("X-Test", "fail=5"), invoicing.WithRetries(2), invoicing.WithResponseInto(&resp))
			require.ErrorIs(t, err, invoicing.ErrServer)
			want := 3
			if m.create {
				want = 1
			}
			assert.Equal(t, want, api.attemptsOf(m.name+"/fail"))
			assert.Equal(t, want, resp.Attempts)
			err = m.call(ctx, c, tag("fail0"), invoicing.WithHeader("X-Test", "fail=5"), invoicing.WithRetries(0))
			require.ErrorIs(t, err, invoicing.ErrServer)
			assert.Equal(t, 1, api.attemptsOf(m.name+"/fail0"), "WithRetries(0): no retries")
			err = m.call(ctx, c, tag("idem"), invoicing.WithHeader("X-Test", "fail=1"), invoicing.WithIdempotentRetry(), invoicing.WithResponseInto(&resp))
			require.NoError(t, err)
			assert.Equal(t, 2, api.attemptsOf(m.name+"/idem"), "WithIdempotentRetry repeats after a 503")
			assert.Equal(t, 2, resp.Attempts)

			// WithRequestTimeout bounds each attempt: the stalled first one
			// ends after the timeout and (where repeating is safe) the
			// second succeeds.
			resp = invoicing.Response{}
			err = m.call(ctx, c, tag("stall"), invoicing.WithHeader("X-Test", "stall"), invoicing.WithRequestTimeout(100*time.Millisecond), invoicing.WithResponseInto(&resp))
			if m.create {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Contains(t, err.Error(), "per-attempt timeout")
				assert.Equal(t, 1, resp.Attempts)
				assert.Equal(t, 0, resp.StatusCode, "no response came")
			} else {
				require.NoError(t, err)
				assert.Equal(t, 2, resp.Attempts)
			}

			// An invalid option fails before anything is sent.
			before := api.attemptsOf(m.name + "/bad")
			err = m.call(ctx, c, tag("bad"), invoicing.WithHeader("Authorization", "Bearer other"))
			require.ErrorIs(t, err, invoicing.ErrInvalidOption)
			assert.Equal(t, before, api.attemptsOf(m.name+"/bad"))
		})
	}
}

func TestRequestOptionsRefuseBadValues(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	for name, opt := range map[string]invoicing.RequestOption{
		"authorization":     invoicing.WithHeader("authorization", "x"),
		"content type":      invoicing.WithHeader("Content-Type", "text/plain"),
		"CR in value":       invoicing.WithHeader("X-A", "a\r\nX-Injected: 1"),
		"LF in name":        invoicing.WithHeader("X-A\nB", "a"),
		"empty name":        invoicing.WithHeader("", "a"),
		"space in name":     invoicing.WithHeader("X A", "a"),
		"zero timeout":      invoicing.WithRequestTimeout(0),
		"negative retries":  invoicing.WithRetries(-1),
		"nil response":      invoicing.WithResponseInto(nil),
		"prefetch 0":        invoicing.WithPrefetch(0),
		"prefetch too many": invoicing.WithPrefetch(invoicing.MaxPrefetch + 1),
		"empty query name":  invoicing.WithQuery("", "x"),
	} {
		_, err := c.Invoices.Get(context.Background(), invoiceID, opt)
		assert.ErrorIs(t, err, invoicing.ErrInvalidOption, name)
	}
	assert.Empty(t, api.requests())
}

func TestWithQueryAddsParametersButNotTwice(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "contacts_client.json")))
	_, err := c.Clients.Get(context.Background(), invoiceID, invoicing.WithQuery("include", "addresses"), invoicing.WithQuery("include", "tags"))
	require.NoError(t, err)
	assert.Equal(t, "include=addresses&include=tags", api.last(t).Query)

	_, err = c.Accounts.ListPage(context.Background(), &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}, invoicing.WithQuery("type", "expense"))
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "type", pe.Field)
	_, err = c.Accounts.ListPage(context.Background(), nil, invoicing.WithQuery("page_size", "5"))
	require.ErrorAs(t, err, &pe, "page_size belongs to ListParams")
	assert.Len(t, api.requests(), 1)
}

func TestCallOptionsWinOverClientDefaults(t *testing.T) {
	c, api := newTestAPI(t, always(503, `{"detail": "busy"}`), invoicing.WithMaxRetries(5))
	_, err := c.Invoices.Get(context.Background(), invoiceID, invoicing.WithRetries(1))
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 2, "WithRetries(1) wins over WithMaxRetries(5)")
	_, err = c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 2+6, "the Client's default applies to the next call")
}

func TestResponseIntoOnNetworkFailure(t *testing.T) {
	c, mt := mockClient(t, invoicing.WithMaxRetries(2))
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	var resp invoicing.Response
	_, err := c.Invoices.Get(context.Background(), invoiceID, invoicing.WithResponseInto(&resp))
	require.Error(t, err)
	assert.Equal(t, 0, resp.StatusCode)
	assert.Nil(t, resp.Header)
	assert.Equal(t, 3, resp.Attempts, "1 try + 2 retries, all failed")
}
