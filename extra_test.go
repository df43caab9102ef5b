package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// withUnknown adds members the SDK does not model to a record's JSON, at the
// top level and in its first line.
func withUnknown(t *testing.T, body string) string {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	require.NoError(t, d.Decode(&m))
	m["purchase_order"] = "PO-7781"
	m["discount"] = map[string]any{"rate": json.Number("0.05"), "reason": "loyalty"}
	if lines, ok := m["line_items"].([]any); ok && len(lines) > 0 {
		lines[0].(map[string]any)["tracking"] = []any{"North", json.Number("7")}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// Every core record keeps what it does not model in Extra, readable with
// Get, and marshals back (through encoding/json and encoding/json/v2) to
// every member the service sent, money as exact numbers.
func TestCoreRecordsKeepUnknownMembersAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		fixture string
		get     func(*invoicing.Client) (any, error)
		extra   func(any) (invoicing.Extra, invoicing.Extra)
	}{
		{"invoice", "invoice.json", func(c *invoicing.Client) (any, error) { return c.Invoices.Get(ctx, invoiceID) },
			func(v any) (invoicing.Extra, invoicing.Extra) {
				inv := v.(*invoicing.Invoice)
				return inv.Extra, inv.LineItems[0].Extra
			}},
		{"quote", "quote.json", func(c *invoicing.Client) (any, error) { return c.Quotes.Get(ctx, invoiceID) },
			func(v any) (invoicing.Extra, invoicing.Extra) {
				q := v.(*invoicing.Quote)
				return q.Extra, q.LineItems[0].Extra
			}},
		{"item", "item.json", func(c *invoicing.Client) (any, error) { return c.Items.Get(ctx, invoiceID) },
			func(v any) (invoicing.Extra, invoicing.Extra) { return v.(*invoicing.Item).Extra, nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plain := fixture(t, tc.fixture)
			c, _ := newTestAPI(t, always(200, plain))
			v, err := tc.get(c)
			require.NoError(t, err)
			top, line := tc.extra(v)
			assert.Nil(t, top, "the documented fields leave nothing over")
			assert.Nil(t, line)
			assert.JSONEq(t, plain, string(rawJSON(t, v)))

			body := withUnknown(t, plain)
			c, _ = newTestAPI(t, always(200, body))
			v, err = tc.get(c)
			require.NoError(t, err)
			top, line = tc.extra(v)
			var po string
			require.NoError(t, top.Get("purchase_order", &po))
			assert.Equal(t, "PO-7781", po)
			var discount struct {
				Rate   decimal.Decimal `json:"rate"`
				Reason string          `json:"reason"`
			}
			require.NoError(t, top.Get("discount", &discount))
			assert.Equal(t, "0.05", discount.Rate.String())
			assert.Equal(t, []string{"discount", "purchase_order"}, top.Names())
			if tc.name != "item" {
				assert.JSONEq(t, `["North", 7]`, string(line["tracking"]))
			}

			assert.JSONEq(t, body, string(rawJSON(t, v)), "encoding/json: every member comes back")
			out, err := jsonv2.Marshal(v)
			require.NoError(t, err)
			assert.JSONEq(t, body, string(out), "encoding/json/v2: every member comes back")
		})
	}
}

// A core record decoded with encoding/json (v1) by the caller gets the
// SDK's decoding: exact money, unknown members in Extra.
func TestCoreRecordThroughEncodingJSON(t *testing.T) {
	body := withUnknown(t, fixture(t, "invoice.json"))
	var inv invoicing.Invoice
	require.NoError(t, json.Unmarshal([]byte(body), &inv))
	assert.True(t, inv.Extra.Has("purchase_order"))
	assert.True(t, inv.LineItems[0].Extra.Has("tracking"))
	out, err := json.Marshal(inv)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))
	assert.NotContains(t, string(out), `"Extra"`, "Extra's members are inline")
}

