package invoicing_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestServicesNotFoundWithDetail(t *testing.T) {
	for _, sc := range recordCalls() {
		t.Run(sc.name, func(t *testing.T) {
			c, api := newMock(t, always(404, `{"detail":"Resource not found"}`))
			err := sc.call(context.Background(), c)
			apiErr := apiError(t, err)
			assert.Equal(t, 404, apiErr.StatusCode)
			assert.Equal(t, "Resource not found", apiErr.Detail)
			assert.ErrorIs(t, err, invoicing.ErrNotFound)
			assert.Equal(t, api.last(t).Path, apiErr.Path)
			assert.Len(t, api.requests(), 1, "4xx is never retried")
		})
	}
}

func TestServicesValidationErrorWithArrayDetail(t *testing.T) {
	for _, sc := range recordCalls() {
		t.Run(sc.name, func(t *testing.T) {
			c, _ := newMock(t, always(422, fixture(t, "resources_error_422.json")))
			err := sc.call(context.Background(), c)
			apiErr := apiError(t, err)
			assert.ErrorIs(t, err, invoicing.ErrValidation)
			require.Len(t, apiErr.Problems, 2)
			assert.Equal(t, []string{"body", "line_items", "0", "account_id"}, apiErr.Problems[1].Loc)
			assert.Equal(t, "unknown account", apiErr.Problems[1].Msg)
		})
	}
}

// A 5xx is retried on reads, and on creates only where repeating is safe.
func TestServicesServerErrorRetriedOnlyWhenSafe(t *testing.T) {
	for _, sc := range recordCalls() {
		t.Run(sc.name, func(t *testing.T) {
			c, api := newMock(t, always(500, fixture(t, "resources_error_500.html"), "Content-Type", "text/html"), invoicing.WithMaxRetries(2))
			err := sc.call(context.Background(), c)
			apiErr := apiError(t, err)
			assert.ErrorIs(t, err, invoicing.ErrServer)
			assert.Equal(t, 500, apiErr.StatusCode)
			assert.Equal(t, "Internal Server Error", apiErr.Detail)
			assert.Contains(t, string(apiErr.Body), "<h1>Internal Server Error</h1>")
			if sc.create {
				assert.Len(t, api.requests(), 1, "a create is not repeated")
			} else {
				assert.Len(t, api.requests(), 3, "retried")
			}
		})
	}
}

func TestServicesMalformedJSON(t *testing.T) {
	for name, body := range map[string]string{"truncated": `{"id": "7b1e2c3d`, "html": `<html>ok</html>`, "empty": ``, "trailing": `{} {}`} {
		for _, sc := range recordCalls() {
			t.Run(name+"/"+sc.name, func(t *testing.T) {
				c, api := newMock(t, always(200, body))
				err := sc.call(context.Background(), c)
				require.Error(t, err)
				var apiErr *invoicing.Error
				assert.False(t, errors.As(err, &apiErr), "a decoding failure is not an *Error")
				assert.Contains(t, err.Error(), "decoding "+api.last(t).Method+" "+api.last(t).Path+" response")
				assert.Len(t, api.requests(), 1, "decoding failures are not retried")
			})
		}
	}
}

