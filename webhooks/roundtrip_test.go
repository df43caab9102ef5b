package webhooks_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
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
// to every member of the body with its value (money as the same strings);
// and unmarshalling the body into the event type with either gives what
// Parse gives.
func TestRoundTrip(t *testing.T) {
	for name, eventType := range fixtures {
		t.Run(name, func(t *testing.T) {
			body := withUnknownMembers(fixture(t, name))
			e, err := webhooks.Parse(eventType, body)
			require.NoError(t, err)

			extras := map[string]invoicing.Extra{}
			collectExtras(reflect.ValueOf(e).Elem(), "", extras)
			require.Equal(t, []string{"future_field"}, extras[""].Names())
			var v any
			require.NoError(t, extras[""].Get("future_field", &v))
			assert.Equal(t, map[string]any{"nested": []any{1.0, "two", nil, 2.5}}, v)
			for path, extra := range extras {
				if path != "" {
					require.Len(t, extra, 1, path)
				}
			}

			v1, err := json.Marshal(e)
			require.NoError(t, err)
			v2, err := jsonv2.Marshal(e)
			require.NoError(t, err)
			require.Equal(t, decodeAny(t, v2), decodeAny(t, v1), "encoding/json and encoding/json/v2 write the same JSON")
			requireSameMembers(t, "", decodeAny(t, body), decodeAny(t, v2))

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

// collectExtras adds the Extra of every struct in v to extras, by the JSON
// Pointer of its object, and checks that the Extra of each nested object
// holds just the member withUnknownMembers gave its kind.
func collectExtras(v reflect.Value, path string, extras map[string]invoicing.Extra) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectExtras(v.Elem(), path, extras)
		}
	case reflect.Slice:
		for i := range v.Len() {
			collectExtras(v.Index(i), path+"/"+string(rune('0'+i)), extras)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case f.Name == "Extra":
				extra := v.Field(i).Interface().(invoicing.Extra)
				if member, ok := unknownMembers[v.Type()]; ok && !extra.Has(member) {
					panic(path + " lacks " + member)
				}
				extras[path] = extra
			case f.Anonymous:
				collectExtras(v.Field(i), path, extras)
			default:
				collectExtras(v.Field(i), path+"/"+tagName(f), extras)
			}
		}
	}
}

// decodeAny decodes b with encoding/json, numbers as json.Number.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// requireSameMembers checks that out has every member of in, at every
// depth, with the same value (numbers with the same text), and that each
// member out has beyond them is null: a field the body lacked. The one
// value that changes is a null item_code of a line item: the field is a
// string, so it comes back "".
func requireSameMembers(t *testing.T, path string, in, out any) {
	t.Helper()
	switch in := in.(type) {
	case map[string]any:
		out, ok := out.(map[string]any)
		require.True(t, ok, "%s: got %v", path, out)
		for k, v := range in {
			require.Contains(t, out, k, path)
			requireSameMembers(t, path+"/"+k, v, out[k])
		}
		for k, v := range out {
			if _, ok := in[k]; !ok {
				require.Nil(t, v, "%s/%s is not in the body", path, k)
			}
		}
	case []any:
		out, ok := out.([]any)
		require.True(t, ok, "%s: got %v", path, out)
		require.Len(t, out, len(in), path)
		for i := range in {
			requireSameMembers(t, path+"/"+string(rune('0'+i)), in[i], out[i])
		}
	default:
		if in == nil && out == "" && strings.HasPrefix(path, "/line_items/") && strings.HasSuffix(path, "/item_code") {
			return
		}
		require.Equal(t, in, out, path)
	}
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
