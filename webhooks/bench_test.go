package webhooks_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The benchmarks compare the package (sdk) with a hand-written baseline on
// the ~4 KB quote.accepted fixture, in one loop (internal/benchpair: every
// iteration runs both, alternating which goes first). Each reports
// baseline-ns/op, sdk-ns/op, their B/op and allocs/op, and the ratio
// sdk/baseline:
//
//	go test -run '^$' -bench . -count 10 ./webhooks | tee bench.txt
//	benchstat bench.txt

// runPair measures baseline and sdk with benchpair.Run.
func runPair(b *testing.B, baseline, sdk func() error) {
	benchpair.Run(b, 100, benchpair.Variant{Name: "baseline", Run: baseline}, benchpair.Variant{Name: "sdk", Run: sdk})
}

func BenchmarkVerify(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)
	key := []byte(testSecret)

	runPair(b, func() error {
		_, err := benchpair.BaselineVerify(key, header, body, testNow)
		return err
	}, func() error {
		return v.Verify(header, body)
	})
}

// BenchmarkVerifyParse measures a quote.accepted delivery verified and
// parsed: the baseline is the package as it was before encoding/json/v2
// (the same Verifier's Verify, then encoding/json into plain structs with
// the events' fields and tags, derived from them by plainStructOf); sdk is
// ParseDelivery. sdk/baseline must stay at or below 1/1.5 = 0.67.
func BenchmarkVerifyParse(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)
	plain := plainStructOf(reflect.TypeFor[webhooks.QuoteAccepted]())
	lineItems := func(e reflect.Value) int { return e.Elem().FieldByName("LineItems").Len() }

	runPair(b, func() error {
		if err := v.Verify(header, body); err != nil {
			return err
		}
		e := reflect.New(plain)
		if err := json.Unmarshal(body, e.Interface()); err != nil {
			return err
		}
		if lineItems(e) != 5 {
			return errors.New("wrong parse")
		}
		return nil
	}, func() error {
		d, err := v.ParseDelivery(header, body)
		if err != nil {
			return err
		}
		if len(d.Event.(*webhooks.QuoteAccepted).LineItems) != 5 {
			return errors.New("wrong parse")
		}
		return nil
	})
}

// plainStructOf returns, for an event type or a type nested in one, the
// type encoding/json decoded before the package had its own codec: a
// struct with the same exported fields and JSON names, without Extra, an
// embedded struct's fields inlined, and the same for the types nested in
// it. Other types are kept.
func plainStructOf(t reflect.Type) reflect.Type {
	switch t {
	case reflect.TypeFor[invoicing.Date](), reflect.TypeFor[decimal.Decimal](), reflect.TypeFor[time.Time](), reflect.TypeFor[jsontext.Value]():
		return t // with JSON methods of their own
	}
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(plainStructOf(t.Elem()))
	case reflect.Slice:
		return reflect.SliceOf(plainStructOf(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(t.Key(), plainStructOf(t.Elem()))
	case reflect.Struct:
		var fields []reflect.StructField
		var add func(t reflect.Type)
		add = func(t reflect.Type) {
			for i := range t.NumField() {
				f := t.Field(i)
				switch {
				case !f.IsExported() || f.Name == "Extra":
				case f.Anonymous:
					add(f.Type)
				default:
					name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
					fields = append(fields, reflect.StructField{
						Name: f.Name, Type: plainStructOf(f.Type), Tag: reflect.StructTag(`json:"` + name + `"`),
					})
				}
			}
		}
		add(t)
		return reflect.StructOf(fields)
	}
	return t
}

// TestBaselineVerifyAgrees checks the benchmarks' baseline against
// Verifier.Verify: the same headers and tolerance, the same verdicts.
func TestBaselineVerifyAgrees(t *testing.T) {
	require := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Fatalf(format, args...)
		}
	}
	require(benchpair.HeaderTimestamp == webhooks.HeaderTimestamp && benchpair.HeaderSignature == webhooks.HeaderSignature,
		"benchpair's header names are not the package's")
	require(benchpair.Tolerance == webhooks.DefaultTolerance, "benchpair's tolerance is not the package's")
	body := fixture(t, "quote.accepted.json")
	v := newVerifier(t)
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"signed", signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)},
		{"another secret", signedHeader("another", testTimestamp, webhooks.EventQuoteAccepted, body)},
		{"stale", signedHeader(testSecret, "1772701700", webhooks.EventQuoteAccepted, body)},
		{"no signature", http.Header{webhooks.HeaderTimestamp: {testTimestamp}}},
	} {
		_, err := benchpair.BaselineVerify([]byte(testSecret), tc.header, body, testNow)
		want := v.Verify(tc.header, body)
		require((err == nil) == (want == nil), "%s: baseline %v, Verify %v", tc.name, err, want)
	}

	// plainStructOf decodes the fixture into the event's values.
	e := reflect.New(plainStructOf(reflect.TypeFor[webhooks.QuoteAccepted]()))
	require(json.Unmarshal(body, e.Interface()) == nil, "plain decoding")
	plain, err := json.Marshal(e.Interface())
	require(err == nil, "%v", err)
	var fields map[string]any
	require(json.Unmarshal(plain, &fields) == nil, "plain re-encoding")
	require(fields["quote_number"] == "QU-0137" && len(fields["line_items"].([]any)) == 5, "plain decoding: %s", plain)
}
