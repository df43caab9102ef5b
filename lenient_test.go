package invoicing_test

import (
	"context"
	"encoding/json"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// The records of the resources documented only in outline decode leniently:
// a typed field whose JSON value does not fit is left zero and named by
// MismatchedFields, its value is kept in Extra, the record encodes back to
// its complete JSON, and the call goes on. The lenient_*.json fixtures hold, per record type, a
// record that fits and records with each kind of mismatch.

// lenientRecord is what every outline-documented record offers.
type lenientRecord interface {
	MarshalJSON() ([]byte, error)
	Has(name string) bool
	MismatchedFields() []string
}

// extraOf returns the Extra field of the record r points to.
func extraOf(r any) invoicing.Extra {
	return reflect.ValueOf(r).Elem().FieldByName("Extra").Interface().(invoicing.Extra)
}

// encoded returns the record encoded as JSON.
func encoded(t *testing.T, r lenientRecord) string {
	t.Helper()
	b, err := r.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

// lenientPtr is *T for a record type T.
type lenientPtr[T any] interface {
	*T
	lenientRecord
}

type (
	lenientOneCall  func(context.Context, *invoicing.Client) (lenientRecord, error)
	lenientListCall struct {
		key  string // the resource's list key
		call func(context.Context, *invoicing.Client) ([]lenientRecord, error)
	}
)

func lenientOne[T any, P lenientPtr[T]](f func(context.Context, *invoicing.Client) (*T, error)) lenientOneCall {
	return func(ctx context.Context, c *invoicing.Client) (lenientRecord, error) {
		v, err := f(ctx, c)
		if err != nil {
			return nil, err
		}
		return P(v), nil
	}
}

func lenientAll[T any, P lenientPtr[T]](key string, f func(context.Context, *invoicing.Client) iter.Seq2[*T, error]) lenientListCall {
	return lenientListCall{key, func(ctx context.Context, c *invoicing.Client) ([]lenientRecord, error) {
		var out []lenientRecord
		for v, err := range f(ctx, c) {
			if err != nil {
				return out, err
			}
			out = append(out, P(v))
		}
		return out, nil
	}}
}

func lenientPage[T any, P lenientPtr[T]](key string, f func(context.Context, *invoicing.Client) (*invoicing.Page[T], error)) lenientListCall {
	return lenientListCall{key, func(ctx context.Context, c *invoicing.Client) ([]lenientRecord, error) {
		p, err := f(ctx, c)
		if err != nil {
			return nil, err
		}
		out := make([]lenientRecord, len(p.Items))
		for i := range p.Items {
			out[i] = P(&p.Items[i])
		}
		return out, nil
	}}
}

// lenientDecode decodes b with json.Unmarshal into a new T.
func lenientDecode[T any, P lenientPtr[T]](b []byte) (lenientRecord, error) {
	v := P(new(T))
	return v, json.Unmarshal(b, v)
}

// lenientCase is one record type: its fixture (a JSON array of records),
// the fields each record leaves mismatched, and the calls that return it.
type lenientCase struct {
	name    string
	fixture string
	want    [][]string // MismatchedFields of each record of the fixture
	decode  func([]byte) (lenientRecord, error)
	one     map[string]lenientOneCall
	lists   map[string]lenientListCall
}

func lenientCases() []lenientCase {
	type C = invoicing.Client
	type ctxT = context.Context
	return []lenientCase{
		{
			name: "contact", fixture: "lenient_contacts.json", decode: lenientDecode[invoicing.Contact],
			want: [][]string{nil, {"id"}, {"phone"}, {"updated_at"}, {"created_at"}, {"name", "email", "updated_at"}, nil},
			one: map[string]lenientOneCall{
				"Clients.Get":   lenientOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) { return c.Clients.Get(ctx, clientID) }),
				"Suppliers.Get": lenientOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) { return c.Suppliers.Get(ctx, supplierID) }),
				"Clients.Create": lenientOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) {
					return c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "A"})
				}),
				"Suppliers.Create": lenientOne(func(ctx ctxT, c *C) (*invoicing.Contact, error) {
					return c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "A"})
				}),
			},
			lists: map[string]lenientListCall{
				"Clients.List": lenientAll("clients", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Contact, error] { return c.Clients.List(ctx, nil) }),
				"Clients.ListPage": lenientPage("clients", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Contact], error) {
					return c.Clients.ListPage(ctx, nil)
				}),
				"Suppliers.List": lenientAll("suppliers", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Contact, error] { return c.Suppliers.List(ctx, nil) }),
			},
		},
		{
			name: "bill", fixture: "lenient_bills.json", decode: lenientDecode[invoicing.Bill],
			want: [][]string{nil, {"issue_date"}, {"status", "total"}, {"line_items"}, {"line_items"}, nil, {"id", "updated_at"}, nil},
			one: map[string]lenientOneCall{
				"Bills.Get": lenientOne(func(ctx ctxT, c *C) (*invoicing.Bill, error) { return c.Bills.Get(ctx, billID) }),
				"Bills.Create": lenientOne(func(ctx ctxT, c *C) (*invoicing.Bill, error) {
					return c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: supplierID})
				}),
			},
			lists: map[string]lenientListCall{
				"Bills.List": lenientAll("bills", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Bill, error] { return c.Bills.List(ctx, nil) }),
				"Bills.ListPage": lenientPage("bills", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Bill], error) {
					return c.Bills.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "account", fixture: "lenient_accounts.json", decode: lenientDecode[invoicing.Account],
			want: [][]string{nil, {"code"}, {"is_active"}, {"code", "type", "is_active"}, nil, {"code"}},
			one: map[string]lenientOneCall{
				"Accounts.Get": lenientOne(func(ctx ctxT, c *C) (*invoicing.Account, error) { return c.Accounts.Get(ctx, accountID) }),
			},
			lists: map[string]lenientListCall{
				"Accounts.List": lenientAll("accounts", func(ctx ctxT, c *C) iter.Seq2[*invoicing.Account, error] { return c.Accounts.List(ctx, nil) }),
				"Accounts.ListPage": lenientPage("accounts", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.Account], error) {
					return c.Accounts.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "tax code", fixture: "lenient_tax_codes.json", decode: lenientDecode[invoicing.TaxCode],
			want: [][]string{nil, {"rate"}, nil, {"rate", "region"}, {"id", "code"}},
			one: map[string]lenientOneCall{
				"TaxCodes.Get": lenientOne(func(ctx ctxT, c *C) (*invoicing.TaxCode, error) { return c.TaxCodes.Get(ctx, taxCodeID) }),
			},
			lists: map[string]lenientListCall{
				"TaxCodes.List": lenientAll("tax_codes", func(ctx ctxT, c *C) iter.Seq2[*invoicing.TaxCode, error] { return c.TaxCodes.List(ctx, nil) }),
				"TaxCodes.ListPage": lenientPage("tax_codes", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.TaxCode], error) {
					return c.TaxCodes.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "report", fixture: "lenient_reports.json", decode: lenientDecode[invoicing.Report],
			want: [][]string{nil, {"lines"}, {"as_at"}, nil, {"from_date", "currency"}, {"report"}},
			one: map[string]lenientOneCall{
				"Reports.TrialBalance": lenientOne(func(ctx ctxT, c *C) (*invoicing.Report, error) { return c.Reports.TrialBalance(ctx, nil) }),
				"Reports.ProfitAndLoss": lenientOne(func(ctx ctxT, c *C) (*invoicing.Report, error) {
					return c.Reports.ProfitAndLoss(ctx, nil)
				}),
				"Reports.BalanceSheet": lenientOne(func(ctx ctxT, c *C) (*invoicing.Report, error) { return c.Reports.BalanceSheet(ctx, nil) }),
			},
		},
		{
			name: "bank account", fixture: "lenient_bank_accounts.json", decode: lenientDecode[invoicing.BankAccount],
			want: [][]string{nil, {"balance"}, {"id", "account_number"}, {"balance"}},
			lists: map[string]lenientListCall{
				"BankAccounts.List": lenientAll("bank_accounts", func(ctx ctxT, c *C) iter.Seq2[*invoicing.BankAccount, error] {
					return c.BankAccounts.List(ctx, nil)
				}),
				"BankAccounts.ListPage": lenientPage("bank_accounts", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.BankAccount], error) {
					return c.BankAccounts.ListPage(ctx, nil)
				}),
			},
		},
		{
			name: "bank transaction", fixture: "lenient_bank_transactions.json", decode: lenientDecode[invoicing.BankTransaction],
			want: [][]string{nil, {"date"}, {"amount"}, {"id", "status"}, nil},
			one: map[string]lenientOneCall{
				"BankTransactions.Get": lenientOne(func(ctx ctxT, c *C) (*invoicing.BankTransaction, error) {
					return c.BankTransactions.Get(ctx, bankTxID)
				}),
			},
			lists: map[string]lenientListCall{
				"BankTransactions.List": lenientAll("bank_transactions", func(ctx ctxT, c *C) iter.Seq2[*invoicing.BankTransaction, error] {
					return c.BankTransactions.List(ctx, nil)
				}),
				"BankTransactions.ListPage": lenientPage("bank_transactions", func(ctx ctxT, c *C) (*invoicing.Page[invoicing.BankTransaction], error) {
					return c.BankTransactions.ListPage(ctx, nil)
				}),
			},
		},
	}
}

