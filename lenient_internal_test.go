package invoicing

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// outlineRecords are the types that decode with decodeLenient.
var outlineRecords = []any{Contact{}, Bill{}, BillLineItem{}, Account{}, TaxCode{}, Report{}, ReportLine{}, BankAccount{}, BankTransaction{}}

// TestOutlineRecordsAssumptions checks what decodeLenient and
// marshalLenient rely on: at most 64 fields (the presence bits), no
// ",string" option, no two fields of one JSON name, and the inline Extra.
func TestOutlineRecordsAssumptions(t *testing.T) {
	for _, r := range outlineRecords {
		typ := reflect.TypeOf(r)
		require.LessOrEqual(t, typ.NumField(), 64, "%s", typ)
		names := map[string]bool{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.NotContains(t, opts, "string", "%s.%s", typ, f.Name)
			assert.False(t, names[name], "%s: two fields named %q", typ, name)
			names[name] = true
		}
		extra, ok := typ.FieldByName("Extra")
		require.True(t, ok, "%s has Extra", typ)
		assert.Equal(t, reflect.TypeFor[Extra](), extra.Type)
		assert.Equal(t, ",embed", extra.Tag.Get("json"))
	}
}

// TestLenientMatchesStrictDecodeWhereFieldsFit: on objects whose fields all
// fit, the member-by-member decode gives what one encoding/json/v2 Unmarshal
// with the SDK's options gives (names matched exactly, escaped names, the
// last of duplicate names, null, unknown members kept in Extra).
func TestLenientMatchesStrictDecodeWhereFieldsFit(t *testing.T) {
	type plain Account
	for _, body := range []string{
		`{}`,
		`{"id": "a", "code": "200", "name": "Sales", "type": "revenue", "is_active": true}`,
		`{"ID": "a", "Code": "200", "NAME": "Sales", "tYpE": "revenue", "Is_Active": false}`,
		`{"\u0069d": "escaped", "n\u0061me": "escaped too"}`,
		`{"id": "first", "id": "second", "ID": "third"}`,
		`{"is_active": null}`,
		`{"unknown": [1, {"x": 2}], "id": "a", "Extra": {"raw": "x"}}`,
	} {
		var want plain
		require.NoError(t, jsonv2.Unmarshal([]byte(body), &want, jsonopt.Decode), body)
		var got Account
		require.NoError(t, json.Unmarshal([]byte(body), &got), body)
		assert.Nil(t, got.MismatchedFields(), body)
		got.from = decodedFrom{}
		assert.Equal(t, want, plain(got), body)
	}
}

// TestLenientMismatches: a field with a member that does not fit is zero,
// named in field order, and its value kept in Extra; a later member of its
// name is ignored.
func TestLenientMismatches(t *testing.T) {
	var got Account
	require.NoError(t, json.Unmarshal([]byte(`{"is_active": 1, "code": 200, "code": "200", "id": "a", "type": "x", "type": ["y"], "name": {"n": 1}}`), &got))
	assert.Equal(t, []string{"code", "name", "type", "is_active"}, got.MismatchedFields())
	assert.Equal(t, Extra{"code": []byte(`200`), "name": []byte(`{"n": 1}`), "type": []byte(`["y"]`), "is_active": []byte(`1`)}, got.Extra)
	assert.Equal(t, "a", got.ID)
	assert.Empty(t, got.Type, "the second member of type does not fit")
	assert.Empty(t, got.Code, "the first member of code does not fit; the second is ignored")
	assert.Nil(t, got.IsActive)
	assert.True(t, got.Has("code"))
	assert.True(t, got.Has("id"))
	assert.False(t, got.Has("missing"))
}
