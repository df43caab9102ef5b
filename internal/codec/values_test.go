package codec

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmallDecimal(t *testing.T) {
	for s, want := range map[string]struct {
		m   int64
		exp int32
		neg bool
		ok  bool
	}{
		"0": {0, 0, false, true}, "-0.00": {0, -2, true, true}, "12.50": {1250, -2, false, true},
		"-7": {-7, 0, true, true}, "123456789012345678": {123456789012345678, 0, false, true},
		"1234567890123456789": {ok: false}, "1e3": {ok: false}, "1.": {ok: false}, ".5": {ok: false},
		"007": {ok: false}, "": {ok: false}, "-": {ok: false}, "1.2.3": {ok: false},
	} {
		m, exp, neg, ok := SmallDecimal([]byte(s))
		assert.Equal(t, want.ok, ok, s)
		if want.ok {
			assert.Equal(t, []any{want.m, want.exp, want.neg}, []any{m, exp, neg}, s)
		}
	}
}

// FuzzParseDecimal: the fast path and decimal's own parser agree, exponent
// included, and FormatDecimal writes back what parsed.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0.00", "12.50", "1e3", "123456789012345678.9", "-1.5E-3", "007", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDecimal([]byte(s))
		want, wantErr := decimal.NewFromString(s)
		if wantErr != nil {
			require.Error(t, err, s)
			return
		}
		require.NoError(t, err, s)
		assert.True(t, got.Equal(want) && got.Exponent() == want.Exponent(), "%q: %v vs %v", s, got, want)
		back, err := ParseDecimal([]byte(FormatDecimal(got)))
		require.NoError(t, err)
		assert.True(t, back.Equal(got), s)
	})
}

func TestParseDate(t *testing.T) {
	d, err := ParseDate([]byte("2024-02-29"))
	require.NoError(t, err)
	assert.Equal(t, Date{2024, time.February, 29}, d)
	assert.Equal(t, "2024-02-29", string(AppendDate(nil, d)))
	for _, bad := range []string{"2026-02-29", "2026-13-01", "2026-1-01", "20260101", "", "2026-01-01T00:00:00Z"} {
		_, err := ParseDate([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// The fast path takes exactly the dates time.Parse takes, leap years
// included.
func TestParseDateFastAgreesWithTime(t *testing.T) {
	for _, y := range []int{0, 1, 4, 100, 400, 1900, 2000, 2023, 2024, 2026, 2100, 9999} {
		for m := 0; m <= 13; m++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("%04d-%02d-%02d", y, m, day)
				want, err := time.Parse(time.DateOnly, s)
				got, ok := parseDateFast([]byte(s))
				require.Equal(t, err == nil, ok, s)
				if ok {
					assert.Equal(t, Date{want.Year(), want.Month(), want.Day()}, got, s)
				}
			}
		}
	}
}

// canonicalTime says "as MarshalJSON writes it" only when it is: a fraction
// longer than a nanosecond's is truncated by parsing, so it must be kept.
func TestCanonicalTimeAgreesWithMarshalJSON(t *testing.T) {
	for _, s := range []string{
		`"2026-03-05T09:20:03Z"`, `"2026-03-05T09:20:03.1Z"`, `"2026-03-05T09:20:03.888848211Z"`,
		`"2026-03-05T09:20:03.8888482113Z"`, `"2026-03-05T09:20:03.10Z"`, `"2026-03-05T09:20:03+10:00"`,
		`"2026-03-05T09:20:03.000000000Z"`,
	} {
		var v time.Time
		require.NoError(t, v.UnmarshalJSON([]byte(s)), s)
		want := string(appendTime(nil, v)) == s
		if canonicalTime([]byte(s)) {
			assert.True(t, want, "%s is not what MarshalJSON writes", s)
		}
	}
}