// lenientRecords returns the records of a lenient fixture, each exactly as
// written there.
func lenientRecords(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	var recs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(fixture(t, name)), &recs))
	return recs
}

// lenientPageBody is a single list page holding recs under key.
func lenientPageBody(key string, recs []json.RawMessage) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = string(r)
	}
	return `{"` + key + `": [` + strings.Join(parts, ", ") + `], "total": ` + strconv.Itoa(len(recs)) +
		`, "page": 1, "page_size": 100, "has_more": false}`
}

func TestLenientFixturesMatchTheTable(t *testing.T) {
	for _, tc := range lenientCases() {
		recs := lenientRecords(t, tc.fixture)
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

// TestLenientRecordThroughEveryCall serves each record of each fixture
// alone to every call that returns one record: none fails, the record keeps
// its complete JSON, names exactly its odd fields, leaves them zero (their
// value still readable with Get), and decodes every other field as if the
// odd ones were absent.
func TestLenientRecordThroughEveryCall(t *testing.T) {
	for _, tc := range lenientCases() {
		recs := lenientRecords(t, tc.fixture)
		for call, get := range tc.one {
			for i, rec := range recs {
				t.Run(tc.name+"/"+call+"/record"+strconv.Itoa(i), func(t *testing.T) {
					c, api := newTestAPI(t, always(200, string(rec)))
					got, err := get(context.Background(), c)
					require.NoError(t, err)
					assert.Len(t, api.requests(), 1)
					lenientRoundTrip(t, tc, rec, got)
					assert.Equal(t, tc.want[i], got.MismatchedFields())
					lenientCheckFields(t, tc, rec, got)
				})
			}
		}
	}
}

// TestLenientListYieldsEveryRecord lists each fixture as one page: every
// record is yielded, in order, with its complete JSON and its own
// mismatches, whatever the odd records among them.
func TestLenientListYieldsEveryRecord(t *testing.T) {
	for _, tc := range lenientCases() {
		recs := lenientRecords(t, tc.fixture)
		for call, list := range tc.lists {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				c, api := newTestAPI(t, always(200, lenientPageBody(list.key, recs)))
				got, err := list.call(context.Background(), c)
				require.NoError(t, err)
				assert.Len(t, api.requests(), 1)
				require.Len(t, got, len(recs))
				for i, rec := range recs {
					lenientRoundTrip(t, tc, rec, got[i])
					assert.Equal(t, tc.want[i], got[i].MismatchedFields(), "record %d", i)
					lenientCheckFields(t, tc, rec, got[i])
				}
			})
		}
	}
}

