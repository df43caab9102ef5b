package webhooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// unknownMembers is the member withUnknownMembers adds to the body and to
// each kind of object nested in it, by the Go type that object decodes into.
var unknownMembers = map[reflect.Type]string{
	reflect.TypeFor[webhooks.Address]():          "unit_type",
	reflect.TypeFor[webhooks.QuoteLineItem]():    "discount_rate",
	reflect.TypeFor[webhooks.Recipient]():        "contact_role",
	reflect.TypeFor[webhooks.AcceptingContact](): "accepted_via",
	reflect.TypeFor[webhooks.Viewer]():           "device",
}

// withUnknownMembers returns body with a member the package does not know
// added at the top level ("future_field") and at the start of every nested
// object a field decodes (as unknownMembers lists).
func withUnknownMembers(body []byte) []byte {
	s := strings.Replace(string(body), "{", `{"future_field": {"nested": [1, "two", null, 2.50]}, `, 1)
	return []byte(strings.NewReplacer(
		`"client_address": {`, `"client_address": {"unit_type": "shop", `,
		`{"id": `, `{"discount_rate": "2.50", "id": `,
		`{"quote_contact_id": `, `{"contact_role": "approver", "quote_contact_id": `,
		`"accepting_contact": {`, `"accepting_contact": {"accepted_via": "share_link", `,
		`"viewer": {`, `"viewer": {"device": "mobile", `,
	).Replace(s))
}

// TestRoundTrip parses every fixture with unknown members added at the top
// level and in every nested object. Each member lands in the Extra of its
// object; the event marshals, with encoding/json and encoding/json/v2 alike,
// back to the body (checkMarshalsBack); and unmarshalling the body into the
// event type with either gives what Parse gives.
func TestRoundTrip(t *testing.T) {
	for name, eventType := range fixtures {
		t.Run(name, func(t *testing.T) {
			body := withUnknownMembers(fixture(t, name))
			e, err := webhooks.Parse(eventType, body)
			require.NoError(t, err)

			extras := map[string]invoicing.Extra{}
			collectExtrasOf(reflect.ValueOf(e).Elem(), "", extras, unknownMembers)
			require.Equal(t, []string{"future_field"}, extras[""].Names())
			var v any
			require.NoError(t, extras[""].Get("future_field", &v))
			assert.Equal(t, map[string]any{"nested": []any{1.0, "two", nil, 2.5}}, v)
			for path, extra := range extras {
				if path != "" {
					require.Len(t, extra, 1, path)
				}
			}

			checkMarshalsBack(t, eventType, body, e)

			for _, unmarshal := range []func([]byte, any) error{
				json.Unmarshal,
				func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) },
			} {
				again := reflect.New(reflect.TypeOf(e).Elem()).Interface()
				require.NoError(t, unmarshal(body, again))
				require.Equal(t, e, again)
			}
		})
	}
}

