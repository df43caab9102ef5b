package webhooks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// knownTypes are the event types Parse decodes into a typed event.
var knownTypes = []webhooks.EventType{
	webhooks.EventInvoiceCreated, webhooks.EventInvoiceSent, webhooks.EventInvoiceUpdated, webhooks.EventInvoicePaid,
	webhooks.EventBillCreated, webhooks.EventBillApproved, webhooks.EventContactCreated, webhooks.EventPaymentReceived,
	webhooks.EventQuoteCreated, webhooks.EventQuoteSent, webhooks.EventQuoteViewed, webhooks.EventQuoteAccepted,
	webhooks.EventQuoteUnaccepted, webhooks.EventTest,
}

// FuzzParseMatchesV1 decodes each body as every known event type, with
// Parse and as the package did before encoding/json/v2 (parseV1: encoding/json
// into the old structs, then the identity checks). Wherever parseV1 accepts
// the body, Parse must accept it too and give the same values, field for
// field (diffV1), except for these documented differences, each allowed only
// where it applies:
//
//   - Names match exactly. A member whose name equals a field's only
//     case-insensitively was that field for v1 and is an unknown member
//     (kept in Extra) now: the field it folds to may differ.
//   - A name given twice in one object: the last value wins whole. When the
//     later value was null, v1 kept the earlier value of a string, number,
//     boolean or object field, which Parse now empties (datetimes, money and
//     statuses keep the earlier value, as in v1); v1 decoded a later array
//     into the earlier array's elements, merging their fields, where Parse
//     now takes the later array alone. The member given twice may differ,
//     and Parse may refuse a body whose id field is given twice, the last
//     time null.
func FuzzParseMatchesV1(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(body)
	}
	const at = `"2026-03-05T09:14:21Z"`
	f.Add([]byte(`{"invoice_id": "i", "Invoice_ID": "j", "created_at": ` + at + `, "total": 12.50}`))
	f.Add([]byte(`{"invoice_id": "i", "invoice_id": null, "paid_at": "2026-03-05T09:14:21+11:00", "amount_paid": "-0.000"}`))
	f.Add([]byte(`{"quote_id": "q", "viewed_at": "2026-03-05T09:14:21.5Z", "viewer": {"contact_name": "a"}, "viewer": null, "view_count": 0}`))
	f.Add([]byte(`{"quote_id": "q", "accepted_at": ` + at + `, "line_items": [{"id": "a"}], "line_items": [{"title": "b"}]}`))
	f.Add([]byte(`{"quote_id": "q", "accepted_at": ` + at + `, "interactive_selections": {"a": null, "b/~": [ 1 ]}, "previous_acceptance": null}`))
	f.Add([]byte("{\"event\": \"t\\u00e9st\xff\", \"timestamp\": \"2026-03-05T9:14:21,5+24:00\", \"message\": \"\\ud800\"}"))

	f.Fuzz(func(t *testing.T, body []byte) {
		mayDiffer := documentedDifferences(body)
		for _, eventType := range knownTypes {
			old, errV1 := parseV1(eventType, body)
			e, err := webhooks.Parse(eventType, body)
			if errV1 != nil {
				continue
			}
			if err != nil {
				require.True(t, refusedForDuplicate(eventType, err, mayDiffer),
					"%s: v1 accepted %q, Parse: %v", eventType, body, err)
				continue
			}
			for _, diff := range diffV1("", reflect.ValueOf(old).Elem(), reflect.ValueOf(e).Elem()) {
				require.True(t, underAny(diff, mayDiffer), "%s: %s in %q", eventType, diff, body)
			}
		}
	})
}

// refusedForDuplicate reports whether err is Parse refusing a body of
// eventType for lacking its id or time field, and that field is one of
// mayDiffer.
func refusedForDuplicate(eventType webhooks.EventType, err error, mayDiffer []string) bool {
	for _, field := range identityFields[eventType] {
		if strings.HasSuffix(err.Error(), " has no "+field) && underAny("/"+field+":", mayDiffer) {
			return true
		}
	}
	return false
}

// underAny reports whether diff, a difference of diffV1, is at or under one
// of the JSON Pointers in pointers.
func underAny(diff string, pointers []string) bool {
	for _, p := range pointers {
		if rest, ok := strings.CutPrefix(diff, p); ok && rest != "" && (rest[0] == '/' || rest[0] == ':') {
			return true
		}
	}
	return false
}

// jsonNames holds the JSON name of every field of the event structs, at
// every depth.
var jsonNames = func() map[string]bool {
	names := map[string]bool{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice:
			add(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if name := tagName(t.Field(i)); name != "" {
					names[name] = true
				}
				add(t.Field(i).Type)
			}
		}
	}
	for _, eventType := range knownTypes {
		add(reflect.TypeOf(newV1Event(eventType)))
	}
	return names
}()

// documentedDifferences returns the JSON Pointers of the members of body
// where Parse may differ from v1 by a documented difference: each member
// whose name its object has twice, and for each member whose name equals a
// field's only case-insensitively (as v1 matches names, by
// bytes.EqualFold), the member of that field's name. It returns nil for a
// body it cannot read.
func documentedDifferences(body []byte) []string {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var pointers []string
	var names []map[string]bool // the names of each open object
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return pointers
		}
		switch tok.Kind() {
		case '{':
			names = append(names, map[string]bool{})
			continue
		case '}':
			names = names[:len(names)-1]
			continue
		}
		// A string just read as the odd-numbered token of an object is a name.
		if kind, n := dec.StackIndex(dec.StackDepth()); tok.Kind() != '"' || kind != '{' || n%2 != 1 {
			continue
		}
		name, here := tok.String(), string(dec.StackPointer())
		if names[len(names)-1][name] {
			pointers = append(pointers, here)
		}
		names[len(names)-1][name] = true
		if jsonNames[name] {
			continue
		}
		parent := here[:strings.LastIndexByte(here, '/')]
		for known := range jsonNames {
			if strings.EqualFold(name, known) {
				pointers = append(pointers, parent+"/"+known)
			}
		}
	}
}
