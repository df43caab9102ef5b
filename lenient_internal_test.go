package invoicing

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countedField counts how many times it is decoded.
type countedField int

func (c *countedField) UnmarshalJSON([]byte) error { *c++; return nil }

// countingRecord is a record like the SDK's, with a field that counts its
// decodes.
type countingRecord struct {
	RawObject
	N countedField `json:"n"`
	S string       `json:"s"`
}

func (r *countingRecord) UnmarshalJSON(b []byte) error {
	type alias countingRecord
	return decodeRaw(b, &r.RawObject, (*alias)(r))
}

// TestDecodeRawFitDecodesOnce: a record whose fields all fit is decoded by
// one json.Unmarshal; only a record with a field that does not fit is
// decoded a second time, field by field.
func TestDecodeRawFitDecodesOnce(t *testing.T) {
	var fit countingRecord
	require.NoError(t, json.Unmarshal([]byte(`{"n": 0, "s": "x"}`), &fit))
	assert.Equal(t, countedField(1), fit.N)
	assert.Equal(t, "x", fit.S)
	assert.Nil(t, fit.MismatchedFields())

	var odd countingRecord
	require.NoError(t, json.Unmarshal([]byte(`{"n": 0, "s": 5}`), &odd))
	assert.Equal(t, countedField(2), odd.N, "the strict attempt, then the field-by-field decode")
	assert.Equal(t, []string{"s"}, odd.MismatchedFields())
}

// outlineRecords are the types whose UnmarshalJSON is decodeRaw.
var outlineRecords = []any{Contact{}, Bill{}, BillLineItem{}, Account{}, TaxCode{}, Report{}, ReportLine{}, BankAccount{}, BankTransaction{}}

// TestDecodeFieldsAssumptions checks what decodeFields relies on to decode
// as encoding/json does: the records embed nothing but RawObject, use no
// ",string" option, and no two of their fields have names that match the
// same JSON key.
func TestDecodeFieldsAssumptions(t *testing.T) {
	for _, r := range outlineRecords {
		typ := reflect.TypeOf(r)
		var names []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				assert.Equal(t, reflect.TypeFor[RawObject](), f.Type, "%s embeds only RawObject", typ)
				continue
			}
			name, ok := jsonName(f)
			require.True(t, ok, "%s.%s is decoded", typ, f.Name)
			_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.NotContains(t, opts, "string", "%s.%s", typ, f.Name)
			for _, n := range names {
				assert.False(t, strings.EqualFold(n, name), "%s: %q and %q", typ, n, name)
			}
			names = append(names, name)
		}
	}
}

// TestDecodeFieldsMatchesEncodingJSON: on objects that fit, the
// field-by-field decode gives what one json.Unmarshal gives, with encoding/
// json's rules for names (case-insensitive, escaped keys, the last of
// duplicate keys), null and unknown members.
func TestDecodeFieldsMatchesEncodingJSON(t *testing.T) {
	type alias Account
	for _, body := range []string{
		`{}`,
		`{"id": "a", "code": "200", "name": "Sales", "type": "revenue", "is_active": true}`,
		`{"ID": "a", "Code": "200", "NAME": "Sales", "tYpE": "revenue", "Is_Active": false}`,
		`{"\u0069d": "escaped", "n\u0041me": "escaped too"}`,
		`{"id": "first", "id": "second", "ID": "third"}`,
		`{"ID": "first", "id": "second"}`,
		`{"id": null, "is_active": null, "name": null}`,
		`{"unknown": [1, {"x": 2}], "id": "a", "RawObject": {"raw": "x"}, "raw": "y"}`,
		`{"iſ_active": true, "codeſ": "not a field", "name": "ſ folds onto s, as in encoding/json"}`,
	} {
		var want alias
		require.NoError(t, json.Unmarshal([]byte(body), &want), body)
		var got alias
		bad, err := decodeFields([]byte(body), reflect.ValueOf(&got).Elem())
		require.NoError(t, err, body)
		assert.Nil(t, bad, body)
		assert.Equal(t, want, got, body)
	}

	type billAlias Bill
	body := `{"ID": "b", "Line_Items": [{"id": "l1", "quantity": 2}], "line_items": [{"quantity": 3}], "totals": 1}`
	var want, got billAlias
	require.NoError(t, json.Unmarshal([]byte(body), &want))
	bad, err := decodeFields([]byte(body), reflect.ValueOf(&got).Elem())
	require.NoError(t, err)
	assert.Nil(t, bad)
	assert.Equal(t, want, got, "later members decode into what earlier ones left, as with encoding/json")
}

// TestDecodeFieldsMismatches: a field with a member that does not fit is
// zero and named, in field order, even when another member for it fits.
func TestDecodeFieldsMismatches(t *testing.T) {
	type alias Account
	got := alias{Name: "kept: absent from the object"}
	bad, err := decodeFields([]byte(`{"is_active": 1, "code": 200, "CODE": "200", "id": "a", "type": "x", "type": ["y"]}`), reflect.ValueOf(&got).Elem())
	require.NoError(t, err)
	assert.Equal(t, []string{"code", "type", "is_active"}, bad)
	assert.Equal(t, alias{ID: "a", Name: "kept: absent from the object"}, got)
}