// A 2xx whose body is not a JSON object (null, an array, a scalar, nothing)
// fails every call that decodes one, list pages and lists included (a
// gateway answering null must not make a list look empty), with an error
// that says what came back. It is not an *Error, and it is not retried.
func TestServicesNonObjectSuccessIsAnError(t *testing.T) {
	shapes := map[string]string{
		`null`:                       "want a JSON object, got null",
		" [ {\"id\": \"x\"},\n 2 ] ": `want a JSON object, got an array: [{"id":"x"},2]`,
		`"paid"`:                     `want a JSON object, got a string: "paid"`,
		`42.50`:                      "want a JSON object, got a number: 42.50",
		`false`:                      "want a JSON object, got a boolean: false",
		"\n ":                        "want a JSON object, got an empty body",
		"nul\x1b[2J":                 `want a JSON object, got invalid JSON: "nul\x1b[2J"`,
	}
	for _, sc := range apiCalls() {
		if sc.raw && sc.name != "Client.Do GET" { // a PDF, or Do with no result
			continue
		}
		for body, want := range shapes {
			t.Run(sc.name+"/"+body, func(t *testing.T) {
				c, api := newMock(t, always(200, body))
				err := sc.call(context.Background(), c)
				require.EqualError(t, err, "invoicing: decoding "+sc.verb+" "+sc.path+" response: "+want)
				assert.False(t, errors.As(err, new(*invoicing.Error)), "a decoding failure is not an *Error")
				assert.Len(t, api.requests(), 1, "not retried")
			})
		}
	}
}

// Every call sends its method and path under the base URL's
// /api/v1/external.
func TestServicesPathsAndMethods(t *testing.T) {
	for _, sc := range recordCalls() {
		var seen []string
		c, _ := newMock(t, func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, r.Method+" "+r.URL.Path)
			reply(w, 200, `{}`)
		})
		require.NoError(t, sc.call(context.Background(), c), sc.name)
		require.Len(t, seen, 1, sc.name)
		assert.Equal(t, sc.verb+" "+prefix+sc.path, seen[0], sc.name)
	}
}

// svcGets are the calls that take an id in their path.
func svcGets(c *invoicing.Client) map[string]func(ctx context.Context, id string) error {
	return map[string]func(ctx context.Context, id string) error{
		"invoices":          func(ctx context.Context, id string) error { return svcErr(c.Invoices.Get(ctx, id)) },
		"invoice pdf":       func(ctx context.Context, id string) error { return svcErr(c.Invoices.PDF(ctx, id)) },
		"items":             func(ctx context.Context, id string) error { return svcErr(c.Items.Get(ctx, id)) },
		"quotes":            func(ctx context.Context, id string) error { return svcErr(c.Quotes.Get(ctx, id)) },
		"quote pdf":         func(ctx context.Context, id string) error { return svcErr(c.Quotes.PDF(ctx, id)) },
		"clients":           func(ctx context.Context, id string) error { return svcErr(c.Clients.Get(ctx, id)) },
		"suppliers":         func(ctx context.Context, id string) error { return svcErr(c.Suppliers.Get(ctx, id)) },
		"bills":             func(ctx context.Context, id string) error { return svcErr(c.Bills.Get(ctx, id)) },
		"accounts":          func(ctx context.Context, id string) error { return svcErr(c.Accounts.Get(ctx, id)) },
		"tax codes":         func(ctx context.Context, id string) error { return svcErr(c.TaxCodes.Get(ctx, id)) },
		"bank transactions": func(ctx context.Context, id string) error { return svcErr(c.BankTransactions.Get(ctx, id)) },
	}
}

// An id that is not a UUID cannot change the path: nothing is sent.
func TestServicesIDsMustBeUUIDs(t *testing.T) {
	c, api := newMock(t, always(200, `{}`))
	for _, id := range []string{"", "123", "../items", idBill + "/pdf", idBill + "?x=1", idBill + "#x", "3f2c9a4e%2F8b1d",
		"3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5", "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5fa", "zf2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", " " + idBill} {
		for name, get := range svcGets(c) {
			err := get(context.Background(), id)
			var pe *invoicing.ParamError
			require.ErrorAs(t, err, &pe, "%s %q", name, id)
			assert.Equal(t, "id", pe.Field)
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			assert.Contains(t, err.Error(), strconv.Quote(id))
		}
	}
	assert.Empty(t, api.requests(), "nothing may be sent for an invalid id")
}