// lenientRoundTrip checks that got, decoded from rec, encodes to JSON with
// exactly rec's members, each mismatched one as it was sent, that decodes to
// the same record (money and dates may be written in their usual form: a
// string "10" as 10, a date "" as null).
func lenientRoundTrip(t *testing.T, tc lenientCase, rec json.RawMessage, got lenientRecord) {
	t.Helper()
	out := encoded(t, got)
	var sent, back map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec, &sent))
	require.NoError(t, json.Unmarshal([]byte(out), &back))
	assert.ElementsMatch(t, slices.Collect(maps.Keys(sent)), slices.Collect(maps.Keys(back)), "the same members: %s", out)
	for _, name := range got.MismatchedFields() {
		assert.JSONEq(t, string(sent[name]), string(back[name]), "mismatched %q encodes as sent", name)
	}
	again, err := tc.decode([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, got.MismatchedFields(), again.MismatchedFields())
	assert.Equal(t, lenientTyped(got), lenientTyped(again))
	assert.Equal(t, out, encoded(t, again), "a fixed point")
}

// lenientCheckFields checks the typed fields of got, decoded from rec: each
// mismatched field is zero and its value is in Extra; the others are what
// decoding rec without the mismatched members gives (which fits).
func lenientCheckFields(t *testing.T, tc lenientCase, rec json.RawMessage, got lenientRecord) {
	t.Helper()
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec, &members))
	v := reflect.ValueOf(got).Elem()
	for _, name := range got.MismatchedFields() {
		f, ok := lenientField(v, name)
		require.True(t, ok, "%q is the JSON name of a typed field", name)
		assert.True(t, f.IsZero(), "mismatched field %q is left zero", name)
		var raw json.RawMessage
		require.NoError(t, extraOf(got).Get(name, &raw))
		assert.Equal(t, string(members[name]), string(raw), "the value of %q is kept in Extra", name)
	}
	for _, name := range got.MismatchedFields() {
		delete(members, name)
	}
	clean, err := json.Marshal(members)
	require.NoError(t, err)
	want, err := tc.decode(clean)
	require.NoError(t, err)
	require.Nil(t, want.MismatchedFields(), "without its odd fields the record fits: %s", clean)
	assert.Equal(t, lenientTyped(want), lenientTyped(got), "the fields that fit decode as usual")
}