func TestExtraGetAndHas(t *testing.T) {
	var inv invoicing.Invoice
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+invoiceID+`","note":null,"na\u006de":"escaped key","Total":1,"total":2}`), &inv))
	assert.True(t, inv.Total.Equal(decimal.NewFromInt(2)))
	assert.True(t, inv.Extra.Has("note"), "a null member is there")
	assert.True(t, inv.Extra.Has("name"), "names are unescaped")
	assert.True(t, inv.Extra.Has("Total"), "names match exactly: Total is not total")
	assert.False(t, inv.Extra.Has("total"), "a typed field's member is not in Extra")

	note := "unchanged"
	require.NoError(t, inv.Extra.Get("note", &note))
	assert.Equal(t, "unchanged", note, "null leaves the destination")

	var s string
	err := inv.Extra.Get("missing", &s)
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `"missing"`)

	var n int
	err = inv.Extra.Get("name", &n)
	require.Error(t, err)
	assert.NotErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `field "name"`)

	var zero invoicing.Extra
	assert.False(t, zero.Has("x"))
	assert.ErrorIs(t, zero.Get("x", &s), invoicing.ErrFieldMissing)
	dst := map[string]any{"kept": true}
	require.NoError(t, zero.Decode(&dst))
	assert.Equal(t, map[string]any{"kept": true}, dst)
}

// Extra does not alias the buffer a record was decoded from.
func TestExtraSurvivesLaterResponses(t *testing.T) {
	first := fixture(t, "contacts_client_unknown.json")
	c, _ := newTestAPI(t, sequence(always(200, first), always(200, fixture(t, "bills_get_unknown.json"))))
	ctx := context.Background()
	ct, err := c.Clients.Get(ctx, clientID)
	require.NoError(t, err)
	for range 5 {
		_, err := c.Bills.Get(ctx, billID)
		require.NoError(t, err)
	}
	assert.JSONEq(t, first, string(rawJSON(t, ct)))
	var tn string
	require.NoError(t, ct.Extra.Get("tax_number", &tn))
	assert.Equal(t, "51 824 753 556", tn)
}

// An outline record tells an absent member from a zero one, keeps a null
// its field cannot hold, and encodes back to exactly the members it came
// with.
func TestOutlineRecordHasAndExactRoundTrip(t *testing.T) {
	body := `{"id":"` + taxCodeID + `","rate":10,"name":null,"Region":"AU"}`
	var tc invoicing.TaxCode
	require.NoError(t, json.Unmarshal([]byte(body), &tc))
	assert.True(t, tc.Has("rate"))
	assert.True(t, tc.Has("name"), "a null member is present")
	assert.False(t, tc.Has("region"), "names match exactly")
	assert.True(t, tc.Has("Region"))
	assert.False(t, tc.Has("code"), "absent, although Code is zero")
	assert.Nil(t, tc.MismatchedFields(), "null is not a mismatch")
	assert.JSONEq(t, body, string(rawJSON(t, tc)), "no member added (code), none changed (name stays null)")

	// A record built in code encodes every typed field, then Extra.
	built := invoicing.Contact{ID: clientID, Name: "Built", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Extra: invoicing.Extra{"tax_number": []byte(`"51 824"`)}}
	assert.False(t, built.Has("id"), "not decoded from JSON")
	out := rawJSON(t, built)
	assert.JSONEq(t, `{"id":"`+clientID+`","name":"Built","email":"","phone":"","created_at":"2026-01-02T03:04:05Z","updated_at":null,"tax_number":"51 824"}`, string(out))
	var again invoicing.Contact
	require.NoError(t, json.Unmarshal(out, &again))
	assert.Equal(t, "Built", again.Name)
	assert.JSONEq(t, string(out), string(rawJSON(t, again)))
}

func TestOutlineRecordNullLeavesValue(t *testing.T) {
	var b invoicing.Bill
	require.NoError(t, json.Unmarshal([]byte(fixture(t, "bills_get.json")), &b))
	before := rawJSON(t, b)
	require.NoError(t, json.Unmarshal([]byte(" null "), &b))
	assert.Equal(t, "SUP-INV-7781", b.BillNumber)
	assert.Equal(t, before, rawJSON(t, b))

	var holder struct {
		Bill  *invoicing.Bill          `json:"bill"`
		Lines []invoicing.BillLineItem `json:"lines"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"bill": null, "lines": [null, {"id": "l1"}]}`), &holder))
	assert.Nil(t, holder.Bill)
	require.Len(t, holder.Lines, 2)
	assert.False(t, holder.Lines[0].Has("id"))
	assert.Equal(t, "l1", holder.Lines[1].ID)
	assert.JSONEq(t, `{"id": "l1"}`, string(rawJSON(t, holder.Lines[1])))
}