// The other UUID forms are sent in canonical form; the canonical one as
// given.
func TestServicesCanonicalUUIDs(t *testing.T) {
	for _, form := range []string{
		"{9C8B7A6D-5E4F-4A3B-9C2D-1E0F9A8B7C6D}",
		"{9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d}",
		"urn:uuid:9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
		"9c8b7a6d5e4f4a3b9c2d1e0f9a8b7c6d",
		"9C8B7A6D5E4F4A3B9C2D1E0F9A8B7C6D",
	} {
		c, api := newMock(t, always(200, `{}`))
		for name, get := range svcGets(c) {
			if strings.HasSuffix(name, "pdf") {
				continue
			}
			require.NoError(t, get(context.Background(), form), "%s %s", name, form)
			assert.Equal(t, "/"+strings.ReplaceAll(name, " ", "-")+"/"+idBill, api.last(t).Path, "%s %s", name, form)
		}
	}
	c, api := newMock(t, always(200, `{}`))
	_, err := c.Bills.Get(context.Background(), strings.ToUpper(idBill))
	require.NoError(t, err)
	assert.Equal(t, "/bills/"+strings.ToUpper(idBill), api.last(t).Path, "a 36-character UUID is sent as given")
}

// Each service's Create refuses a nil params, before sending.
func TestServicesCreateNilParams(t *testing.T) {
	c, api := newMock(t, always(201, `{}`))
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{svcErr(c.Invoices.Create(ctx, nil)), "Invoices.Create needs a *InvoiceCreateParams with ClientID and at least one of LineItems, got nil"},
		{svcErr(c.Quotes.Create(ctx, nil)), "Quotes.Create needs a *QuoteCreateParams with ClientID and at least one of LineItems, got nil"},
		{svcErr(c.Items.Create(ctx, nil)),
			"Items.Create needs a *ItemCreateParams with Name, AccountID, TaxCodeID and (for SALES and PURCHASE items) UnitPrice, got nil"},
		{svcErr(c.Clients.Create(ctx, nil)), "Clients.Create needs a *ContactCreateParams (an empty one is allowed), got nil"},
		{svcErr(c.Suppliers.Create(ctx, nil)), "Suppliers.Create needs a *ContactCreateParams (an empty one is allowed), got nil"},
		{svcErr(c.Bills.Create(ctx, nil)), "Bills.Create needs a *BillCreateParams (an empty one is allowed), got nil"},
	} {
		var pe *invoicing.ParamError
		require.ErrorAs(t, tc.err, &pe, tc.want)
		assert.Equal(t, "params", pe.Field, tc.want)
		assert.ErrorIs(t, tc.err, invoicing.ErrInvalidParams, tc.want)
		assert.EqualError(t, tc.err, "invoicing: invalid params: "+tc.want)
	}
	assert.Empty(t, api.requests())
}

// svcLenientCase is one outline record type: its fixture (a JSON array of
// records), the fields each record leaves mismatched, and the calls that
// return it.
type svcLenientCase struct {
	name    string
	fixture string
	typ     reflect.Type
	want    [][]string // MismatchedFields of each record of the fixture
	one     map[string]func(context.Context, *invoicing.Client) (any, error)
	lists   map[string]svcLenientList
}

type svcLenientList struct {
	key  string // the resource's list key
	call func(context.Context, *invoicing.Client) ([]any, error)
}

