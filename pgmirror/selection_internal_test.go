package pgmirror

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

func testSelector(t testing.TB, sel Selection) *selector {
	t.Helper()
	key, err := seal.GenerateKey("k1")
	require.NoError(t, err)
	keys, err := seal.ParseKeyring(key)
	require.NoError(t, err)
	s, err := newSelector(sel, keys, "k1")
	require.NoError(t, err)
	return s
}

// A row's typed columns, its lines' and its raw JSON, unknown members
// included, keep what the Selection says: left out, hashed (a string's
// text, another value's JSON; null stays null), or as sent.
func TestASelectorAppliesToEveryPartOfARow(t *testing.T) {
	s := testSelector(t, Selection{
		Exclude: []string{"invoices.notes", "invoices.purchase_order", "invoices.line_items.description"},
		Hash:    []string{"invoices.client_name", "invoices.reference", "invoices.line_items.account_id", "invoices.custom"},
	})
	res := resourceNamed(Invoices)
	str := func(v string) *string { return &v }
	values := make([]any, len(res.table.Columns))
	col := func(name string) int {
		for i, c := range res.table.Columns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return 0
	}
	values[col("notes")], values[col("client_name")], values[col("reference")], values[col("currency")] = str("secret"), str("Ada"), nil, str("AUD")
	line := make([]any, len(res.lines.Columns))
	line[1], line[2], line[7] = str("l1"), str("a line"), str("acc-1")
	r := store.Row{ID: "i1", Values: values, Lines: [][]any{line}, Raw: []byte(`{"id":"i1","notes":"secret","client_name":"Ada",
		"reference":null,"currency":"AUD","purchase_order":"PO-1","custom":{"a":1},
		"line_items":[{"id":"l1","description":"a line","account_id":"acc-1"}]}`)}
	require.NoError(t, s.row(res, &r))

	hashOf := func(text string) string { return s.hash([]byte(text)) }
	assert.Nil(t, r.Values[col("notes")])
	assert.Equal(t, hashOf("Ada"), *r.Values[col("client_name")].(*string))
	assert.Nil(t, r.Values[col("reference")], "null stays null")
	assert.Equal(t, "AUD", *r.Values[col("currency")].(*string))
	assert.Nil(t, r.Lines[0][2], "the line's description")
	assert.Equal(t, hashOf("acc-1"), *r.Lines[0][7].(*string))
	assert.Equal(t, "l1", *r.Lines[0][1].(*string))
	var raw map[string]any
	require.NoError(t, json.Unmarshal(r.Raw, &raw))
	assert.Equal(t, map[string]any{"id": "i1", "client_name": hashOf("Ada"), "reference": nil, "currency": "AUD",
		"custom": hashOf(`{"a":1}`), "line_items": []any{map[string]any{"id": "l1", "account_id": hashOf("acc-1")}}}, raw)

	// Another resource's rows are left alone, byte for byte.
	other := store.Row{ID: "c1", Raw: []byte(`{"id":"c1", "notes":"x"}`)}
	require.NoError(t, s.row(resourceNamed(Clients), &other))
	assert.Equal(t, `{"id":"c1", "notes":"x"}`, string(other.Raw))
}

// Of a delivery, the inbox keeps only the ids and instants of its payload
// and a contact's type, less what the Selection names for the event's
// resources: an instant left out becomes the delivery's signing time.
func TestTheInboxKeepsOnlyWhatTheMirrorReads(t *testing.T) {
	s := testSelector(t, Selection{Exclude: []string{"clients.email", "invoices.client_id", "invoices.created_at"}})
	signed := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		event, body, want string
	}{
		{"contact.created", `{"contact_id":"c1","contact_type":"client","name":"Ada","email":"ada@example.org","created_at":"2026-04-01T00:00:00Z"}`,
			`{"contact_id":"c1","contact_type":"client","created_at":"2026-04-01T00:00:00Z"}`},
		{"invoice.created", `{"invoice_id":"i1","client_id":"c1","total":"10.00","status":"draft","created_at":"2026-04-01T00:00:00Z"}`,
			`{"invoice_id":"i1","created_at":"2026-05-01T10:00:00Z"}`},
		{"payment.received", `{"payment_id":"p1","invoice_id":"i1","amount":"5.00","received_at":"2026-04-02T00:00:00Z"}`,
			`{"payment_id":"p1","invoice_id":"i1","received_at":"2026-04-02T00:00:00Z"}`},
	} {
		d := &webhooks.Delivery{Type: webhooks.EventType(c.event), Timestamp: signed, Body: []byte(c.body)}
		got, err := s.inboxBody(d)
		require.NoError(t, err)
		assert.JSONEq(t, c.want, string(got), c.event)
		_, err = webhooks.Parse(d.Type, got)
		assert.NoError(t, err, "what is kept parses as the event: %s", c.event)
	}
}