// lenientField returns the typed field of the record struct v whose JSON
// name is name.
func lenientField(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			continue
		}
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// lenientTyped returns a copy of the record's typed fields: the record with
// what it remembers of its JSON (Extra, and unexported state), nested
// records' included, zeroed.
func lenientTyped(r lenientRecord) any {
	v := reflect.New(reflect.TypeOf(r).Elem()).Elem()
	v.Set(reflect.ValueOf(r).Elem())
	var strip func(v reflect.Value)
	strip = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Field(i)
				switch {
				case v.Type().Field(i).Name == "Extra" || !v.Type().Field(i).IsExported():
					reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem().SetZero()
				case f.CanSet():
					strip(f)
				}
			}
		case reflect.Slice:
			if !v.IsNil() {
				s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(s, v) // a copy: r's own elements stay as they are
				for i := range s.Len() {
					strip(s.Index(i))
				}
				v.Set(s)
			}
		}
	}
	strip(v)
	return v.Interface()
}

// TestLenientNestedRecords: a bill's line and a report's row are lenient
// themselves, so an odd one does not fail the parent (which names nothing);
// line items or rows that are not an array of objects are a mismatch of
// the parent's field.
func TestLenientNestedRecords(t *testing.T) {
	bills := lenientRecords(t, "lenient_bills.json")
	reports := lenientRecords(t, "lenient_reports.json")
	ctx := context.Background()

	t.Run("odd bill line", func(t *testing.T) {
		c, _ := newTestAPI(t, always(200, string(bills[5])))
		b, err := c.Bills.Get(ctx, billID)
		require.NoError(t, err)
		assert.Nil(t, b.MismatchedFields())
		require.Len(t, b.LineItems, 2)
		assert.Nil(t, b.LineItems[0].MismatchedFields())
		assert.True(t, b.LineItems[0].Quantity.Equal(decimal.NewFromInt(10)))
		l := b.LineItems[1]
		assert.Equal(t, []string{"quantity", "account_id"}, l.MismatchedFields())
		assert.True(t, l.Quantity.IsZero())
		assert.Nil(t, l.AccountID)
		assert.Nil(t, l.TaxCodeID, "null is not a mismatch")
		assert.Equal(t, "Folders", l.Description)
		assert.True(t, l.UnitPrice.Equal(decimal.NewFromInt(10)))
		var q string
		require.NoError(t, l.Extra.Get("quantity", &q))
		assert.Equal(t, "two", q)
		var sent struct {
			Lines []json.RawMessage `json:"line_items"`
		}
		require.NoError(t, json.Unmarshal(bills[5], &sent))
		assert.JSONEq(t, string(sent.Lines[1]), string(rawJSON(t, l)), "the line encodes back to its own JSON")
		assert.True(t, b.Total.Equal(decimal.RequireFromString("47.5")))
	})

	for i, what := range map[int]string{3: "line items as an object", 4: "a line that is not an object"} {
		t.Run(what, func(t *testing.T) {
			c, _ := newTestAPI(t, always(200, string(bills[i])))
			b, err := c.Bills.Get(ctx, billID)
			require.NoError(t, err)
			assert.Equal(t, []string{"line_items"}, b.MismatchedFields())
			assert.Nil(t, b.LineItems)
			assert.NotEmpty(t, b.BillNumber)
			var lines json.RawMessage
			require.NoError(t, b.Extra.Get("line_items", &lines))
			assert.NotEmpty(t, lines)
		})
	}

	t.Run("odd report row", func(t *testing.T) {
		c, _ := newTestAPI(t, always(200, string(reports[3])))
		r, err := c.Reports.TrialBalance(ctx, nil)
		require.NoError(t, err)
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
	})

	t.Run("report lines as an object", func(t *testing.T) {
		c, _ := newTestAPI(t, always(200, string(reports[1])))
		r, err := c.Reports.TrialBalance(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"lines"}, r.MismatchedFields())
		assert.Nil(t, r.Lines)
		assert.Equal(t, "trial_balance", r.Name)
		assert.Equal(t, invoicing.NewDate(2026, 6, 30), r.AsAt)
		var byType map[string][]json.RawMessage
		require.NoError(t, r.Extra.Get("lines", &byType))
		assert.Len(t, byType["revenue"], 1)
	})
}

