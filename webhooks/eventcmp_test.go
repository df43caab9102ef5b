package webhooks_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// An event remembers, in an unexported field (meta), how the JSON it was
// parsed from differs from what its fields would write: absent members,
// null where the field writes "", money sent as a number... So a parsed
// event equals (reflect.DeepEqual, assert.Equal) the same event built in
// code only when the body was exactly its canonical JSON. The tests compare
// other parsed events with assertSameEvent: field by field, as a user reads
// them.

var (
	decimalType = reflect.TypeFor[decimal.Decimal]()
	timeType    = reflect.TypeFor[time.Time]()
)

// assertSameEvent checks that got has the exported field values of want,
// at every depth, and reports each difference by its JSON path.
func assertSameEvent(t testing.TB, want, got any, msgAndArgs ...any) bool {
	t.Helper()
	diffs := eventDiffs("", reflect.ValueOf(want), reflect.ValueOf(got))
	if len(diffs) == 0 {
		return true
	}
	msg := ""
	if len(msgAndArgs) > 0 {
		msg = fmt.Sprintf(fmt.Sprint(msgAndArgs[0]), msgAndArgs[1:]...) + ": "
	}
	t.Errorf("%sthe events differ:\n\t%s", msg, joinLines(diffs))
	return false
}

// requireSameEvent is assertSameEvent, stopping the test on a difference.
func requireSameEvent(t testing.TB, want, got any, msgAndArgs ...any) {
	t.Helper()
	if !assertSameEvent(t, want, got, msgAndArgs...) {
		t.FailNow()
	}
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(l)
	}
	return b.String()
}

// eventDiffs compares want and got, values of the package's event types or
// of the types nested in them, by their exported fields, and returns where
// they differ, each difference starting with its path (JSON names, such as
// "/line_items/6/item_code"). It is reflect.DeepEqual but for the
// unexported field meta, which it skips, and for these types:
//
//   - decimal.Decimal: the same value with the same number of places (1.50
//     is not 1.5);
//   - time.Time: the same instant with the same offset, as RFC 3339 writes
//     it (09:14:21Z is not 20:14:21+11:00).
//
// Nil and empty slices and maps differ, as for reflect.DeepEqual. An
// unexported field other than meta is a mistake of the test: it panics.
func eventDiffs(path string, want, got reflect.Value) []string {
	differ := func() []string {
		return []string{fmt.Sprintf("%s: want %s, got %s", pathOrTop(path), show(want), show(got))}
	}
	if !want.IsValid() || !got.IsValid() {
		if want.IsValid() != got.IsValid() {
			return differ()
		}
		return nil
	}
	if want.Type() != got.Type() {
		return []string{fmt.Sprintf("%s: want a %s, got a %s", pathOrTop(path), want.Type(), got.Type())}
	}
	switch t := want.Type(); {
	case t == decimalType:
		w, g := want.Interface().(decimal.Decimal), got.Interface().(decimal.Decimal)
		if !w.Equal(g) || w.Exponent() != g.Exponent() {
			return differ()
		}
	case t == timeType:
		w, g := want.Interface().(time.Time), got.Interface().(time.Time)
		if w.Format(time.RFC3339Nano) != g.Format(time.RFC3339Nano) {
			return differ()
		}
	case t.Kind() == reflect.Interface, t.Kind() == reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				return differ()
			}
			return nil
		}
		return eventDiffs(path, want.Elem(), got.Elem())
	case t.Kind() == reflect.Struct:
		var diffs []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				if f.Name != "meta" {
					panic(fmt.Sprintf("eventDiffs: %s has the unexported field %s", t, f.Name))
				}
				continue
			}
			p := path
			switch name := tagName(f); {
			case f.Anonymous:
			case name == "":
				p += "/" + f.Name
			default:
				p += "/" + name
			}
			diffs = append(diffs, eventDiffs(p, want.Field(i), got.Field(i))...)
		}
		return diffs
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8: // raw JSON
		if want.IsNil() != got.IsNil() || !bytes.Equal(want.Bytes(), got.Bytes()) {
			return differ()
		}
	case t.Kind() == reflect.Slice:
		if want.IsNil() != got.IsNil() || want.Len() != got.Len() {
			return differ()
		}
		var diffs []string
		for i := range want.Len() {
			diffs = append(diffs, eventDiffs(fmt.Sprintf("%s/%d", path, i), want.Index(i), got.Index(i))...)
		}
		return diffs
	case t.Kind() == reflect.Map:
		if want.IsNil() != got.IsNil() || want.Len() != got.Len() {
			return differ()
		}
		var diffs []string
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				return differ()
			}
			diffs = append(diffs, eventDiffs(fmt.Sprintf("%s/%v", path, k), want.MapIndex(k), g)...)
		}
		return diffs
	default: // strings, bool, int
		if want.Interface() != got.Interface() {
			return differ()
		}
	}
	return nil
}

func pathOrTop(path string) string {
	if path == "" {
		return "(the event)"
	}
	return path
}

// show formats a value of eventDiffs for its message.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	switch x := v.Interface().(type) {
	case decimal.Decimal:
		return fmt.Sprintf("%s (exponent %d)", x, x.Exponent())
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	switch {
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		if v.IsNil() {
			return "nil"
		}
		return fmt.Sprintf("%q", v.Bytes())
	case v.Kind() == reflect.Pointer && !v.IsNil():
		return "&" + show(v.Elem())
	}
	return fmt.Sprintf("%#v", v.Interface())
}

