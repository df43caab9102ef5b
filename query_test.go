package invoicing_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"iter"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// qEndpoint is one call that sends a params type as its query.
type qEndpoint struct {
	params any    // a pointer to the params type (zero)
	path   string // the path the call requests
	list   bool   // the call is a List (page and page_size always sent)
	call   func(ctx context.Context, c *invoicing.Client, p any, opts ...invoicing.RequestOption) error
}

// qListPage and qList make the endpoints of a list.
func qListPage[P any, T any](path string, f func(*invoicing.Client) func(context.Context, *P, ...invoicing.RequestOption) (*invoicing.Page[T], error)) qEndpoint {
	return qEndpoint{params: new(P), path: path, call: func(ctx context.Context, c *invoicing.Client, p any, opts ...invoicing.RequestOption) error {
		_, err := f(c)(ctx, p.(*P), opts...)
		return err
	}}
}

func qList[P any, T any](path string, f func(*invoicing.Client) func(context.Context, *P, ...invoicing.ListOption) iter.Seq2[*T, error]) qEndpoint {
	return qEndpoint{params: new(P), path: path, list: true, call: func(ctx context.Context, c *invoicing.Client, p any, opts ...invoicing.RequestOption) error {
		return svcListErr(f(c)(ctx, p.(*P), listOpts(opts)...))
	}}
}

func qReport[P any](path string, f func(*invoicing.Client) func(context.Context, *P, ...invoicing.RequestOption) (*invoicing.Report, error)) qEndpoint {
	return qEndpoint{params: new(P), path: path, call: func(ctx context.Context, c *invoicing.Client, p any, opts ...invoicing.RequestOption) error {
		_, err := f(c)(ctx, p.(*P), opts...)
		return err
	}}
}

// qEndpoints are the calls of every list and report params type.
func qEndpoints() []qEndpoint {
	type C = invoicing.Client
	return []qEndpoint{
		qListPage("/invoices", func(c *C) func(context.Context, *invoicing.InvoiceListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Invoice], error) {
			return c.Invoices.ListPage
		}),
		qList("/invoices", func(c *C) func(context.Context, *invoicing.InvoiceListParams, ...invoicing.ListOption) iter.Seq2[*invoicing.Invoice, error] {
			return c.Invoices.List
		}),
		qListPage("/items", func(c *C) func(context.Context, *invoicing.ItemListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Item], error) {
			return c.Items.ListPage
		}),
		qListPage("/quotes", func(c *C) func(context.Context, *invoicing.QuoteListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Quote], error) {
			return c.Quotes.ListPage
		}),
		qListPage("/clients", func(c *C) func(context.Context, *invoicing.ContactListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Contact], error) {
			return c.Clients.ListPage
		}),
		qListPage("/suppliers", func(c *C) func(context.Context, *invoicing.ContactListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Contact], error) {
			return c.Suppliers.ListPage
		}),
		qListPage("/bills", func(c *C) func(context.Context, *invoicing.BillListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Bill], error) {
			return c.Bills.ListPage
		}),
		qList("/bills", func(c *C) func(context.Context, *invoicing.BillListParams, ...invoicing.ListOption) iter.Seq2[*invoicing.Bill, error] {
			return c.Bills.List
		}),
		qListPage("/accounts", func(c *C) func(context.Context, *invoicing.AccountListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.Account], error) {
			return c.Accounts.ListPage
		}),
		qListPage("/tax-codes", func(c *C) func(context.Context, *invoicing.TaxCodeListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.TaxCode], error) {
			return c.TaxCodes.ListPage
		}),
		qListPage("/bank-accounts", func(c *C) func(context.Context, *invoicing.BankAccountListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.BankAccount], error) {
			return c.BankAccounts.ListPage
		}),
		qListPage("/bank-transactions", func(c *C) func(context.Context, *invoicing.BankTransactionListParams, ...invoicing.RequestOption) (*invoicing.Page[invoicing.BankTransaction], error) {
			return c.BankTransactions.ListPage
		}),
		qList("/bank-transactions", func(c *C) func(context.Context, *invoicing.BankTransactionListParams, ...invoicing.ListOption) iter.Seq2[*invoicing.BankTransaction, error] {
			return c.BankTransactions.List
		}),
		qReport("/reports/trial-balance", func(c *C) func(context.Context, *invoicing.TrialBalanceParams, ...invoicing.RequestOption) (*invoicing.Report, error) {
			return c.Reports.TrialBalance
		}),
		qReport("/reports/profit-loss", func(c *C) func(context.Context, *invoicing.ProfitAndLossParams, ...invoicing.RequestOption) (*invoicing.Report, error) {
			return c.Reports.ProfitAndLoss
		}),
		qReport("/reports/balance-sheet", func(c *C) func(context.Context, *invoicing.BalanceSheetParams, ...invoicing.RequestOption) (*invoicing.Report, error) {
			return c.Reports.BalanceSheet
		}),
	}
}