// checkMarshalsBack checks what holds of every event e that Parse gave for
// body (a known eventType):
//
//   - it marshals with encoding/json and with encoding/json/v2, to the same
//     JSON; encoding/json/v2 refuses only a name given twice in a value
//     kept as sent (it writes it with jsontext.AllowDuplicateNames(true));
//   - that JSON is the body's: the same members at every depth, each value
//     written as sent (numbers with the same text, money strings as
//     strings, null as null), when no name is given twice in one object
//     (see the package documentation, JSON); it is valid UTF-8 even where
//     the body was not;
//   - marshalling is stable: again, or after parsing what it wrote, it
//     writes the same bytes, and the event parsed from them has the same
//     fields;
//   - the event's fields hold the body's values: the event built in code
//     from its fields alone (builtCopy) writes its canonical JSON, which
//     holds the body's values (sameValues).
func checkMarshalsBack(t *testing.T, eventType webhooks.EventType, body []byte, e webhooks.Event) {
	t.Helper()
	twice := hasDuplicateNames(body)
	// The event's own MarshalJSON: json.Marshal, of either API, compacts
	// the values kept as sent, which the event holds as sent.
	own, err := e.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	v1, err := json.Marshal(e)
	require.NoError(t, err)
	v2, err := jsonv2.Marshal(e)
	if err != nil && twice && errors.Is(err, jsontext.ErrDuplicateName) {
		v2, err = jsonv2.Marshal(e, jsontext.AllowDuplicateNames(true))
	}
	require.NoError(t, err)
	if !validJSON(own) || !validJSON(v1) {
		t.Fatalf("wrote invalid JSON (invalid UTF-8 is replaced by U+FFFD, in kept values too): %q", own)
	}
	require.Equal(t, decodeAny(t, own), decodeAny(t, v1), "encoding/json writes what MarshalJSON writes")
	require.Equal(t, decodeAny(t, own), decodeAny(t, v2), "encoding/json/v2 writes what MarshalJSON writes")
	if !twice {
		require.Equal(t, decodeAny(t, body), decodeAny(t, own), "the event marshals back to its body")
	}

	again, err := e.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(own), string(again), "marshalling again")
	reparsed, err := webhooks.Parse(eventType, own)
	require.NoError(t, err, "parsing what the event wrote: %s", own)
	again, err = reparsed.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(own), string(again), "marshalling the event parsed from what it wrote")
	if !twice {
		// Field by field: the event remembers the members it would write
		// otherwise in the order they came, so that the same members in
		// another order give an event that is not reflect.DeepEqual.
		requireSameEvent(t, e, reparsed, "the event parsed from what it wrote")
	}

	built := builtCopy(e)
	canonical, err := built.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	if !twice {
		if diffs := sameValues("", decodeAny(t, body), decodeAny(t, canonical)); len(diffs) > 0 {
			t.Fatalf("the fields do not hold the body's values:\n\t%s\nbody: %s\nfields: %s", joinLines(diffs), body, canonical)
		}
	}
	rebuilt, err := webhooks.Parse(eventType, canonical)
	require.NoError(t, err, "parsing the canonical JSON %s", canonical)
	again, err = rebuilt.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(canonical), string(again), "the canonical JSON writes itself back")
}

// validJSON reports whether b is valid JSON, but for names given twice: no
// invalid UTF-8, no escaped lone surrogate.
func validJSON(b []byte) bool { return jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true)) }

// hasDuplicateNames reports whether an object in the JSON document b has a
// name twice.
func hasDuplicateNames(b []byte) bool {
	return !jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true)) &&
		jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// collectExtras adds the Extra of every struct in v to extras, by the JSON
// Pointer of its object.
func collectExtras(v reflect.Value, path string, extras map[string]invoicing.Extra) {
	collectExtrasOf(v, path, extras, nil)
}

// collectExtrasOf is collectExtras, checking that the Extra of each object
// has the member named in want for its type (as unknownMembers).
func collectExtrasOf(v reflect.Value, path string, extras map[string]invoicing.Extra, want map[reflect.Type]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectExtrasOf(v.Elem(), path, extras, want)
		}
	case reflect.Slice:
		for i := range v.Len() {
			collectExtrasOf(v.Index(i), fmt.Sprintf("%s/%d", path, i), extras, want)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case !f.IsExported():
			case f.Name == "Extra":
				extra := v.Field(i).Interface().(invoicing.Extra)
				if member, ok := want[v.Type()]; ok && !extra.Has(member) {
					panic(path + " lacks " + member)
				}
				extras[path] = extra
			case f.Anonymous:
				collectExtrasOf(v.Field(i), path, extras, want)
			default:
				collectExtrasOf(v.Field(i), path+"/"+tagName(f), extras, want)
			}
		}
	}
}