func svcOne[T any](f func(context.Context, *invoicing.Client) (*T, error)) func(context.Context, *invoicing.Client) (any, error) {
	return func(ctx context.Context, c *invoicing.Client) (any, error) {
		v, err := f(ctx, c)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

func svcAll[T any](key string, f func(context.Context, *invoicing.Client) iter.Seq2[*T, error]) svcLenientList {
	return svcLenientList{key, func(ctx context.Context, c *invoicing.Client) ([]any, error) {
		var out []any
		for v, err := range f(ctx, c) {
			if err != nil {
				return out, err
			}
			out = append(out, v)
		}
		return out, nil
	}}
}

func svcPage[T any](key string, f func(context.Context, *invoicing.Client) (*invoicing.Page[T], error)) svcLenientList {
	return svcLenientList{key, func(ctx context.Context, c *invoicing.Client) ([]any, error) {
		p, err := f(ctx, c)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(p.Items))
		for i := range p.Items {
			out[i] = &p.Items[i]
		}
		return out, nil
	}}
}

func svcLenientCases() []svcLenientCase {
	type C = invoicing.Client
	type ctxT = context.Context
	return []svcLenientCase{
		{
			name: "contact", fixture: "lenient_contacts.json", typ: reflect.TypeFor[invoicing.Contact](),
			want: [][]string{nil, {"id"}, {"phone"}, {"updated_at"}, {"created_at"}, {"name", "email", "updated_at"}, nil},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"Clients.Get":   svcOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) { return c.Clients.Get(ctx, idClient) }),
				"Suppliers.Get": svcOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) { return c.Suppliers.Get(ctx, idSupplier) }),
				"Clients.Create": svcOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) {
					return c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "A"})
				}),
				"Suppliers.Create": svcOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) {
					return c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "A"})
				}),
			},
			lists: map[string]svcLenientList{
				"Clients.List": svcAll("clients", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Contact, error] { return c.Clients.List(ctx, nil) }),
				"Clients.ListPage": svcPage("clients", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Contact], error) {
					return c.Clients.ListPage(ctx, nil)
				}),
				"Suppliers.List": svcAll("suppliers", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Contact, error] { return c.Suppliers.List(ctx, nil) }),
				"Suppliers.ListPage": svcPage("suppliers", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Contact], error) {
					return c.Suppliers.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "bill", fixture: "lenient_bills.json", typ: reflect.TypeFor[invoicing.Bill](),
			want: [][]string{nil, {"issue_date"}, {"status", "total"}, {"line_items"}, {"line_items"}, nil, {"id", "updated_at"}, nil},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"Bills.Get": svcOne(func(ctx ctxT, c *C) (*invoicing.Bill, error) { return c.Bills.Get(ctx, idBill) }),
				"Bills.Create": svcOne(func(ctx ctxT, c *C) (*invoicing.Bill, error) {
					return c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: idSupplier})
				}),
			},
			lists: map[string]svcLenientList{
				"Bills.List": svcAll("bills", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Bill, error] { return c.Bills.List(ctx, nil) }),
				"Bills.ListPage": svcPage("bills", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Bill], error) {
					return c.Bills.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "account", fixture: "lenient_accounts.json", typ: reflect.TypeFor[invoicing.Account](),
			want: [][]string{nil, {"code"}, {"is_active"}, {"code", "type", "is_active"}, nil, {"code"}},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"Accounts.Get": svcOne(func(ctx ctxT, c *C) (*invoicing.Account, error) { return c.Accounts.Get(ctx, idAccount) }),
			},
			lists: map[string]svcLenientList{
				"Accounts.List": svcAll("accounts", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Account, error] { return c.Accounts.List(ctx, nil) }),
				"Accounts.ListPage": svcPage("accounts", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Account], error) {
					return c.Accounts.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "tax code", fixture: "lenient_tax_codes.json", typ: reflect.TypeFor[invoicing.TaxCode](),
			want: [][]string{nil, {"rate"}, nil, {"rate", "region"}, {"id", "code"}},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"TaxCodes.Get": svcOne(func(ctx ctxT, c *C) (*invoicing.TaxCode, error) { return c.TaxCodes.Get(ctx, idTaxCode) }),
			},
			lists: map[string]svcLenientList{
				"TaxCodes.List": svcAll("tax_codes", func(ctx ctxT, c *C) iter.Seq2[*invoicing.TaxCode, error] { return c.TaxCodes.List(ctx, nil) }),
				"TaxCodes.ListPage": svcPage("tax_codes", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.TaxCode], error) {
					return c.TaxCodes.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "report", fixture: "lenient_reports.json", typ: reflect.TypeFor[invoicing.Report](),
			want: [][]string{nil, {"lines"}, {"as_at"}, nil, {"from_date", "currency"}, {"report"}},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"Reports.TrialBalance":  svcOne(func(ctx ctxT, c *C) (*invoicing.Report, error) { return c.Reports.TrialBalance(ctx, nil) }),
				"Reports.ProfitAndLoss": svcOne(func(ctx ctxT, c *C) (*invoicing.Report, error) { return c.Reports.ProfitAndLoss(ctx, nil) }),
				"Reports.BalanceSheet":  svcOne(func(ctx ctxT, c *C) (*invoicing.Report, error) { return c.Reports.BalanceSheet(ctx, nil) }),
			},
		},
		{
			name: "bank account", fixture: "lenient_bank_accounts.json", typ: reflect.TypeFor[invoicing.BankAccount](),
			want: [][]string{nil, {"balance"}, {"id", "account_number"}, {"balance"}},
			lists: map[string]svcLenientList{
				"BankAccounts.List": svcAll("bank_accounts", func(ctx ctxT, c *C) iter.Seq2[*invoicing.BankAccount, error] {
					return c.BankAccounts.List(ctx, nil)
				}),
				"BankAccounts.ListPage": svcPage("bank_accounts", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.BankAccount], error) {
					return c.BankAccounts.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "bank transaction", fixture: "lenient_bank_transactions.json", typ: reflect.TypeFor[invoicing.BankTransaction](),
			want: [][]string{nil, {"date"}, {"amount"}, {"id", "status"}, nil},
			one: map[string]func(context.Context, *invoicing.Client) (any, error){
				"BankTransactions.Get": svcOne(func(ctx ctxT, c *C) (*invoicing.BankTransaction, error) {
					return c.BankTransactions.Get(ctx, idBankTx)
				}),
			},
			lists: map[string]svcLenientList{
				"BankTransactions.List": svcAll("bank_transactions", func(ctx ctxT, c *C) iter.Seq2[*invoicing.BankTransaction, error] {
					return c.BankTransactions.List(ctx, nil)
				}),
				"BankTransactions.ListPage": svcPage("bank_transactions", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.BankTransaction], error) {
					return c.BankTransactions.ListPage(ctx, nil)
				}),
			},
		},
	}
}

