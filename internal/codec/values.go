package codec

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Date is the layout of a civil date (invoicing.Date converts to it): the
// codec reads and writes it as "YYYY-MM-DD", and the zero Date as null.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses YYYY-MM-DD, refusing any other layout and impossible
// dates such as 2026-02-30.
func ParseDate(b []byte) (Date, error) {
	if d, ok := parseDateFast(b); ok {
		return d, nil
	}
	t, err := time.Parse(time.DateOnly, string(b))
	if err != nil {
		return Date{}, fmt.Errorf("invalid date %q: want YYYY-MM-DD", b)
	}
	y, m, day := t.Date()
	return Date{y, m, day}, nil
}

// AppendDate appends d as YYYY-MM-DD.
func AppendDate(b []byte, d Date) []byte {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).AppendFormat(b, time.DateOnly)
}

// parseDateFast parses the YYYY-MM-DD form of a real date without
// allocating; ok is false for anything else.
func parseDateFast(b []byte) (Date, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return Date{}, false
	}
	n := 0
	for i, c := range b {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return Date{}, false
		}
		n = n*10 + int(c-'0')
	}
	d := Date{Year: n / 10000, Month: time.Month(n / 100 % 100), Day: n % 100}
	if d.Month < 1 || d.Month > 12 || d.Day < 1 || d.Day > daysIn(d.Month, d.Year) {
		return Date{}, false
	}
	return d, true
}

// daysIn returns the number of days of month m (1 to 12) of year y, in the
// proleptic Gregorian calendar, as time.Date counts them.
func daysIn(m time.Month, y int) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// Date decodes "YYYY-MM-DD" into *dst; null and "" give the zero Date.
func (d *Decoder) Date(dst *Date) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	d.empty = true
	switch v.Kind() {
	case 'n':
		*dst = Date{}
		return nil
	case '"':
	default:
		return fmt.Errorf("invalid date %s: want a \"YYYY-MM-DD\" string", v)
	}
	if len(v) == 2 {
		*dst = Date{}
		d.kept = v // "" reads as the zero Date, which writes null
		return nil
	}
	t, err := ParseDate(v[1 : len(v)-1])
	if err == nil {
		*dst, d.empty = t, false
	}
	return err
}

// SmallDecimal returns the coefficient, exponent and sign of the JSON number
// s when it is [-]digits[.digits] with at most 18 significant digits, the
// form money takes; ok is false for any other number (an exponent, more
// digits), which the caller parses the slow way.
func SmallDecimal(s []byte) (m int64, exp int32, neg, ok bool) {
	i := 0
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	digits, intDigits, fracDigits, frac := 0, 0, 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			if m != 0 || c != '0' {
				if digits++; digits > 18 {
					return 0, 0, false, false
				}
			}
			m = m*10 + int64(c-'0')
			if frac {
				exp--
				fracDigits++
			} else {
				intDigits++
			}
		case c == '.' && !frac:
			frac = true
		default:
			return 0, 0, false, false
		}
	}
	if intDigits == 0 || (frac && fracDigits == 0) || (intDigits > 1 && s[btoi(neg)] == '0') {
		return 0, 0, false, false
	}
	if neg {
		m = -m
	}
	return m, exp, neg, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// zero is the shared coefficient of every zero decimal decoded with places:
// Shift keeps it rather than allocating, and decimal never modifies a
// coefficient.
var zero = decimal.New(0, 0)

// newDecimal returns m × 10^exp. 0 is decimal.Zero, as a record built in
// code holds it; other zeros (0.00) share one coefficient.
func newDecimal(m int64, exp int32) decimal.Decimal {
	switch {
	case m == 0 && exp == 0:
		return decimal.Zero
	case m == 0:
		return zero.Shift(exp)
	}
	return decimal.New(m, exp)
}

// FormatDecimal writes x with as many decimal places as its exponent says,
// never in exponent form: 12.50 decoded from "12.50" is written 12.50
// again, and 1e3 is written 1000. It does not depend on the decimal
// package's variables.
func FormatDecimal(x decimal.Decimal) string { return x.StringFixed(max(0, -x.Exponent())) }

// ParseDecimal parses money from the text of a JSON number or a string
// holding one (s without the quotes).
func ParseDecimal(s []byte) (decimal.Decimal, error) {
	if m, exp, _, ok := SmallDecimal(s); ok {
		return newDecimal(m, exp), nil
	}
	x, err := decimal.NewFromString(string(s))
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: invalid decimal %q", ErrNotDecimal, s)
	}
	return x, nil
}

// canonicalTime reports, without formatting, that v (a datetime that
// parsed) is what time.Time's MarshalJSON writes of it, in the common form
// "YYYY-MM-DDTHH:MM:SS[.fraction]Z": a fraction of 1 to 9 digits (a
// nanosecond's) with no trailing zero. false means "format it and compare".
func canonicalTime(v []byte) bool {
	n := len(v)
	if n < 22 || v[11] != 'T' || v[n-2] != 'Z' || v[n-1] != '"' {
		return false
	}
	if n == 22 {
		return true
	}
	// The fraction is v[21:n-2]: n-23 digits.
	return v[20] == '.' && v[n-3] != '0' && n > 23 && n-23 <= 9
}

// appendTime appends t as time.Time's MarshalJSON writes it.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// errTimeRange is the error of a time.Time that RFC 3339 cannot write.
var errTimeRange = errors.New("time outside of the years 0 to 9999")