// TestLenientNullIsNotAMismatch: null leaves a field zero, as encoding/json
// does, on the slow path (another field does not fit) as on the fast one.
func TestLenientNullIsNotAMismatch(t *testing.T) {
	for name, body := range map[string]string{
		"fast": `{"id": "a", "code": "200", "name": null, "type": null, "is_active": null}`,
		"slow": `{"id": "a", "code": 200, "name": null, "type": null, "is_active": null}`,
	} {
		var a invoicing.Account
		require.NoError(t, json.Unmarshal([]byte(body), &a), name)
		assert.Equal(t, "a", a.ID, name)
		assert.Empty(t, a.Name, name)
		assert.Nil(t, a.IsActive, name)
		if name == "fast" {
			assert.Nil(t, a.MismatchedFields())
		} else {
			assert.Equal(t, []string{"code"}, a.MismatchedFields())
		}
	}
}

// TestLenientNonObjectRecordIsAnError: a record must be a JSON object, and
// the error says so, alone, in a list, or as a response.
func TestLenientNonObjectRecordIsAnError(t *testing.T) {
	records := map[string]func() any{
		"Contact": func() any { return new(invoicing.Contact) }, "Bill": func() any { return new(invoicing.Bill) },
		"BillLineItem": func() any { return new(invoicing.BillLineItem) }, "Account": func() any { return new(invoicing.Account) },
		"TaxCode": func() any { return new(invoicing.TaxCode) }, "Report": func() any { return new(invoicing.Report) },
		"ReportLine": func() any { return new(invoicing.ReportLine) }, "BankAccount": func() any { return new(invoicing.BankAccount) },
		"BankTransaction": func() any { return new(invoicing.BankTransaction) },
	}
	for name, newRecord := range records {
		for body, kind := range map[string]string{`"SUP-INV-1"`: "a string", `42`: "a number", ` [{"id": "x"}] `: "an array", `true`: "a boolean"} {
			err := json.Unmarshal([]byte(body), newRecord())
			require.Error(t, err, "%s from %s", name, body)
			assert.Contains(t, err.Error(), "must be a JSON object, got "+kind, name)
		}
	}

	ctx := context.Background()
	for _, tc := range lenientCases() {
		good := lenientRecords(t, tc.fixture)[0]
		for call, list := range tc.lists {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				c, api := newTestAPI(t, always(200, lenientPageBody(list.key, []json.RawMessage{good, json.RawMessage(`"oops"`)})))
				_, err := list.call(ctx, c)
				require.Error(t, err)
				assert.Contains(t, err.Error(), list.key+"[1]")
				assert.Contains(t, err.Error(), "must be a JSON object, got a string")
				assert.Len(t, api.requests(), 1, "not retried")
			})
		}
		for call, get := range tc.one {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				c, _ := newTestAPI(t, always(200, `[`+string(good)+`]`))
				_, err := get(ctx, c)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want a JSON object, got an array")
			})
		}
	}
}