// svcLenientRecords returns the records of a lenient fixture, each exactly
// as written there.
func svcLenientRecords(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	var recs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(fixture(t, name)), &recs))
	return recs
}

// svcPageBody is a single list page holding recs under key.
func svcPageBody(key string, recs []json.RawMessage) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = string(r)
	}
	return `{"` + key + `": [` + strings.Join(parts, ", ") + `], "total": ` + strconv.Itoa(len(recs)) +
		`, "page": 1, "page_size": 100, "has_more": false}`
}

func TestServicesLenientFixturesMatchTheTable(t *testing.T) {
	for _, tc := range svcLenientCases() {
		recs := svcLenientRecords(t, tc.fixture)
		require.Len(t, tc.want, len(recs), tc.name)
		odd := 0
		for _, w := range tc.want {
			if w != nil {
				odd++
			}
		}
		assert.GreaterOrEqual(t, odd, 2, "%s: every type has several odd records", tc.name)
		assert.Nil(t, tc.want[0], "%s: the first record fits", tc.name)
	}
}

// svcCheckLenient checks got, decoded from rec by a call: it names exactly
// its odd fields, leaves them zero (their value kept in Extra), decodes the
// others as if the odd members were absent, and encodes back to rec.
func svcCheckLenient(t *testing.T, tc svcLenientCase, rec json.RawMessage, want []string, got any) {
	t.Helper()
	assert.Equal(t, want, got.(jsLenient).MismatchedFields())
	out, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(rec), string(out), "the record encodes back to what was sent")
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec, &members))
	extra := reflect.ValueOf(got).Elem().FieldByName("Extra").Interface().(invoicing.Extra)
	for _, name := range want {
		var raw json.RawMessage
		require.NoError(t, extra.Get(name, &raw))
		assert.JSONEq(t, string(members[name]), string(raw), "the value of %q is kept in Extra", name)
		field := reflect.ValueOf(got).Elem().FieldByName(jsGoName(tc.typ, name))
		assert.True(t, field.IsZero(), "mismatched field %q is left zero", name)
		delete(members, name)
	}
	clean, err := json.Marshal(members)
	require.NoError(t, err)
	fits, err := jsDecode(tc.typ, string(clean))
	require.NoError(t, err)
	require.Nil(t, fits.(jsLenient).MismatchedFields(), "without its odd members the record fits: %s", clean)
	typed := jsTyped(got)
	for _, name := range want {
		delete(typed, jsGoName(tc.typ, name)) // zero: checked above
	}
	wantTyped := jsTyped(fits)
	for _, name := range want {
		delete(wantTyped, jsGoName(tc.typ, name))
	}
	assert.Equal(t, wantTyped, typed, "the fields that fit decode as usual")
}

