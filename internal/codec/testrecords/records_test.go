package testrecords

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

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// canonical is a Record as it writes itself: every field, in field order,
// each value in the form the field writes, then Extra in name order.
const canonical = `{"kind":"k","count":2,"name":"Ann","status":"paid","note":"n","maybe":"m","on":true,"on_ptr":false,` +
	`"n":-3,"n_ptr":4,"money":12.50,"wire":"7.00","money_ptr":0.10,"at":"2026-01-02T03:04:05.5+10:00",` +
	`"at_ptr":"2026-01-02T03:04:05Z","day":"2026-02-28","raw":[1,{"a":null}],"raw_map":{"a":1,"b":"x"},` +
	`"custom":{"t":1},"line":{"id":"l0","amount":1},"line_ptr":{"id":"l1","amount":-1.5},` +
	`"lines":[{"id":"l2","amount":3,"x":true}],"optional":"o","Untagged":"u","zz":{"deep":[1]}}`

// built is the Record canonical holds, built in code.
func built() Record {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	note, maybe, off, four := "n", Status("m"), false, 4
	return Record{
		Common: Common{Kind: "k", Count: 2}, Name: "Ann", Status: "paid", Note: &note, Maybe: &maybe,
		On: true, OnPtr: &off, N: -3, NPtr: &four, Money: decimal.New(1250, -2), Wire: decimal.New(700, -2),
		MoneyPtr: ptr(decimal.New(10, -2)), At: time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.FixedZone("", 10*3600)), AtPtr: &at,
		Day: Day{2026, 2, 28}, Raw: jsontext.Value(`[1,{"a":null}]`),
		RawMap: map[string]jsontext.Value{"a": jsontext.Value("1"), "b": jsontext.Value(`"x"`)},
		Custom: Custom{raw: jsontext.Value(`{"t":1}`)}, Line: Line{ID: "l0", Amount: decimal.New(1, 0)},
		LinePtr:  &Line{ID: "l1", Amount: decimal.New(-15, -1)},
		Lines:    []Line{{ID: "l2", Amount: decimal.New(3, 0), Extra: Extra{"x": jsontext.Value("true")}}},
		Optional: "o", Untagged: "u", Extra: Extra{"zz": jsontext.Value(`{"deep":[1]}`)},
	}
}

func ptr[T any](v T) *T { return &v }

func decode(t *testing.T, body string) Record {
	t.Helper()
	var r Record
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	return r
}

// encode marshals v with encoding/json and checks that encoding/json/v2
// writes the same.
func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	b2, err := jsonv2.Marshal(v)
	require.NoError(t, err)
	require.JSONEq(t, string(b), string(b2), "encoding/json and encoding/json/v2 agree")
	return string(b)
}

func TestCanonicalRoundTripsByteForByte(t *testing.T) {
	r := decode(t, canonical)
	assert.Equal(t, canonical, encode(t, r), "what the record writes of itself comes back byte for byte")
	assert.Equal(t, canonical, encode(t, built()), "a record built in code writes the same")
	b := built()
	assert.Equal(t, b.At.Format(time.RFC3339Nano), r.At.Format(time.RFC3339Nano))
	r.At, b.At = time.Time{}, time.Time{} // the same instant and offset; locations differ in pointer only
	assert.True(t, reflect.DeepEqual(b, r), "decoded from its own JSON, a record holds nothing more than built in code")
	assert.Equal(t, "Ann", r.Name)
}

