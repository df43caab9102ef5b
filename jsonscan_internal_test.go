package invoicing

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSkipValueCountsArrayElements(t *testing.T) {
	for in, want := range map[string]int{
		`[]`: 0, `[ ]`: 0, "[\n]": 0, `[1]`: 1, `[ 1 , 2 ]`: 2, `[{}]`: 1, `[[],[]]`: 2,
		`[{"a":[1,2,3]},{"b":{"c":[4,5]}}]`: 2, `["a,b","c]d"]`: 2, `[["x"]]`: 1,
		`[null,true,false,1.5e3,"\"],"]`: 5, `{"a":[1,2]}`: 0, `"[1,2]"`: 0, `12`: 0,
	} {
		end, n := skipValue([]byte(in+` ,"next"`), 0)
		assert.Equal(t, len(in), end, in)
		assert.Equal(t, want, n, in)
		if json.Valid([]byte(in)) && in[0] == '[' {
			var v []json.RawMessage
			assert.NoError(t, json.Unmarshal([]byte(in), &v))
			assert.Len(t, v, n, "the count of valid JSON is exact: %s", in)
		}
	}
}