// Each record of each lenient fixture, served alone to every call that
// returns one record: none fails.
func TestServicesLenientRecordThroughEveryCall(t *testing.T) {
	for _, tc := range svcLenientCases() {
		recs := svcLenientRecords(t, tc.fixture)
		for call, get := range tc.one {
			for i, rec := range recs {
				t.Run(tc.name+"/"+call+"/record"+strconv.Itoa(i), func(t *testing.T) {
					c, api := newMock(t, always(200, string(rec)))
					got, err := get(context.Background(), c)
					require.NoError(t, err)
					assert.Len(t, api.requests(), 1)
					svcCheckLenient(t, tc, rec, tc.want[i], got)
				})
			}
		}
	}
}

// Each fixture listed as one page: every record is yielded, in order, with
// its own mismatches, whatever the odd records among them.
func TestServicesLenientListYieldsEveryRecord(t *testing.T) {
	for _, tc := range svcLenientCases() {
		recs := svcLenientRecords(t, tc.fixture)
		for call, list := range tc.lists {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				c, api := newMock(t, always(200, svcPageBody(list.key, recs)))
				got, err := list.call(context.Background(), c)
				require.NoError(t, err)
				assert.Len(t, api.requests(), 1)
				require.Len(t, got, len(recs))
				for i, rec := range recs {
					svcCheckLenient(t, tc, rec, tc.want[i], got[i])
				}
			})
			// A record that is not an object fails the page, naming it.
			t.Run(tc.name+"/"+call+"/not an object", func(t *testing.T) {
				c, api := newMock(t, always(200, svcPageBody(list.key, []json.RawMessage{recs[0], json.RawMessage(`"oops"`)})))
				_, err := list.call(context.Background(), c)
				require.Error(t, err)
				assert.Contains(t, err.Error(), list.key+"[1]")
				assert.Contains(t, err.Error(), "a record must be a JSON object, got a string")
				assert.Len(t, api.requests(), 1, "not retried")
			})
		}
	}
}

// A body whose records all have a numeric id (and whose report lines are a
// number), wherever a call looks for them, decodes on every call of the
// outline services; the documented ones fail.
func TestServicesLenientWrongTypesThroughEveryCall(t *testing.T) {
	const wrongTypes = `{"id": 12, "items": [{"id": 12}], "clients": [{"id": 12}], "suppliers": [{"id": 12}],
		"bills": [{"id": 12}], "accounts": [{"id": 12}], "tax_codes": [{"id": 12}], "invoices": [{"id": 12}], "quotes": [{"id": 12}],
		"bank_accounts": [{"id": 12}], "bank_transactions": [{"id": 12}], "lines": 5}`
	for _, sc := range recordCalls() {
		t.Run(sc.name, func(t *testing.T) {
			c, _ := newMock(t, always(200, wrongTypes))
			err := sc.call(context.Background(), c)
			if strings.HasPrefix(sc.name, "Invoices.") || strings.HasPrefix(sc.name, "Items.") || strings.HasPrefix(sc.name, "Quotes.") {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "id: want a string, got a number")
				return
			}
			assert.NoError(t, err)
		})
	}
}

