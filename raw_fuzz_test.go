package invoicing

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzLenientDecode decodes arbitrary bytes into a Bill and a Report. It
// checks that decoding never panics; that every JSON object decodes (a
// field that does not fit is no error) and every other value but null
// fails; that a decoded value keeps the input, trimmed, as its Raw; that
// MismatchedFields names only typed fields, once each, in field order, and
// leaves them zero; and that where one strict json.Unmarshal succeeds, the
// lenient decode and the field-by-field decode both give its result and
// name no field.
func FuzzLenientDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "lenient_*.json"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		var recs []json.RawMessage
		require.NoError(f, json.Unmarshal(b, &recs), name)
		for _, r := range recs {
			f.Add([]byte(r))
		}
	}
	for _, name := range []string{"bills_get.json", "bills_get_unknown.json", "reports_trial_balance.json", "reports_balance_sheet_other_shape.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		` {"ID": 7, "Line_Items": [null, {}, 1], "line_items": {"a": 1}, "LINES": [{"DEBIT": "x"}], "totals": "t"} `,
		`{"id": "a", "id": 7, "\u0069d": "b", "iſsue_date": "2026-01-02"}`,
		`{"lines": [{"account_type": 3}, [], null], "report": null, "as_at": ""}`,
		`null`, `[]`, `"x"`, `{`, `{"a":}`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLenient[Bill, billFuzzAlias](t, data)
		fuzzLenient[Report, reportFuzzAlias](t, data)
	})
}

// billFuzzAlias and reportFuzzAlias decode strictly: they have the records'
// fields but not their UnmarshalJSON.
type (
	billFuzzAlias   Bill
	reportFuzzAlias Report
)

func fuzzLenient[T, A any](t *testing.T, data []byte) {
	var v T
	err := json.Unmarshal(data, &v)
	trimmed := bytes.Trim(data, " \t\r\n")
	valid := json.Valid(data)
	object := valid && trimmed[0] == '{'
	if object {
		require.NoError(t, err, "a JSON object always decodes")
	} else if !valid || string(trimmed) != "null" {
		require.Error(t, err, "only an object or null decodes")
	}
	if err != nil {
		return
	}
	rv := reflect.ValueOf(&v).Elem()
	raw := rv.FieldByName("RawObject").Interface().(RawObject)
	if !object {
		require.Nil(t, raw.Raw(), "null leaves the value unchanged")
		return
	}
	require.Equal(t, string(trimmed), string(raw.Raw()))

	bad := raw.MismatchedFields()
	typ := rv.Type()
	next := 0 // names must come in field order, once each
	for _, name := range bad {
		found := false
		for i := next; i < typ.NumField(); i++ {
			if n, ok := jsonName(typ.Field(i)); ok && n == name {
				require.True(t, rv.Field(i).IsZero(), "mismatched field %q is zero", name)
				found, next = true, i+1
				break
			}
		}
		require.True(t, found, "%q in %q is a JSON name of a typed field, in field order", name, bad)
	}

	// Field by field from scratch, and one strict decode, for comparison.
	var slow A
	slowBad, err := decodeFields(trimmed, reflect.ValueOf(&slow).Elem())
	require.NoError(t, err, "a valid object always splits into members")
	var strict A
	if json.Unmarshal(data, &strict) != nil {
		require.NotEmpty(t, slowBad, "when the strict decode fails, some field does not fit")
		require.NotEmpty(t, bad, "when the strict decode fails, some field does not fit")
		return
	}
	require.Empty(t, bad, "nothing mismatches when the strict decode succeeds")
	require.Empty(t, slowBad)
	require.Equal(t, strict, slow, "the field-by-field decode is encoding/json's")
	rv.FieldByName("RawObject").SetZero()
	require.Equal(t, strict, reflect.ValueOf(&v).Elem().Convert(reflect.TypeFor[A]()).Interface())
}