// inboxBody takes any bytes: an object, or an error.
func FuzzInboxBody(f *testing.F) {
	f.Add([]byte(`{"invoice_id":"i1","notes":"x"}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"a_id":{"b":[1]},"x_at":null}`))
	s := &selector{members: map[string]map[string]bool{Invoices: {"client_id": false}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := s.inboxBody(&webhooks.Delivery{Type: "invoice.created", Body: body})
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got, &obj))
		assert.NotContains(t, obj, "client_id")
	})
}

// object, which delimits the values with the codec without decoding them,
// does what decoding the object, applying the Selection to its members and
// encoding it again would: for any JSON object, its result is valid JSON
// with the same members, but those left out, and the hashes.
func FuzzSelectorObject(f *testing.F) {
	f.Add([]byte(`{"id":"i1","a":"x","h":"y","n":1.50,"line_items":[{"x":1,"y":[{"a":"}"}]},{"y":"\"]"}]}`))
	f.Add([]byte(` { "h" : {"k":[1,2,"3"]} , "a\u0062":null, "h":null } `))
	f.Add([]byte(`{}`))
	s := testSelector(f, Selection{Exclude: []string{"invoices.notes"}})
	s.members = map[string]map[string]bool{"r": {"a": false, "h": true}}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, changed, err := s.object(b, s.members["r"], map[string]bool{"x": false})
		var want map[string]any
		if json.Unmarshal(b, &want) != nil || want == nil {
			return // not an object (null included), or not JSON: anything but a panic
		}
		require.NoError(t, err, "%s", b)
		// Changed: a member left out was there, a hashed one not null, a
		// line had x (a key repeated counts once decoded: look at the text).
		_, hadA := want["a"]
		h, hadH := want["h"]
		lineX := false
		if items, ok := want["line_items"].([]any); ok {
			for _, item := range items {
				if m, ok := item.(map[string]any); ok {
					_, x := m["x"]
					lineX = lineX || x
				}
			}
		}
		if !bytes.Contains(b, []byte(`\`)) && bytes.Count(b, []byte(`"a"`))+bytes.Count(b, []byte(`"h"`))+bytes.Count(b, []byte(`"x"`)) <= 1 {
			assert.Equal(t, hadA || (hadH && h != nil) || lineX, changed, "%s → %s", b, got)
		}
		delete(want, "a")
		if v, ok := want["h"]; ok && v != nil {
			if str, ok := v.(string); ok {
				want["h"] = s.hash([]byte(str))
			} else { // the hash of the value's JSON as written, which a decoded value has lost
				want["h"] = "(a hash)"
			}
		}
		if items, ok := want["line_items"].([]any); ok {
			for _, item := range items {
				if m, ok := item.(map[string]any); ok {
					delete(m, "x")
				}
			}
		}
		var have map[string]any
		require.NoError(t, json.Unmarshal(got, &have), "%s → %s", b, got)
		if want["h"] == "(a hash)" {
			assert.Regexp(t, `^[0-9a-f]{64}$`, have["h"])
			have["h"] = "(a hash)"
		}
		assert.Equal(t, want, have, "%s → %s", b, got)
	})
}

// withoutEqualMembers drops from an update's old and new JSON the members
// whose values are the same text in both: after a member is left out or
// hashed, the change keeps only what still differs ({} and {} when
// nothing does, and the change is deleted).
func TestAnUpdateKeepsOnlyTheMembersThatStillDiffer(t *testing.T) {
	for _, c := range []struct{ old, new, wantOld, wantNew string }{
		{`{"a":"1","b":[1,2]}`, `{"a":"2","b":[1,2]}`, `{"a":"1"}`, `{"a":"2"}`},
		{`{"h":"x","b":1}`, `{"h":"x","b":1}`, `{}`, `{}`},
		{`{"a":1}`, `{"c":2}`, `{"a":1}`, `{"c":2}`},
		{`{"line_items":[{"q":1}]}`, `{"line_items":[{"q":1}],"n":null}`, `{}`, `{"n":null}`},
	} {
		old, new, err := withoutEqualMembers([]byte(c.old), []byte(c.new))
		require.NoError(t, err)
		assert.Equal(t, c.wantOld, string(old), c.old)
		assert.Equal(t, c.wantNew, string(new), c.new)
	}
	_, _, err := withoutEqualMembers([]byte(`[1]`), []byte(`{}`))
	assert.Error(t, err, "not an object")
}
