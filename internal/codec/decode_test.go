package codec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A page's strings and amounts decode to what they say whatever its tables
// share: more distinct values than the tables have slots (so that slots
// are taken over), each given twice, and escaped strings beside plain ones.
func TestSharedValuesDecodeAsSent(t *testing.T) {
	const n = 3 * sharedSlots
	text := func(i int) string { return fmt.Sprintf("client-%d", i%(n/2)) }
	amount := func(i int) string { return fmt.Sprintf("%d.%02d", i%(n/2)+1, i%100) }
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		fmt.Fprintf(&b, "%q, %s, \"\\u0041%d\", ", text(i), amount(i), i)
	}
	b.WriteString("null]")
	for _, share := range []bool{true, false} {
		err := Decode([]byte(b.String()), share, func(d *Decoder) error {
			if _, err := d.dec.ReadToken(); err != nil {
				return err
			}
			for i := range n {
				var s, escaped string
				var x decimal.Decimal
				require.NoError(t, d.String(&s))
				require.NoError(t, d.Decimal(&x, 0))
				require.NoError(t, d.String(&escaped))
				require.Equal(t, text(i), s)
				require.Equal(t, amount(i), FormatDecimal(x))
				require.Equal(t, fmt.Sprintf("A%d", i), escaped)
			}
			require.NoError(t, d.Skip())
			_, err := d.dec.ReadToken()
			return err
		})
		require.NoError(t, err)
	}
}

// Whatever a page shared is the caller's alone once it is decoded: the
// tables the next document finds are empty.
func TestSharedTablesClearedAfterEachDocument(t *testing.T) {
	err := Decode([]byte(`["acme", 12.50]`), true, func(d *Decoder) error {
		var s string
		var x decimal.Decimal
		_, err := d.dec.ReadToken()
		require.NoError(t, err)
		require.NoError(t, d.String(&s))
		require.NoError(t, d.Decimal(&x, 0))
		_, err = d.dec.ReadToken()
		t.Cleanup(func() {
			assert.Equal(t, shared{seed: d.shared.seed}, *d.shared, "the tables are cleared")
			assert.Nil(t, d.texts)
		})
		return err
	})
	require.NoError(t, err)
}