// Documented records stay strict through every call: a value of another
// type fails the call, alone or in a list, and the error names the field.
func TestServicesDocumentedRecordsStayStrict(t *testing.T) {
	ctx := context.Background()
	inv, item, quote := fixture(t, "invoice.json"), fixture(t, "item.json"), fixture(t, "quote.json")
	with := func(body string, line int, key, value string) string {
		ms := jsParse(t, body)
		if line < 0 {
			return jsJoin(jsSet(ms, key, value))
		}
		lines, _ := jsGet(ms, "line_items")
		els := jsElements(t, lines)
		els[line] = jsJoin(jsSet(jsParse(t, els[line]), key, value))
		return jsJoin(jsSet(ms, "line_items", "["+strings.Join(els, ",")+"]"))
	}
	getInvoice := func(c *invoicing.Client) error { return svcErr(c.Invoices.Get(ctx, idInvoice)) }
	createInvoice := func(c *invoicing.Client) error { return svcErr(c.Invoices.Create(ctx, svcValidInvoice())) }
	getItem := func(c *invoicing.Client) error { return svcErr(c.Items.Get(ctx, idItem)) }
	createItem := func(c *invoicing.Client) error { return svcErr(c.Items.Create(ctx, svcValidItem())) }
	getQuote := func(c *invoicing.Client) error { return svcErr(c.Quotes.Get(ctx, idQuote)) }
	createQuote := func(c *invoicing.Client) error { return svcErr(c.Quotes.Create(ctx, svcValidQuote())) }
	for _, tc := range []struct {
		name, body, field string
		call              func(*invoicing.Client) error
	}{
		{"invoice id 7", with(inv, -1, "id", `7`), "id", getInvoice},
		{"invoice total as text", with(inv, -1, "total", `"1,357.95"`), "total", getInvoice},
		{"invoice datetime issue date", with(inv, -1, "issue_date", `"2026-11-01T00:00:00Z"`), "issue_date", getInvoice},
		{"invoice updated_at empty", with(inv, -1, "updated_at", `""`), "updated_at", createInvoice},
		{"invoice line quantity as text", with(inv, 0, "quantity", `"two"`), "line_items[0].quantity", getInvoice},
		{"invoice line unit price", with(inv, 1, "unit_price", `{"value": 1}`), "line_items[1].unit_price", createInvoice},
		{"invoice line items as object", with(inv, -1, "line_items", `{}`), "line_items", getInvoice},
		{"item is_active 1", with(item, -1, "is_active", `1`), "is_active", getItem},
		{"item unit price as text", with(item, -1, "unit_price", `"10%"`), "unit_price", createItem},
		{"quote valid_until datetime", with(quote, -1, "valid_until", `"2026-12-03T00:00:00Z"`), "valid_until", getQuote},
		{"quote line amount as object", with(quote, 0, "amount", `{"value": 1}`), "line_items[0].amount", createQuote},
		{"invoice list with one odd record", `{"invoices": [` + inv + `,` + with(inv, -1, "total", `"x"`) + `]}`, "invoices[1].total", func(c *invoicing.Client) error {
			return svcListErr(c.Invoices.List(ctx, nil))
		}},
		{"quote page with an odd line", `{"items": [` + quote + `,` + with(quote, 1, "tax_amount", `true`) + `]}`, "items[1].line_items[1].tax_amount", func(c *invoicing.Client) error {
			return svcErr(c.Quotes.ListPage(ctx, nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newMock(t, always(200, tc.body))
			err := tc.call(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "field "+tc.field)
		})
	}
}