// builtCopy returns a deep copy of the event (or nested object) v with its
// exported fields only: the event as code would build it, with the values
// Parse gave, remembering nothing of the JSON they came from.
func builtCopy[T any](v T) T {
	out := reflect.New(reflect.TypeOf(v)).Elem()
	copyExported(out, reflect.ValueOf(v))
	return out.Interface().(T)
}

func copyExported(dst, src reflect.Value) {
	switch t := src.Type(); {
	case t == decimalType || t == timeType:
		dst.Set(src)
	case t.Kind() == reflect.Interface:
		if !src.IsNil() {
			v := reflect.New(src.Elem().Type()).Elem()
			copyExported(v, src.Elem())
			dst.Set(v)
		}
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				copyExported(dst.Field(i), src.Field(i))
			}
		}
	case t.Kind() == reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(t.Elem()))
			copyExported(dst.Elem(), src.Elem())
		}
	case t.Kind() == reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(t, src.Len(), src.Len()))
			for i := range src.Len() {
				copyExported(dst.Index(i), src.Index(i))
			}
		}
	case t.Kind() == reflect.Map:
		if !src.IsNil() {
			dst.Set(reflect.MakeMapWithSize(t, src.Len()))
			for _, k := range src.MapKeys() {
				v := reflect.New(t.Elem()).Elem()
				copyExported(v, src.MapIndex(k))
				dst.SetMapIndex(k, v)
			}
		}
	default:
		dst.Set(src)
	}
}

// TestEventDiffs checks the comparison the tests rely on: it finds a
// difference at any depth, in every way two values can differ, and only
// there.
func TestEventDiffs(t *testing.T) {
	for name, eventType := range fixtures {
		a, b := mustParse(t, eventType, fixture(t, name)), mustParse(t, eventType, fixture(t, name))
		if diffs := eventDiffs("", reflect.ValueOf(a), reflect.ValueOf(b)); len(diffs) > 0 {
			t.Fatalf("%s parsed twice: %v", name, diffs)
		}
		if diffs := eventDiffs("", reflect.ValueOf(a), reflect.ValueOf(builtCopy(a))); len(diffs) > 0 {
			t.Fatalf("%s and its built copy: %v", name, diffs)
		}
	}

	parse := func() *webhooks.QuoteAccepted {
		return mustParse(t, "quote.accepted", withUnknownMembers(fixture(t, "quote.accepted.json"))).(*webhooks.QuoteAccepted)
	}
	for _, tc := range []struct {
		path   string
		change func(e *webhooks.QuoteAccepted)
	}{
		{"/quote_number", func(e *webhooks.QuoteAccepted) { e.QuoteNumber += "x" }},
		{"/client_address/city", func(e *webhooks.QuoteAccepted) { e.ClientAddress.City = "" }},
		{"/line_items/4/item_code", func(e *webhooks.QuoteAccepted) { e.LineItems[4].ItemCode = "TRAVEL" }},
		{"/line_items/0/optional", func(e *webhooks.QuoteAccepted) { e.LineItems[0].Optional = true }},
		{"/line_items/1/unit_price", func(e *webhooks.QuoteAccepted) { e.LineItems[1].UnitPrice = dec("49.950") }},
		{"/total", func(e *webhooks.QuoteAccepted) { e.Total = e.Total.Add(dec("0.01")) }},
		{"/accepted_at", func(e *webhooks.QuoteAccepted) { e.AcceptedAt = e.AcceptedAt.In(time.FixedZone("", 11*3600)) }},
		{"/accepted_at", func(e *webhooks.QuoteAccepted) { e.AcceptedAt = e.AcceptedAt.Add(time.Nanosecond) }},
		{"/issue_date", func(e *webhooks.QuoteAccepted) { e.IssueDate.Day++ }},
		{"/quote_public_url", func(e *webhooks.QuoteAccepted) { e.QuotePublicURL = nil }},
		{"/invoice_share_url", func(e *webhooks.QuoteAccepted) { *e.InvoiceShareURL += "/" }},
		{"/accepting_contact/contact_name", func(e *webhooks.QuoteAccepted) { e.AcceptingContact.ContactName = "J" }},
		{"/recipients", func(e *webhooks.QuoteAccepted) { e.Recipients = e.Recipients[:2] }},
		{"/line_items", func(e *webhooks.QuoteAccepted) { e.LineItems = e.LineItems[:0] }},
		{"/interactive_selections", func(e *webhooks.QuoteAccepted) { e.InteractiveSelections = nil }},
		{"/interactive_selections/section-2", func(e *webhooks.QuoteAccepted) {
			e.InteractiveSelections["section-2"] = e.InteractiveSelections["section-2"][1:]
		}},
		{"/Extra", func(e *webhooks.QuoteAccepted) { delete(e.Extra, "future_field") }},
		{"/line_items/2/Extra/discount_rate", func(e *webhooks.QuoteAccepted) {
			e.LineItems[2].Extra["discount_rate"] = []byte(`"2.5"`)
		}},
	} {
		want, got := parse(), parse()
		tc.change(got)
		diffs := eventDiffs("", reflect.ValueOf(want), reflect.ValueOf(got))
		if len(diffs) != 1 || !strings.HasPrefix(diffs[0], tc.path) || !strings.ContainsAny(diffs[0][len(tc.path):][:1], ":/") {
			t.Errorf("changed %s, found %q", tc.path, diffs)
		}
	}
}