// qEmptyBody is a body every call above decodes: an empty page, or an
// empty report.
const qEmptyBody = `{"has_more": false}`

func (e qEndpoint) name() string {
	kind := "ListPage"
	switch {
	case e.list:
		kind = "List"
	case strings.HasPrefix(e.path, "/reports"):
		kind = "report"
	}
	return reflect.TypeOf(e.params).Elem().Name() + "/" + kind + " " + e.path
}

// qSend calls e with p and returns the query it sent, or its error.
func qSend(t *testing.T, e qEndpoint, p any, opts ...invoicing.RequestOption) (string, error) {
	t.Helper()
	c, api := newMock(t, always(200, qEmptyBody))
	if err := e.call(context.Background(), c, p, opts...); err != nil {
		assert.Empty(t, api.requests(), "nothing is sent for invalid params")
		return "", err
	}
	r := api.last(t)
	assert.Equal(t, e.path, r.Path)
	return r.Query, nil
}

// qFill returns a new value of the params type of e with every field set,
// and the query it must give: a string field "v-<name>", dates in field
// order from 2026-01-02, an int 7 plus its index; Page 2 and PageSize 7;
// Extra x_extra=1&x_extra=2.
func qFill(e qEndpoint) (any, url.Values) {
	v := reflect.New(reflect.TypeOf(e.params).Elem())
	want := url.Values{}
	day := 2
	for i := range v.Elem().NumField() {
		f, fv := v.Elem().Type().Field(i), v.Elem().Field(i)
		name := f.Tag.Get("query")
		switch {
		case f.Type == reflect.TypeFor[invoicing.ListParams]():
			fv.Set(reflect.ValueOf(invoicing.ListParams{Page: 2, PageSize: 7}))
			want.Set("page", "2")
			want.Set("page_size", "7")
		case f.Name == "Extra":
			fv.Set(reflect.ValueOf(url.Values{"x_extra": {"1", "2"}}))
			want["x_extra"] = []string{"1", "2"}
		case f.Type == reflect.TypeFor[invoicing.Date]():
			d := invoicing.NewDate(2026, time.January, day)
			day++
			fv.Set(reflect.ValueOf(d))
			want.Set(name, d.String())
		case fv.Kind() == reflect.String:
			fv.SetString("v-" + name)
			want.Set(name, "v-"+name)
		case fv.Kind() == reflect.Int:
			fv.SetInt(int64(7 + i))
			want.Set(name, strconv.Itoa(7+i))
		default:
			panic("qFill: add a case for " + f.Type.String())
		}
	}
	return v.Interface(), want
}

// Every field of every params type becomes its query parameter.
func TestQueryEveryFieldIsSent(t *testing.T) {
	for _, e := range qEndpoints() {
		t.Run(e.name(), func(t *testing.T) {
			p, want := qFill(e)
			got, err := qSend(t, e, p)
			require.NoError(t, err)
			assert.Equal(t, want.Encode(), got)
		})
	}
}

