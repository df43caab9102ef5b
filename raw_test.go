package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestRawObjectDoesNotAliasTheDecodeBuffer(t *testing.T) {
	body := fixture(t, "bills_get_unknown.json")
	buf := []byte(body)
	var b invoicing.Bill
	require.NoError(t, json.Unmarshal(buf, &b))
	for i := range buf {
		buf[i] = 'x' // what a reused buffer would do to a view of it
	}
	assert.JSONEq(t, body, string(b.Raw()))
	var ref string
	require.NoError(t, b.Get("reference", &ref))
	assert.Equal(t, "PO-2026-118", ref)
	var tracking map[string]string
	require.NoError(t, b.LineItems[0].Get("tracking", &tracking))
	assert.Equal(t, "North", tracking["option"])
}

func TestRawObjectSurvivesLaterResponses(t *testing.T) {
	// The pipeline decodes every response from a pooled buffer: values from
	// earlier responses must not change when it is reused.
	first := fixture(t, "contacts_client_unknown.json")
	c, _ := newTestAPI(t, sequence(always(200, first), always(200, fixture(t, "bills_get_unknown.json"))))
	ctx := context.Background()
	ct, err := c.Clients.Get(ctx, clientID)
	require.NoError(t, err)
	for range 5 {
		_, err := c.Bills.Get(ctx, billID)
		require.NoError(t, err)
	}
	assert.JSONEq(t, first, string(ct.Raw()))
	var tn string
	require.NoError(t, ct.Get("tax_number", &tn))
	assert.Equal(t, "51 824 753 556", tn)
}

func TestRawObjectRawIsACopy(t *testing.T) {
	var a invoicing.Account
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+accountID+`","name":"Sales"}`), &a))
	r := a.Raw()
	r[2] = 'X'
	assert.Equal(t, `{"id":"`+accountID+`","name":"Sales"}`, string(a.Raw()))
	out, err := a.MarshalJSON()
	require.NoError(t, err)
	out[2] = 'Y'
	assert.Equal(t, `{"id":"`+accountID+`","name":"Sales"}`, string(a.Raw()))
}

func TestRawObjectGetAndHas(t *testing.T) {
	var tc invoicing.TaxCode
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+taxCodeID+`","rate":10,"note":null,"na\u006de":"escaped key","Flag":true}`), &tc))
	assert.True(t, tc.Rate.Equal(decimal.NewFromInt(10)))

	assert.True(t, tc.Has("rate"), "typed fields are in the raw object too")
	assert.True(t, tc.Has("note"), "a null field is present")
	assert.True(t, tc.Has("name"), "keys are unescaped")
	assert.False(t, tc.Has("flag"), "names match exactly")
	assert.False(t, tc.Has("missing"))

	note := "unchanged"
	require.NoError(t, tc.Get("note", &note))
	assert.Equal(t, "unchanged", note, "null leaves the destination as json.Unmarshal does")
	var notePtr *string = &note
	require.NoError(t, tc.Get("note", &notePtr))
	assert.Nil(t, notePtr)

	var s string
	err := tc.Get("missing", &s)
	assert.ErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `"missing"`)

	var n int
	err = tc.Get("name", &n)
	require.Error(t, err)
	assert.NotErrorIs(t, err, invoicing.ErrFieldMissing)
	assert.Contains(t, err.Error(), `field "name"`)
}

func TestRawObjectZeroValue(t *testing.T) {
	var ct invoicing.Contact
	assert.Nil(t, ct.Raw())
	assert.Nil(t, ct.MismatchedFields())
	assert.False(t, ct.Has("id"))
	assert.ErrorIs(t, ct.Get("id", new(string)), invoicing.ErrFieldMissing)
	dst := map[string]any{"kept": true}
	require.NoError(t, ct.Decode(&dst))
	assert.Equal(t, map[string]any{"kept": true}, dst)
}

func TestRawObjectNullLeavesValue(t *testing.T) {
	var b invoicing.Bill
	require.NoError(t, json.Unmarshal([]byte(fixture(t, "bills_get.json")), &b))
	before := b.Raw()
	require.NoError(t, json.Unmarshal([]byte(" null "), &b))
	assert.Equal(t, "SUP-INV-7781", b.BillNumber)
	assert.Equal(t, before, b.Raw())

	var holder struct {
		Bill  *invoicing.Bill          `json:"bill"`
		Lines []invoicing.BillLineItem `json:"lines"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"bill": null, "lines": [null, {"id": "l1"}]}`), &holder))
	assert.Nil(t, holder.Bill)
	require.Len(t, holder.Lines, 2)
	assert.Nil(t, holder.Lines[0].Raw())
	assert.Equal(t, "l1", holder.Lines[1].ID)
	assert.Equal(t, `{"id": "l1"}`, string(holder.Lines[1].Raw()))
}

func TestRawObjectDecodeFailureIsAnError(t *testing.T) {
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
	// A field of another JSON type is no error: see lenient_test.go.
	var ct invoicing.Contact
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+clientID+`","phone":61290000000}`), &ct))
	assert.Equal(t, clientID, ct.ID)
	assert.Empty(t, ct.Phone)
	assert.Equal(t, []string{"phone"}, ct.MismatchedFields())
}