// Each case changes one member of canonical; the record must write back
// exactly the changed document.
func TestEveryVariantEncodesBackAsSent(t *testing.T) {
	cases := map[string][2]string{
		"money as a string":             {`"money":12.50`, `"money":"-5.00"`},
		"wire money as a number":        {`"wire":"7.00"`, `"wire":7.00`},
		"negative zero":                 {`"money":12.50`, `"money":-0.00`},
		"exponent":                      {`"money":12.50`, `"money":1.25E1`},
		"many digits":                   {`"money":12.50`, `"money":123456789012345678901234567890.123`},
		"null string":                   {`"name":"Ann"`, `"name":null`},
		"null bool":                     {`"on":true`, `"on":null`},
		"null int":                      {`"n":-3`, `"n":null`},
		"negative zero int":             {`"n":-3`, `"n":-0`},
		"null money":                    {`"money":12.50`, `"money":null`},
		"null time":                     {`"at":"2026-01-02T03:04:05.5+10:00"`, `"at":null`},
		"time with +00:00":              {`"at":"2026-01-02T03:04:05.5+10:00"`, `"at":"2026-01-02T03:04:05+00:00"`},
		"time with trailing zeros":      {`"at":"2026-01-02T03:04:05.5+10:00"`, `"at":"2026-01-02T03:04:05.500+10:00"`},
		"empty date":                    {`"day":"2026-02-28"`, `"day":""`},
		"null date":                     {`"day":"2026-02-28"`, `"day":null`},
		"null record":                   {`"line":{"id":"l0","amount":1}`, `"line":null`},
		"null pointer record":           {`"line_ptr":{"id":"l1","amount":-1.5}`, `"line_ptr":null`},
		"null element":                  {`"lines":[{"id":"l2","amount":3,"x":true}]`, `"lines":[null,{"id":"l3","amount":1}]`},
		"empty array":                   {`"lines":[{"id":"l2","amount":3,"x":true}]`, `"lines":[]`},
		"null array":                    {`"lines":[{"id":"l2","amount":3,"x":true}]`, `"lines":null`},
		"absent optional":               {`"optional":"o",`, ``},
		"present empty optional":        {`"optional":"o"`, `"optional":""`},
		"absent required":               {`"name":"Ann",`, ``},
		"absent pointer":                {`"note":"n",`, ``},
		"absent nested":                 {`"line":{"id":"l0","amount":1},`, ``},
		"absent in a line":              {`{"id":"l0","amount":1}`, `{"id":"l0"}`},
		"money string in a line":        {`{"id":"l0","amount":1}`, `{"id":"l0","amount":"1.000"}`},
		"null raw":                      {`"raw":[1,{"a":null}]`, `"raw":null`},
		"null raw map":                  {`"raw_map":{"a":1,"b":"x"}`, `"raw_map":null`},
		"empty raw map":                 {`"raw_map":{"a":1,"b":"x"}`, `"raw_map":{}`},
		"escaped name and value":        {`"name":"Ann"`, `"n\u0061me":"A\u006en"`},
		"unknown member first":          {`{"kind"`, `{"aa":[],"kind"`},
		"name given twice, last wins":   {`"name":"Ann"`, `"name":"Bob","name":"Ann"`},
		"a field named in another case": {`"name":"Ann"`, `"name":"Ann","NAME":"x"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.Contains(t, canonical, c[0])
			body := strings.Replace(canonical, c[0], c[1], 1)
			r := decode(t, body)
			assert.JSONEq(t, body, encode(t, r))
			assertSameText(t, body, encode(t, r))
			again := decode(t, encode(t, r))
			assert.Equal(t, encode(t, r), encode(t, again), "stable")
		})
	}
}

// assertSameText checks that every scalar of want is written with the same
// text in got (JSONEq compares numbers by value, and strings only once
// decoded).
func assertSameText(t *testing.T, want, got string) {
	t.Helper()
	var w, g any
	dw, dg := json.NewDecoder(strings.NewReader(want)), json.NewDecoder(strings.NewReader(got))
	dw.UseNumber()
	dg.UseNumber()
	require.NoError(t, dw.Decode(&w))
	require.NoError(t, dg.Decode(&g))
	assert.Equal(t, w, g, "numbers keep their text, strings stay strings")
}

func TestChangedFieldsWriteTheirNewValue(t *testing.T) {
	body := strings.NewReplacer(`"money":12.50`, `"money":"12.50"`, `"name":"Ann",`, ``, `"on":true`, `"on":null`).Replace(canonical)
	r := decode(t, body)
	r.Money = decimal.New(99, 0)
	r.Name = "Zed"
	r.On = true
	out := encode(t, r)
	assert.Contains(t, out, `"money":99,`, "a value changed since decoding is written as the field writes it")
	assert.Contains(t, out, `"name":"Zed"`, "a field set since decoding is written though its member was absent")
	assert.Contains(t, out, `"on":true`)

	r = decode(t, body)
	r.Money = decimal.RequireFromString("12.5")
	assert.Contains(t, encode(t, r), `"money":12.5,`, "12.5 is not 12.50: the kept text no longer holds")
}

func TestExtraWinsOverAFieldOfItsName(t *testing.T) {
	r := built()
	r.Extra = Extra{"name": jsontext.Value(`{"first":"Ann"}`)}
	out := encode(t, r)
	assert.Equal(t, 1, strings.Count(out, `"name":`), "one member, no duplicate")
	assert.Contains(t, out, `"name":{"first":"Ann"}`)
}

func TestDecodingStartsAfreshAndNullLeavesRecordUnchanged(t *testing.T) {
	r := decode(t, canonical)
	require.NoError(t, json.Unmarshal([]byte(`null`), &r))
	assert.Equal(t, canonical, encode(t, r))
	require.NoError(t, json.Unmarshal([]byte(`{"name":"B"}`), &r))
	assert.Equal(t, "B", r.Name)
	assert.Empty(t, r.Kind)
	assert.Nil(t, r.Extra)
	assert.JSONEq(t, `{"name":"B"}`, encode(t, r))
}

func TestStrictRecordErrorsNameTheField(t *testing.T) {
	for body, want := range map[string]string{
		`{"lines":[{"id":"a"},{"amount":{}}]}`: "field lines[1].amount",
		`{"n":1.5}`:                            "field n: want an integer",
		`{"name":1}`:                           "field name: want a string, got a number",
		`{"day":"2026-02-30"}`:                 "invalid date",
		`{"at":"yesterday"}`:                   "field at",
		`[1]`:                                  "a record must be a JSON object, got an array",
		`{"name":"a"} {}`:                      "invalid data after the top-level value",
		`{"name":"a"`:                          "unexpected EOF",
	} {
		var r Record
		err := codec.Decode([]byte(body), false, r.decodeJSON)
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
}

// Wide has 70 fields: no limit on the number of fields.
func TestLenientRecordOfSeventyFields(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 70 {
		if i > 0 {
			b.WriteString(",")
		}
		switch {
		case i == 65:
			fmt.Fprintf(&b, `"F%02d":"not a number"`, i)
		case i == 3:
			fmt.Fprintf(&b, `"F%02d":3`, i)
		case i == 66:
			fmt.Fprintf(&b, `"F%02d":null`, i)
		case i >= 60:
			fmt.Fprintf(&b, `"F%02d":%d`, i, i)
		default:
			fmt.Fprintf(&b, `"F%02d":"v%d"`, i, i)
		}
	}
	b.WriteString(`,"other":1}`)
	body := strings.Replace(b.String(), `,"F69":69`, ``, 1) // absent, and past 64
	var w Wide
	require.NoError(t, json.Unmarshal([]byte(body), &w))
	assert.Equal(t, []string{"F03", "F65"}, w.MismatchedFields())
	assert.Zero(t, w.F65)
	assert.Equal(t, 64, w.F64)
	assert.True(t, w.Has("F66"), "null is a member")
	assert.False(t, w.Has("F69"), "absent")
	assert.True(t, w.Has("other"))
	assert.JSONEq(t, body, encode(t, w))
	assertSameText(t, body, encode(t, w))

	var built Wide
	assert.True(t, built.Has("F69"), "a record built in code writes every field")
	assert.Nil(t, built.MismatchedFields())
}

func TestLenientMismatchThenFittingDuplicate(t *testing.T) {
	var w Wide
	require.NoError(t, json.Unmarshal([]byte(`{"F00":1,"F00":"fits"}`), &w))
	assert.Equal(t, "fits", w.F00)
	assert.Nil(t, w.MismatchedFields())
	assert.Nil(t, w.Extra)
}

func TestParamsWriteAsTagged(t *testing.T) {
	p := Params{Name: "", Price: decimal.Zero, Lines: []LineParams{{Description: "d"}},
		Extra: map[string]any{"z": map[string]any{"amount": decimal.RequireFromString("1.50")}, "a": []int{1}}}
	out := encode(t, p)
	assert.Equal(t, `{"name":"","price":0,"lines":[{"description":"d"}],"a":[1],"z":{"amount":1.50}}`, out)

	for p, want := range map[*Params]string{
		{Extra: map[string]any{"name": "x"}}: "name: is set both by a typed field and in Extra",
		{Extra: map[string]any{"": 1}}:       "Extra: has a member with an empty name",
		{Lines: []LineParams{{}, {Description: "d", Extra: map[string]any{"description": 1}}}}: "lines[1].description: is set both",
		{Extra: map[string]any{"c": make(chan int)}}:                                           "c: cannot be encoded as JSON",
	} {
		_, err := json.Marshal(p)
		require.Error(t, err)
		var fe *codec.FieldError
		require.True(t, errors.As(err, &fe), "%v", err)
		assert.Contains(t, fe.Error(), want)
	}
	out = encode(t, Params{Note: "n", Extra: map[string]any{"note2": 1}})
	assert.Equal(t, `{"name":"","note":"n","price":0,"note2":1}`, out, "an Extra member whose name a field does not write is sent")
}

// Sharing strings and coefficients across the records of a page must not
// change a value.
func TestSharingGivesEqualValues(t *testing.T) {
	page := []byte(`[` + canonical + `,` + canonical + `]`)
	var shared, plain []Record
	for _, c := range []struct {
		share bool
		dst   *[]Record
	}{{true, &shared}, {false, &plain}} {
		require.NoError(t, codec.Decode(page, c.share, func(d *codec.Decoder) error {
			return codec.ReadRecords(d, c.dst, (*Record).decodeJSON)
		}))
	}
	require.Len(t, shared, 2)
	for i := range shared {
		assert.Equal(t, encode(t, plain[i]), encode(t, shared[i]))
	}
	shared[0].Lines[0].Amount = decimal.New(1, 0)
	assert.Equal(t, "3", shared[1].Lines[0].Amount.String(), "a shared coefficient is never changed in place")
}

func TestRecordsUpTo(t *testing.T) {
	page := []byte(`[{"id":"1"},{"id":"2"},{"id":"3"}]`)
	var lines []Line
	err := codec.Decode(page, true, func(d *codec.Decoder) error {
		return codec.ReadRecordsUpTo(d, &lines, 2, (*Line).decodeJSON)
	})
	var tm *codec.TooManyError
	require.ErrorAs(t, err, &tm)
	assert.Equal(t, codec.TooManyError{Count: 3, Limit: 2}, *tm)
}

// FuzzRecordRoundTrip: whatever decodes writes back the same JSON value
// (numbers with their text), and writing is stable.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add([]byte(canonical))
	f.Add([]byte(`{"lines":[null,{"amount":"1"}],"name":null,"x":1,"x":2}`))
	f.Add([]byte(`{"F00":1,"F64":"x","F65":2,"Q":[{}]}`))
	f.Add([]byte(`{"money":1e400,"wire":"1e-400","at":"2026-01-02T03:04:05.000000001-00:30"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []any{new(Record), new(Wide), new(Line)} {
			if json.Unmarshal(b, v) != nil {
				continue
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%T decoded %q but does not encode: %v", v, b, err)
			}
			if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
				continue // null: the record is unchanged (zero)
			}
			var in, got any
			if ok := decodeNumbers(b, &in) && decodeNumbers(out, &got); !ok {
				t.Fatalf("%T: %q → %q", v, b, out)
			}
			if !reflect.DeepEqual(in, got) {
				t.Fatalf("%T: %q\nwrote %q", v, b, out)
			}
			again := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			require.NoError(t, json.Unmarshal(out, again))
			out2, err := json.Marshal(again)
			require.NoError(t, err)
			if !bytes.Equal(out, out2) {
				t.Fatalf("%T: unstable: %q then %q", v, out, out2)
			}
		}
	})
}

// decodeNumbers decodes b as encoding/json does, numbers as their text; a
// name given twice keeps the last member.
func decodeNumbers(b []byte, v *any) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v) == nil
}