// The typed filters' names and values, written out.
func TestQueryParameterNames(t *testing.T) {
	nov1, nov30 := invoicing.NewDate(2026, time.November, 1), invoicing.NewDate(2026, time.November, 30)
	lp := invoicing.ListParams{Page: 2, PageSize: 50}
	byType := map[string]struct {
		p    any
		want string
	}{
		"InvoiceListParams": {&invoicing.InvoiceListParams{ListParams: lp, Status: invoicing.InvoiceStatusOverdue, ClientID: "c0ffee00-1111-4222-8333-444455556666", FromDate: nov1, ToDate: nov30},
			"client_id=c0ffee00-1111-4222-8333-444455556666&from_date=2026-11-01&page=2&page_size=50&status=overdue&to_date=2026-11-30"},
		"ItemListParams":  {&invoicing.ItemListParams{ItemType: invoicing.ItemTypePurchase}, "item_type=PURCHASE"},
		"QuoteListParams": {&invoicing.QuoteListParams{ListParams: invoicing.ListParams{PageSize: 10}, Status: invoicing.QuoteStatusAccepted, ClientID: "c1", FromDate: nov1}, "client_id=c1&from_date=2026-11-01&page_size=10&status=accepted"},
		"ContactListParams": {&invoicing.ContactListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 10}, Extra: url.Values{"name": {"paper & co"}, "status": {"active", "archived"}, "unused": {}}},
			"name=paper+%26+co&page=2&page_size=10&status=active&status=archived"},
		"BillListParams":    {&invoicing.BillListParams{ListParams: invoicing.ListParams{PageSize: 25}, Status: invoicing.BillStatusApproved, SupplierID: "s1", Extra: url.Values{"from_date": {"2026-11-01"}}}, "from_date=2026-11-01&page_size=25&status=approved&supplier_id=s1"},
		"AccountListParams": {&invoicing.AccountListParams{ListParams: invoicing.ListParams{Page: 1}, Type: invoicing.AccountTypeRevenue, Extra: url.Values{"is_active": {"false"}}}, "is_active=false&page=1&type=revenue"},
		"TaxCodeListParams": {&invoicing.TaxCodeListParams{Region: "AU"}, "region=AU"},
		"BankAccountListParams": {&invoicing.BankAccountListParams{ListParams: invoicing.ListParams{PageSize: 5}, Extra: url.Values{"currency": {"USD"}}},
			"currency=USD&page_size=5"},
		"BankTransactionListParams": {&invoicing.BankTransactionListParams{ListParams: invoicing.ListParams{Page: 1, PageSize: 20}, BankAccountID: "acc-op-1", FromDate: nov1, ToDate: nov30, Extra: url.Values{"status": {"unreconciled"}}},
			"bank_account_id=acc-op-1&from_date=2026-11-01&page=1&page_size=20&status=unreconciled&to_date=2026-11-30"},
		"TrialBalanceParams":  {&invoicing.TrialBalanceParams{AsAt: invoicing.NewDate(2026, time.June, 30)}, "as_at=2026-06-30"},
		"ProfitAndLossParams": {&invoicing.ProfitAndLossParams{FromDate: nov1, ToDate: nov30, Extra: url.Values{"basis": {"cash"}}}, "basis=cash&from_date=2026-11-01&to_date=2026-11-30"},
		"BalanceSheetParams":  {&invoicing.BalanceSheetParams{AsAt: nov30, Extra: url.Values{"periods": {"3"}}}, "as_at=2026-11-30&periods=3"},
	}
	seen := map[string]bool{}
	for _, e := range qEndpoints() {
		if e.list {
			continue
		}
		name := reflect.TypeOf(e.params).Elem().Name()
		tc, ok := byType[name]
		require.True(t, ok, "no case for %s", name)
		seen[name] = true
		got, err := qSend(t, e, tc.p)
		require.NoError(t, err, e.name())
		assert.Equal(t, tc.want, got, e.name())
	}
	assert.Len(t, seen, len(byType))
}