// decodeAny decodes b with encoding/json, numbers as json.Number.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// sameValues compares a body (decoded by decodeAny) with the canonical JSON
// of the event parsed from it (builtCopy's, decoded the same way), knowing
// nothing of the event's types, and returns where the canonical JSON does
// not hold the body's value. It allows what writing the fields alone
// changes:
//
//   - a member the body lacks is written with its zero value, and null as
//     a zero value ("", 0, false, the zero time, an object of zero values);
//     "" as null (an empty date);
//   - a number is written in its canonical form, or as a string (money),
//     and a string holding money as a number: equal amounts are the same;
//   - a datetime is written in RFC 3339's canonical form: the same instant
//     at the same offset is the same.
func sameValues(path string, body, canonical any) []string {
	differ := func(why string) []string {
		return []string{fmt.Sprintf("%s: %s: body %v, fields %v", pathOrTop(path), why, body, canonical)}
	}
	switch {
	case reflect.DeepEqual(body, canonical):
		return nil
	case body == nil:
		if !zeroValue(canonical) {
			return differ("null written as a value")
		}
		return nil
	case canonical == nil:
		if body != "" {
			return differ("a value written as null")
		}
		return nil
	}
	switch b := body.(type) {
	case map[string]any:
		c, ok := canonical.(map[string]any)
		if !ok {
			return differ("an object written as another kind")
		}
		var diffs []string
		for name, v := range b {
			cv, ok := c[name]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s/%s: missing", path, name))
				continue
			}
			diffs = append(diffs, sameValues(path+"/"+name, v, cv)...)
		}
		for name, cv := range c {
			if _, ok := b[name]; !ok && !zeroValue(cv) {
				diffs = append(diffs, fmt.Sprintf("%s/%s: not in the body, written as %v", path, name, cv))
			}
		}
		return diffs
	case []any:
		c, ok := canonical.([]any)
		if !ok || len(c) != len(b) {
			return differ("an array written otherwise")
		}
		var diffs []string
		for i := range b {
			diffs = append(diffs, sameValues(fmt.Sprintf("%s/%d", path, i), b[i], c[i])...)
		}
		return diffs
	}
	if x, ok := amount(body); ok {
		if y, ok := amount(canonical); ok && x.Equal(y) {
			return nil
		}
	}
	if x, ok := datetime3339(body); ok {
		if y, ok := datetime3339(canonical); ok && x.Equal(y) && offset(x) == offset(y) {
			return nil
		}
	}
	return differ("another value")
}

// zeroValue reports whether v, decoded by decodeAny, is what a field holding
// its zero value writes.
func zeroValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string: // "0" is zero money
		x, ok := amount(v)
		return v == "" || v == "0001-01-01T00:00:00Z" || ok && x.IsZero()
	case json.Number:
		x, ok := amount(v)
		return ok && x.IsZero()
	case map[string]any:
		for _, m := range v {
			if !zeroValue(m) {
				return false
			}
		}
		return true
	}
	return false
}

// amount parses a JSON number or a string holding one.
func amount(v any) (decimal.Decimal, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = string(v)
	case string:
		s = v
	default:
		return decimal.Decimal{}, false
	}
	x, err := decimal.NewFromString(s)
	return x, err == nil
}

// datetime3339 parses an RFC 3339 datetime.
func datetime3339(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

func offset(t time.Time) int {
	_, off := t.Zone()
	return off
}

// TestNestedObjectsMarshalAlone marshals each kind of nested object on its
// own with encoding/json: its unknown member is there, and no member named
// Extra.
func TestNestedObjectsMarshalAlone(t *testing.T) {
	accepted, err := webhooks.Parse(webhooks.EventQuoteAccepted, withUnknownMembers(fixture(t, "quote.accepted.json")))
	require.NoError(t, err)
	viewed, err := webhooks.Parse(webhooks.EventQuoteViewed, withUnknownMembers(fixture(t, "quote.viewed.json")))
	require.NoError(t, err)
	qa := accepted.(*webhooks.QuoteAccepted)
	for _, v := range []any{qa.ClientAddress, qa.LineItems[0], qa.Recipients[0], *qa.AcceptingContact, viewed.(*webhooks.QuoteViewed).Viewer} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var members map[string]any
		require.NoError(t, json.Unmarshal(b, &members))
		assert.Contains(t, members, unknownMembers[reflect.TypeOf(v)], "%T", v)
		assert.NotContains(t, members, "Extra", "%T", v)
	}
}