func TestRawObjectMismatchedFieldsOnReuse(t *testing.T) {
	// Decoding into a value that was decoded before starts afresh: the
	// mismatches of the earlier object are not carried over.
	var a invoicing.Account
	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+accountID+`","code":200,"is_active":"yes"}`), &a))
	names := a.MismatchedFields()
	assert.Equal(t, []string{"code", "is_active"}, names)
	names[0] = "changed"
	assert.Equal(t, []string{"code", "is_active"}, a.MismatchedFields(), "the caller gets a copy")

	require.NoError(t, json.Unmarshal([]byte(`{"id":"`+accountID+`","code":"200"}`), &a))
	assert.Nil(t, a.MismatchedFields())
	assert.Equal(t, "200", a.Code)
	assert.Equal(t, `{"id":"`+accountID+`","code":"200"}`, string(a.Raw()))

	require.NoError(t, json.Unmarshal([]byte(`null`), &a))
	assert.Equal(t, "200", a.Code, "null leaves the value as it was")
}

func TestRawObjectEmbeddingDoesNotTakeOverTheStruct(t *testing.T) {
	// Every typed field decodes through the alias, and printing still shows
	// the typed fields (RawObject has no String method to take over %v).
	var ba invoicing.BankAccount
	require.NoError(t, json.Unmarshal([]byte(`{"id":"acc-1","name":"Operating","balance":1.50,"bsb":"062-000"}`), &ba))
	assert.Equal(t, "acc-1", ba.ID)
	assert.Equal(t, "Operating", ba.Name)
	assert.Equal(t, "1.5", ba.Balance.String())
	assert.Contains(t, fmt.Sprintf("%+v", ba), "Name:Operating")
}

func TestRawObjectMarshalJSON(t *testing.T) {
	// Decoded values marshal back to what the service sent, nested records
	// included, so a value can be stored and re-read without loss.
	body := fixture(t, "bills_get_unknown.json")
	var b invoicing.Bill
	require.NoError(t, json.Unmarshal([]byte(body), &b))
	out, err := json.Marshal(map[string]any{"bill": b, "line": b.LineItems[0], "ptr": &b})
	require.NoError(t, err)
	var back struct {
		Bill invoicing.Bill         `json:"bill"`
		Line invoicing.BillLineItem `json:"line"`
		Ptr  *invoicing.Bill        `json:"ptr"`
	}
	require.NoError(t, json.Unmarshal(out, &back))
	assert.JSONEq(t, body, string(back.Bill.Raw()))
	assert.JSONEq(t, body, string(back.Ptr.Raw()))
	assert.JSONEq(t, string(b.LineItems[0].Raw()), string(back.Line.Raw()))
	assert.True(t, back.Bill.Total.Equal(b.Total))

	// A value built in code marshals its typed fields.
	built := invoicing.Contact{ID: clientID, Name: "Built", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	out, err = json.Marshal(built)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"`+clientID+`","name":"Built","email":"","phone":"","created_at":"2026-01-02T03:04:05Z","updated_at":null}`, string(out))
	var again invoicing.Contact
	require.NoError(t, json.Unmarshal(out, &again))
	assert.Equal(t, "Built", again.Name)
	assert.JSONEq(t, string(out), string(again.Raw()))
}

// A field the SDK has no typed field for is read with Get.
func ExampleRawObject_Get() {
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
	if err := ct.Get("address", &addr); err != nil {
		panic(err)
	}
	if err := ct.Get("credit_limit", &limit); err != nil {
		panic(err)
	}
	fmt.Println(ct.Name, addr.City, limit, ct.Has("phone"))
	// Output: Acme Pty Ltd Sydney 5000.1 false
}

// A field the service sends with another JSON type than the SDK's is left
// zero and named; the call does not fail, and the value is still in Raw.
func ExampleRawObject_MismatchedFields() {
	var a invoicing.Account
	body := `{"id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "code": 200, "name": "Sales", "is_active": true}`
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		panic(err)
	}
	fmt.Printf("%s %t %q %q\n", a.Name, *a.IsActive, a.Code, a.MismatchedFields())
	var code json.Number
	if err := a.Get("code", &code); err != nil {
		panic(err)
	}
	fmt.Println(code)
	// Output:
	// Sales true "" ["code"]
	// 200
}

// Fields the SDK does not know are sent through Extra, after the typed ones.
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
	// Output: {"name":"Paper Supplies Co","address":{"city":"Sydney"},"opening_balance":120.5}
}

// FuzzRawObjectDecode checks that any response body either fails to decode
// or gives values that keep it: marshalling gives the body back (compacted),
// and every top-level key of it is found by Has.
func FuzzRawObjectDecode(f *testing.F) {
	for _, name := range []string{"bills_get_unknown.json", "reports_trial_balance.json", "reports_balance_sheet_other_shape.json"} {
		f.Add([]byte(fixture(f, name)))
	}
	f.Add([]byte(`{"line_items":[null,{}],"totals":"x","lines":[]}`))
	f.Add([]byte(`{"a\u0000":1,"a":2,"a":3}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(v interface {
			Raw() json.RawMessage
			Has(string) bool
		}) {
			out, err := json.Marshal(v)
			require.NoError(t, err)
			want, err := json.Marshal(json.RawMessage(body))
			require.NoError(t, err)
			require.Equal(t, string(want), string(out))
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(body, &m))
			for k := range m {
				require.True(t, v.Has(k), k)
			}
		}
		if b := new(invoicing.Bill); json.Unmarshal(body, b) == nil && b.Raw() != nil {
			check(b)
		}
		if r := new(invoicing.Report); json.Unmarshal(body, r) == nil && r.Raw() != nil {
			check(r)
		}
	})
}