// TestLenientWrongTypesThroughEveryCall: a body whose records all have a
// numeric id (and whose report lines are a number), wherever a call looks
// for them, decodes on every call of the outline-documented services.
func TestLenientWrongTypesThroughEveryCall(t *testing.T) {
	const wrongTypes = `{"id": 12, "items": [{"id": 12}], "clients": [{"id": 12}], "suppliers": [{"id": 12}],
		"bills": [{"id": 12}], "accounts": [{"id": 12}], "tax_codes": [{"id": 12}],
		"bank_accounts": [{"id": 12}], "bank_transactions": [{"id": 12}], "lines": 5}`
	for _, rc := range resCalls() {
		t.Run(rc.name, func(t *testing.T) {
			c, _ := newTestAPI(t, always(200, wrongTypes))
			assert.NoError(t, rc.call(context.Background(), c))
		})
	}
	var r invoicing.Report
	require.NoError(t, json.Unmarshal([]byte(wrongTypes), &r))
	assert.Equal(t, []string{"lines"}, r.MismatchedFields())
}

// lenientWith returns the JSON object body with its member key (in a line
// item when line >= 0) set to value.
func lenientWith(t *testing.T, body string, line int, key, value string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	if line >= 0 {
		var lines []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(m["line_items"], &lines))
		lines[line][key] = json.RawMessage(value)
		b, err := json.Marshal(lines)
		require.NoError(t, err)
		m["line_items"] = b
	} else {
		m[key] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// TestLenientDocumentedTypesStayStrict: invoices, items and quotes are
// documented field by field, so a value of another type still fails the
// call, alone or in a list, and names the field.
func TestLenientDocumentedTypesStayStrict(t *testing.T) {
	ctx := context.Background()
	inv, item, quote := fixture(t, "invoice.json"), fixture(t, "item.json"), fixture(t, "quote.json")
	getInvoice := func(c *invoicing.Client) error { return resErrOnly(c.Invoices.Get(ctx, invoiceID)) }
	getItem := func(c *invoicing.Client) error { return resErrOnly(c.Items.Get(ctx, itemID)) }
	getQuote := func(c *invoicing.Client) error { return resErrOnly(c.Quotes.Get(ctx, quoteID)) }
	for _, tc := range []struct {
		name, body, field string
		call              func(*invoicing.Client) error
	}{
		{"invoice id 7", lenientWith(t, inv, -1, "id", `7`), "id", getInvoice},
		{"invoice total as text", lenientWith(t, inv, -1, "total", `"1,357.95"`), "total", getInvoice},
		{"invoice datetime issue date", lenientWith(t, inv, -1, "issue_date", `"2026-11-01T00:00:00Z"`), "issue_date", getInvoice},
		{"invoice updated_at empty", lenientWith(t, inv, -1, "updated_at", `""`), "updated_at", getInvoice},
		{"invoice line quantity as text", lenientWith(t, inv, 0, "quantity", `"two"`), "line_items[0].quantity", getInvoice},
		{"invoice line items as object", lenientWith(t, inv, -1, "line_items", `{}`), "line_items", getInvoice},
		{"item is_active 1", lenientWith(t, item, -1, "is_active", `1`), "is_active", getItem},
		{"item unit price as text", lenientWith(t, item, -1, "unit_price", `"10%"`), "unit_price", getItem},
		{"quote valid_until datetime", lenientWith(t, quote, -1, "valid_until", `"2026-12-03T00:00:00Z"`), "valid_until", getQuote},
		{"quote line amount as object", lenientWith(t, quote, 0, "amount", `{"value": 1}`), "line_items[0].amount", getQuote},
		{"invoice list with one odd record", `{"invoices": [` + inv + `,` + lenientWith(t, inv, -1, "total", `"x"`) + `]}`, "invoices[1].total", func(c *invoicing.Client) error {
			return resFirstErr(c.Invoices.List(ctx, nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestAPI(t, always(200, tc.body))
			err := tc.call(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "field "+tc.field)
		})
	}
}

// TestLenientFittingRecordCostsNoMore: a record whose fields all fit,
// decoded member by member in one pass, allocates what the same JSON decoded
// into a plain struct of the same fields allocates with encoding/json, plus
// at most three (its decoder and the state of its pass).
func TestLenientFittingRecordCostsNoMore(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so allocations are not counted under -race")
	}
	body := []byte(fixture(t, "contacts_client.json"))
	plain := testing.AllocsPerRun(500, func() {
		var v struct {
			ID        string     `json:"id"`
			Name      string     `json:"name"`
			Email     string     `json:"email"`
			Phone     string     `json:"phone"`
			CreatedAt time.Time  `json:"created_at"`
			UpdatedAt *time.Time `json:"updated_at"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
	})
	contact := testing.AllocsPerRun(500, func() {
		var v invoicing.Contact
		if err := json.Unmarshal(body, &v); err != nil || v.MismatchedFields() != nil {
			t.Fatal(err, v.MismatchedFields())
		}
	})
	t.Logf("allocations: plain struct %.0f, Contact %.0f", plain, contact)
	assert.LessOrEqual(t, contact, plain+3)
}

// BenchmarkDecodeContacts100 decodes a page of 100 contacts that fit (the
// common case: one decode each), and a page where one of them does not
// (that one alone is decoded again, field by field).
func BenchmarkDecodeContacts100(b *testing.B) {
	one := fixture(b, "contacts_client.json")
	odd := strings.Replace(one, `"phone": "+61 2 9000 0000"`, `"phone": 61290000000`, 1)
	for _, bc := range []struct{ name, odd string }{{"fit", one}, {"one-odd", odd}} {
		recs := make([]json.RawMessage, 100)
		for i := range recs {
			recs[i] = json.RawMessage(one)
		}
		recs[50] = json.RawMessage(bc.odd)
		body := []byte(lenientPageBody("clients", recs))
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var page struct {
					Clients []invoicing.Contact `json:"clients"`
				}
				if err := json.Unmarshal(body, &page); err != nil || len(page.Clients) != 100 {
					b.Fatal(err)
				}
			}
		})
	}
}