func TestOutlineRecordMustBeAnObject(t *testing.T) {
	for name, v := range map[string]any{
		"contact":          new(invoicing.Contact),
		"bill":             new(invoicing.Bill),
		"account":          new(invoicing.Account),
		"tax code":         new(invoicing.TaxCode),
		"report":           new(invoicing.Report),
		"bank account":     new(invoicing.BankAccount),
		"bank transaction": new(invoicing.BankTransaction),
	} {
		err := json.Unmarshal([]byte(`[1, 2]`), v)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "a record must be a JSON object, got an array", name)
	}
	var ct invoicing.Contact
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+clientID+`","phone":61290000000}`), &ct))
	assert.Equal(t, clientID, ct.ID)
	assert.Empty(t, ct.Phone)
	assert.Equal(t, []string{"phone"}, ct.MismatchedFields())
	assert.JSONEq(t, `61290000000`, string(ct.Extra["phone"]))
}

func TestOutlineMismatchedFieldsOnReuse(t *testing.T) {
	// Decoding into a value decoded before starts afresh.
	var a invoicing.Account
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+accountID+`","code":200,"is_active":"yes"}`), &a))
	names := a.MismatchedFields()
	assert.Equal(t, []string{"code", "is_active"}, names)
	names[0] = "changed"
	assert.Equal(t, []string{"code", "is_active"}, a.MismatchedFields(), "the caller gets a copy")
	assert.JSONEq(t, `{"id":"`+accountID+`","code":200,"is_active":"yes"}`, string(rawJSON(t, a)), "mismatched members encode as sent")

	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+accountID+`","code":"200"}`), &a))
	assert.Nil(t, a.MismatchedFields())
	assert.Nil(t, a.Extra)
	assert.Equal(t, "200", a.Code)
	assert.JSONEq(t, `{"id":"`+accountID+`","code":"200"}`, string(rawJSON(t, a)))
}

// Params send their Extra members after the typed fields, in name order,
// money exact at any depth; a clash with a typed field is a *ParamError.
func TestParamsSendExtraMembers(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "invoice.json")))
	p := validInvoice()
	p.Extra = map[string]any{"purchase_order": "PO-1", "deposit": map[string]any{"amount": decimal.RequireFromString("10.50")}}
	p.LineItems[0].Extra = map[string]any{"discount_rate": decimal.RequireFromString("0.050")}
	_, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	body := string(api.last(t).Body)
	assert.Contains(t, body, `"deposit":{"amount":10.50},"purchase_order":"PO-1"}`)
	assert.Contains(t, body, `"discount_rate":0.050}`)

	p.Extra = map[string]any{"client_id": "other"}
	_, err = c.Invoices.Create(context.Background(), p)
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "client_id", pe.Field)
	assert.Len(t, api.requests(), 1, "nothing sent")

	p.Extra = map[string]any{"notes": nil} // Notes is empty, so not sent: Extra may send it
	_, err = c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Contains(t, string(api.last(t).Body), `"notes":null`)
}

// A member the SDK has no field for is read from Extra.
func ExampleExtra_Get() {
	var ct invoicing.Contact
	body := `{"id": "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e", "name": "Acme Pty Ltd",
		"address": {"city": "Sydney", "postcode": "2000"}, "credit_limit": 5000.10}`
	if err := json.Unmarshal([]byte(body), &ct); err != nil {
		panic(err)
	}
	var addr struct {
		City string `json:"city"`
	}
	var limit decimal.Decimal
	if err := ct.Extra.Get("address", &addr); err != nil {
		panic(err)
	}
	if err := ct.Extra.Get("credit_limit", &limit); err != nil {
		panic(err)
	}
	fmt.Println(ct.Name, addr.City, limit, ct.Has("phone"))
	// Output: Acme Pty Ltd Sydney 5000.1 false
}

// A member the service sends with another JSON type than the SDK's is left
// zero and named; the call does not fail, and the value is in Extra.
func ExampleAccount_MismatchedFields() {
	var a invoicing.Account
	body := `{"id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "code": 200, "name": "Sales", "is_active": true}`
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		panic(err)
	}
	fmt.Printf("%s %t %q %q\n", a.Name, *a.IsActive, a.Code, a.MismatchedFields())
	var code int
	if err := a.Extra.Get("code", &code); err != nil {
		panic(err)
	}
	fmt.Println(code)
	// Output:
	// Sales true "" ["code"]
	// 200
}

// Members the SDK does not model are sent through Extra, after the typed
// ones.
func ExampleContactCreateParams() {
	p := invoicing.ContactCreateParams{
		Name: "Paper Supplies Co",
		Extra: map[string]any{
			"address":         map[string]string{"city": "Sydney"},
			"opening_balance": decimal.RequireFromString("120.50"),
		},
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output: {"name":"Paper Supplies Co","address":{"city":"Sydney"},"opening_balance":120.50}
}
