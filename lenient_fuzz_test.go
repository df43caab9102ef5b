package invoicing_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// FuzzOutlineRecords decodes arbitrary bytes into a Bill and a Report (the
// outline records with nested records and odd shapes). Decoding never
// panics; every JSON object decodes (a field that does not fit is no
// error) and every other value but null fails; a decoded record loses no
// member (Has finds every top-level name) and encodes to JSON that decodes
// back to a record encoding to the same bytes.
func FuzzOutlineRecords(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "lenient_*.json"))
	require.NoError(f, err)
	for _, name := range files {
		var recs []json.RawMessage
		require.NoError(f, json.Unmarshal([]byte(fixture(f, filepath.Base(name))), &recs), name)
		for _, r := range recs {
			f.Add([]byte(r))
		}
	}
	for _, name := range []string{"bills_get.json", "bills_get_unknown.json", "reports_trial_balance.json", "reports_balance_sheet_other_shape.json"} {
		f.Add([]byte(fixture(f, name)))
	}
	for _, s := range []string{
		` {"ID": 7, "Line_Items": [null, {}, 1], "line_items": {"a": 1}, "LINES": [{"DEBIT": "x"}], "totals": "t"} `,
		`{"id": "a", "id": 7, "\u0069d": "b", "iſsue_date": "2026-01-02", "total": null}`,
		`{"lines": [{"account_type": 3}, [], null], "report": null, "as_at": "", "totals": null}`,
		`{"line_items":[null,{}],"totals":"x","lines":[]}`, `{"a\u0000":1,"a":2,"a":3}`,
		`null`, `[]`, `"x"`, `{`, `{"a":}`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOutline[invoicing.Bill](t, data)
		fuzzOutline[invoicing.Report](t, data)
	})
}

func fuzzOutline[T any, P interface {
	*T
	Has(string) bool
}](t *testing.T, data []byte) {
	v := P(new(T))
	err := json.Unmarshal(data, v)
	trimmed := strings.Trim(string(data), " \t\r\n")
	valid := json.Valid(data)
	object := valid && trimmed[0] == '{'
	switch {
	case object:
		require.NoError(t, err, "a JSON object always decodes")
	case !valid || trimmed != "null":
		require.Error(t, err, "only an object or null decodes")
	}
	if err != nil || !object {
		return
	}
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &members))
	for name := range members {
		require.True(t, v.Has(name), "member %q is kept", name)
	}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	again := P(new(T))
	require.NoError(t, json.Unmarshal(out, again), "%s", out)
	out2, err := json.Marshal(again)
	require.NoError(t, err)
	require.Equal(t, string(out), string(out2), "encoding is a fixed point after one round")
	var back map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out, &back))
	require.Len(t, back, len(members), "the same members: %s", out)
}