// Zero fields are not sent: an empty params value, or none, sends no query
// (a List sends its paging only).
func TestQueryZeroFieldsNotSent(t *testing.T) {
	for _, e := range qEndpoints() {
		t.Run(e.name(), func(t *testing.T) {
			want := ""
			if e.list {
				want = "page=1&page_size=100"
			}
			got, err := qSend(t, e, e.params) // a zero value
			require.NoError(t, err)
			assert.Equal(t, want, got)
			nilParams := reflect.Zero(reflect.TypeOf(e.params)).Interface()
			got, err = qSend(t, e, nilParams)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// qWith returns a new params value of e's type with the named field set to
// v (ListParams fields through "Page" and "PageSize").
func qWith(e qEndpoint, fields map[string]any) any {
	v := reflect.New(reflect.TypeOf(e.params).Elem())
	for name, x := range fields {
		f := v.Elem().FieldByName(name)
		if !f.IsValid() {
			return nil
		}
		f.Set(reflect.ValueOf(x))
	}
	return v.Interface()
}

// qHas reports whether e's params type has the named field.
func qHas(e qEndpoint, name string) bool {
	_, ok := reflect.TypeOf(e.params).Elem().FieldByName(name)
	return ok
}

// qParamError asserts that err is a *ParamError for field.
func qParamError(t *testing.T, err error, field string, msgAndArgs ...any) {
	t.Helper()
	var pe *invoicing.ParamError
	if assert.ErrorAs(t, err, &pe, msgAndArgs...) {
		assert.Equal(t, field, pe.Field, msgAndArgs...)
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams, msgAndArgs...)
		assert.Contains(t, err.Error(), field, msgAndArgs...)
	}
}

func TestQueryExtra(t *testing.T) {
	for _, e := range qEndpoints() {
		if !qHas(e, "Extra") {
			continue
		}
		t.Run(e.name(), func(t *testing.T) {
			// Merged with the typed fields, every value, in name order;
			// names with no value are skipped; the caller's Extra is not
			// modified.
			extra := url.Values{"z": {"2", "1"}, "a b": {"x&y"}, "empty": {}}
			p := qWith(e, map[string]any{"Extra": extra})
			got, err := qSend(t, e, p)
			require.NoError(t, err)
			want := "a+b=x%26y&z=2&z=1"
			if e.list {
				want = "a+b=x%26y&page=1&page_size=100&z=2&z=1"
			}
			assert.Equal(t, want, got)
			assert.Equal(t, url.Values{"z": {"2", "1"}, "a b": {"x&y"}, "empty": {}}, extra)

			_, err = qSend(t, e, qWith(e, map[string]any{"Extra": url.Values{"": {"x"}}}))
			qParamError(t, err, "Extra")

			// A typed field's name: an error when the field is set, sent
			// when it is not.
			p, filled := qFill(e)
			for name := range filled {
				if name == "x_extra" || name == "page" || name == "page_size" {
					continue
				}
				v := reflect.ValueOf(p).Elem()
				v.FieldByName("Extra").Set(reflect.ValueOf(url.Values{name: {"from-extra"}}))
				_, err := qSend(t, e, p)
				qParamError(t, err, name, name)

				alone := qWith(e, map[string]any{"Extra": url.Values{name: {"from-extra", "again"}}})
				got, err := qSend(t, e, alone)
				require.NoError(t, err, name)
				assert.Contains(t, got, url.Values{name: {"from-extra", "again"}}.Encode(), name)
			}

			// page and page_size belong to ListParams.
			if qHas(e, "ListParams") {
				for _, name := range []string{"page", "page_size"} {
					_, err := qSend(t, e, qWith(e, map[string]any{"Extra": url.Values{name: {"3"}}}))
					qParamError(t, err, name)
				}
			}
		})
	}
}

func TestQueryDateRange(t *testing.T) {
	d := invoicing.NewDate(2026, time.May, 2)
	n := 0
	for _, e := range qEndpoints() {
		if !qHas(e, "FromDate") || !qHas(e, "ToDate") {
			continue
		}
		n++
		t.Run(e.name(), func(t *testing.T) {
			_, err := qSend(t, e, qWith(e, map[string]any{"FromDate": d, "ToDate": d.AddDays(-1)}))
			qParamError(t, err, "from_date")
			assert.Contains(t, err.Error(), "after to_date")
			// Across a year, where the day of the month alone would say otherwise.
			_, err = qSend(t, e, qWith(e, map[string]any{"FromDate": invoicing.NewDate(2026, 1, 1), "ToDate": invoicing.NewDate(2025, 12, 31)}))
			qParamError(t, err, "from_date")

			for _, ok := range []map[string]any{
				{"FromDate": d, "ToDate": d},
				{"FromDate": d, "ToDate": d.AddDays(1)},
				{"FromDate": invoicing.NewDate(2025, 12, 31), "ToDate": invoicing.NewDate(2026, 1, 1)},
				{"FromDate": d},
				{"ToDate": d},
			} {
				_, err := qSend(t, e, qWith(e, ok))
				assert.NoError(t, err, "%v", ok)
			}
		})
	}
	assert.Equal(t, 6, n, "invoices (ListPage and List), quotes, bank transactions (ListPage and List), profit and loss")
}

func TestQueryPaging(t *testing.T) {
	for _, e := range qEndpoints() {
		if !qHas(e, "ListParams") {
			continue
		}
		t.Run(e.name(), func(t *testing.T) {
			for _, tc := range []struct {
				lp    invoicing.ListParams
				field string
			}{
				{invoicing.ListParams{Page: -1}, "page"},
				{invoicing.ListParams{PageSize: -1}, "page_size"},
				{invoicing.ListParams{PageSize: 101}, "page_size"},
				{invoicing.ListParams{PageSize: 1000, Page: 1}, "page_size"},
			} {
				_, err := qSend(t, e, qWith(e, map[string]any{"ListParams": tc.lp}))
				qParamError(t, err, tc.field, "%+v", tc.lp)
			}
			for _, lp := range []invoicing.ListParams{{PageSize: 1}, {PageSize: 100}, {Page: 1}, {Page: 9999}} {
				got, err := qSend(t, e, qWith(e, map[string]any{"ListParams": lp}))
				require.NoError(t, err, "%+v", lp)
				if lp.PageSize != 0 {
					assert.Contains(t, got, "page_size="+strconv.Itoa(lp.PageSize))
				}
				if lp.Page != 0 {
					assert.Contains(t, got, "page="+strconv.Itoa(lp.Page))
				}
			}
		})
	}
}

// WithQuery is merged with the params the same way: a parameter the call
// already sets, page and page_size of a list included, is a *ParamError.
func TestQueryWithQueryOption(t *testing.T) {
	for _, e := range qEndpoints() {
		t.Run(e.name(), func(t *testing.T) {
			got, err := qSend(t, e, e.params, invoicing.WithQuery("x", "1"), invoicing.WithQuery("x", "2"))
			require.NoError(t, err)
			assert.Contains(t, got, "x=1&x=2")

			p, filled := qFill(e)
			for name := range filled {
				_, err := qSend(t, e, p, invoicing.WithQuery(name, "again"))
				qParamError(t, err, name, name)
			}
			if qHas(e, "ListParams") {
				for _, name := range []string{"page", "page_size"} {
					_, err := qSend(t, e, e.params, invoicing.WithQuery(name, "3"))
					qParamError(t, err, name, "%s through WithQuery", name)
				}
			}
		})
	}
	// page means nothing to Get: WithQuery may send it.
	c, api := newMock(t, always(200, fixture(t, "invoice.json")))
	_, err := c.Invoices.Get(context.Background(), "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", invoicing.WithQuery("page", "2"))
	require.NoError(t, err)
	assert.Equal(t, "page=2", api.last(t).Query)
}

// Every exported field of every list and report params type is a query
// parameter (tagged `query`), ListParams or Extra: a new filter cannot be
// left unsent. And every such type of the package is in qEndpoints.
func TestQueryEveryParamsFieldIsTagged(t *testing.T) {
	covered := map[string]bool{}
	for _, e := range qEndpoints() {
		typ := reflect.TypeOf(e.params).Elem()
		covered[typ.Name()] = true
		names := map[string]bool{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch {
			case !f.IsExported():
				t.Errorf("%s.%s is unexported: query cannot read it", typ.Name(), f.Name)
			case f.Anonymous:
				assert.Equal(t, reflect.TypeFor[invoicing.ListParams](), f.Type, "%s embeds only ListParams", typ.Name())
			case f.Name == "Extra":
				assert.Equal(t, reflect.TypeFor[url.Values](), f.Type, "%s.Extra", typ.Name())
			default:
				name := f.Tag.Get("query")
				if assert.NotEmpty(t, name, "%s.%s has no query tag", typ.Name(), f.Name) {
					assert.False(t, names[name], "%s: two fields send %s", typ.Name(), name)
					names[name] = true
					assert.NotContains(t, []string{"page", "page_size"}, name)
				}
				ok := f.Type == reflect.TypeFor[invoicing.Date]() || f.Type.Kind() == reflect.String || f.Type.Kind() == reflect.Int
				assert.True(t, ok, "%s.%s: query sends strings, dates and ints only, not %s", typ.Name(), f.Name, f.Type)
			}
		}
	}

	// The package's query params types: every struct type that embeds
	// ListParams or has a field tagged `query`.
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fd := range st.Fields.List {
				id, embedded := fd.Type.(*ast.Ident)
				if (len(fd.Names) == 0 && embedded && id.Name == "ListParams") || (fd.Tag != nil && strings.Contains(fd.Tag.Value, `query:"`)) {
					found = append(found, ts.Name.Name)
					break
				}
			}
			return false
		})
	}
	slices.Sort(found)
	require.NotEmpty(t, found)
	for _, name := range found {
		assert.True(t, covered[name], "%s sends a query but is not tested here: add it to qEndpoints", name)
	}
	assert.Len(t, covered, len(found))
}