// tagName is the JSON name in f's tag.
func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// TestParseKeepsCopies: what an event keeps as raw JSON (Extra,
// InteractiveSelections, PreviousAcceptance) is a copy, so neither the
// delivery's Body nor the event changes when the other is written to.
func TestParseKeepsCopies(t *testing.T) {
	for name, eventType := range map[string]webhooks.EventType{
		"quote.accepted.json":   webhooks.EventQuoteAccepted,
		"quote.unaccepted.json": webhooks.EventQuoteUnaccepted,
	} {
		body := withUnknownMembers(fixture(t, name))
		original := bytes.Clone(body)
		e, err := webhooks.Parse(eventType, body)
		require.NoError(t, err)
		parsed, err := jsonv2.Marshal(e)
		require.NoError(t, err)

		var raw [][]byte
		switch e := e.(type) {
		case *webhooks.QuoteAccepted:
			raw = append(raw, e.Extra["future_field"], e.LineItems[0].Extra["discount_rate"])
			for _, v := range e.InteractiveSelections {
				raw = append(raw, v)
			}
		case *webhooks.QuoteUnaccepted:
			raw = append(raw, e.Extra["future_field"], e.PreviousAcceptance)
		}
		for _, r := range raw {
			clear(r)
		}
		require.Equal(t, original, body, "%s: the body changed with the event", name)

		copy(body, original)
		e, err = webhooks.Parse(eventType, body)
		require.NoError(t, err)
		clear(body)
		again, err := jsonv2.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(parsed), string(again), "%s: the event changed with the body", name)
	}
}

// TestMarshalWritesValidUTF8: invalid UTF-8 in a body (or an escaped lone
// surrogate) is replaced by U+FFFD
// in the strings of the event's fields and in the names of Extra's
// members, and so in what the event writes; the values kept as sent
// (Extra's, at any depth) must be written so too.
func TestMarshalWritesValidUTF8(t *testing.T) {
	body := []byte("{\"event\": \"caf\xe9\", \"caf\xe9\": 1, \"note\": \"caf\xe9\", \"nested\": {\"caf\xe9\": [\"\xff\", \"\\ud800\"]}}")
	e := mustParse(t, webhooks.EventTest, body).(*webhooks.Test)
	assert.Equal(t, "caf\ufffd", e.Event)
	assert.Equal(t, []string{"caf\ufffd", "nested", "note"}, e.Extra.Names())
	want := map[string]any{
		"event": "caf\ufffd", "caf\ufffd": json.Number("1"), "note": "caf\ufffd",
		"nested": map[string]any{"caf\ufffd": []any{"\ufffd", "\ufffd"}},
	}
	for name, marshal := range map[string]func(any) ([]byte, error){
		"encoding/json":    json.Marshal,
		"encoding/json/v2": func(v any) ([]byte, error) { return jsonv2.Marshal(v) },
	} {
		b, err := marshal(e)
		require.NoError(t, err, name)
		require.True(t, validJSON(b), "%s wrote invalid JSON: %q", name, b)
		assert.Equal(t, want, decodeAny(t, b), name)
	}
}

// TestBuiltEventWithZeroMoneyRoundTrips: an event built in code with its
// money left zero (decimal.Decimal{}) writes "0", and the event parsed from
// what it writes, its canonical JSON, is equal to it (assert.Equal), as for
// every event built in code.
func TestBuiltEventWithZeroMoneyRoundTrips(t *testing.T) {
	want := &webhooks.InvoicePaid{InvoiceID: "i-1", PaidAt: datetime("2026-03-20T23:05:44Z")}
	b, err := want.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"invoice_id": "i-1", "invoice_number": "", "client_id": "", "reference": "", "amount_paid": "0", "paid_at": "2026-03-20T23:05:44Z"}`, string(b))
	got := mustParse(t, webhooks.EventInvoicePaid, b).(*webhooks.InvoicePaid)
	requireSameEvent(t, want, got)
	require.Equal(t, want, got, "the zero amount decoded from \"0\" is decimal.Decimal{}")
}
