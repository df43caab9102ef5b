package invoicingtest

import (
	"math/rand/v2"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecimalJSON(t *testing.T) {
	for in, want := range map[string]string{
		"110": "110.00", "110.5": "110.50", "0.125": "0.125", "-3": "-3.00", "1.500": "1.50", "0": "0.00",
		"-0.05": "-0.05", "0.000": "0.00", "1E+2": "100.00", "123456789012345678.9": "123456789012345678.90",
	} {
		b, err := json.Marshal(money(dec(in)), encodeOptions)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), in)
	}
	for in, want := range map[string]string{
		"1": "1", "2.50": "2.5", "10": "10", "0.001": "0.001", "1E+2": "100", "0.000": "0", "-1.10": "-1.1",
	} {
		b, err := json.Marshal(number(dec(in)), encodeOptions)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), in)
	}
	b, err := json.Marshal(moneyString(dec("7")), encodeOptions)
	require.NoError(t, err)
	assert.Equal(t, `"7.00"`, string(b))
	b, err = json.Marshal(numberString(dec("7.50")), encodeOptions)
	require.NoError(t, err)
	assert.Equal(t, `"7.5"`, string(b))
}

func TestFormatMoneyShowsAtLeastTwoDecimalsAndNeverRounds(t *testing.T) {
	for in, want := range map[string]string{
		"12.5": "12.50", "12.500": "12.50", "0": "0.00", "-3": "-3.00",
		"0.125": "0.125", "1234.5678": "1234.5678", "0.1000": "0.10", "1E+2": "100.00",
	} {
		assert.Equal(t, want, FormatMoney(dec(in)), in)
	}
}

// TestAppendFixedMatchesStringFixed checks the fast path of appendFixed
// against the rounding-free use of StringFixed it replaces, over random
// coefficients and exponents, both sides of the 18-digit limit.
func TestAppendFixedMatchesStringFixed(t *testing.T) {
	reference := func(d decimal.Decimal, minPlaces int32) string {
		return d.StringFixed(max(minPlaces, -d.Normalize().Exponent()))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		digits := 1 + rng.IntN(20)
		coef := make([]byte, 0, digits+1)
		if rng.IntN(2) == 0 {
			coef = append(coef, '-')
		}
		for range digits {
			coef = append(coef, byte('0'+rng.IntN(10)))
		}
		d := decimal.RequireFromString(string(coef)).Shift(int32(rng.IntN(41) - 20))
		for _, minPlaces := range []int32{0, 2} {
			require.Equal(t, reference(d, minPlaces), string(appendFixed(nil, d, minPlaces)), "%s × 10^%d, minPlaces %d", d.Coefficient(), d.Exponent(), minPlaces)
		}
	}
}

func TestRequestDecimalsAreJSONNumbers(t *testing.T) {
	var v struct {
		A reqDecimal `json:"a"`
		B reqDecimal `json:"b"`
		C reqDecimal `json:"c"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a": 12.345678901234567890, "b": null}`), &v))
	assert.True(t, v.A.set)
	assert.Equal(t, "12.34567890123456789", v.A.value.String(), "no float64 on the way")
	assert.False(t, v.B.set)
	assert.False(t, v.C.set)
	require.NoError(t, json.Unmarshal([]byte(`{"a": 1.50}`), &v))
	assert.Equal(t, int32(-2), v.A.value.Exponent(), "the places sent are kept")
	assert.Error(t, json.Unmarshal([]byte(`{"a": "12.5"}`), &v))
	assert.Error(t, json.Unmarshal([]byte(`{"a": true}`), &v))
}

func TestLineAmountsRounding(t *testing.T) {
	cases := []struct{ qty, price, rate, net, tax string }{
		{"1", "100", "1", "100", "1"},
		{"2.5", "10.10", "10", "25.25", "2.53"},  // 2.525 rounds half away from zero
		{"1", "-10.05", "10", "-10.05", "-1.01"}, // -1.005 likewise
		{"3", "0.333", "10", "1", "0.1"},         // net 0.999 -> 1.00, tax 0.0999 -> 0.10
		{"1", "19.99", "0", "19.99", "0"},
	}
	for _, c := range cases {
		net, tax := lineAmounts(dec(c.qty), dec(c.price), dec(c.rate))
		assert.True(t, net.Equal(dec(c.net)), "%v net %s", c, net)
		assert.True(t, tax.Equal(dec(c.tax)), "%v tax %s", c, tax)
	}
}
