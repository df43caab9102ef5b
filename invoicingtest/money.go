package invoicingtest

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// Decimals are written into JSON by these small types rather than through
// decimal.Decimal's own MarshalJSON, whose output depends on package
// variables of the decimal module, or jsonopt.MarshalDecimal, which writes
// the digits as they are: the fake shows money with at least two decimal
// places, as the service does. Each writes its text straight into the
// encoder's buffer.

// money is a monetary amount written as a JSON number with at least two
// decimal places (110.00), keeping any further places exactly.
type money decimal.Decimal

// MarshalJSONTo writes the amount as a JSON number.
func (m money) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(appendFixed(enc.AvailableBuffer(), decimal.Decimal(m), 2))
}

// number is a quantity or a rate written as a JSON number with no trailing
// zeros (2, 1.5, 10).
type number decimal.Decimal

// MarshalJSONTo writes the value as a JSON number.
func (n number) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(appendFixed(enc.AvailableBuffer(), decimal.Decimal(n), 0))
}

// moneyString is a monetary amount written as a JSON string ("110.00"), as
// webhook payloads carry them.
type moneyString decimal.Decimal

// MarshalJSONTo writes the amount as a JSON string.
func (m moneyString) MarshalJSONTo(enc *jsontext.Encoder) error {
	b := appendFixed(append(enc.AvailableBuffer(), '"'), decimal.Decimal(m), 2)
	return enc.WriteValue(append(b, '"'))
}

// numberString is a quantity or rate written as a JSON string ("1.5").
type numberString decimal.Decimal

// MarshalJSONTo writes the value as a JSON string.
func (n numberString) MarshalJSONTo(enc *jsontext.Encoder) error {
	b := appendFixed(append(enc.AvailableBuffer(), '"'), decimal.Decimal(n), 0)
	return enc.WriteValue(append(b, '"'))
}

// FormatMoney returns the amount d as the fake writes money in its answers
// (as JSON numbers there, as strings in webhooks) and as the invoicing
// command-line tool shows it: exactly, never rounded, with at least two
// decimal places and no trailing zeros beyond them: 110.00, 2649.90, 0.125,
// -3.00.
func FormatMoney(d decimal.Decimal) string { return string(appendFixed(nil, d, 2)) }

// numberText is d as number shows it: 2, 1.5.
func numberText(d decimal.Decimal) string { return string(appendFixed(nil, d, 0)) }

// appendFixed appends d exactly, in fixed-point notation with at least
// minPlaces decimal places and no trailing zeros beyond them: 110 is 110.00
// with minPlaces 2, 1.50 is 1.5 with minPlaces 0. A coefficient of up to 18
// digits (every amount the API accepts) is written from its int64 without
// allocating; a larger one goes through StringFixed.
func appendFixed(b []byte, d decimal.Decimal, minPlaces int32) []byte {
	exp := d.Exponent()
	if d.NumDigits() > 18 || exp < -18 || exp > 18 {
		places := max(minPlaces, -d.Normalize().Exponent())
		return append(b, d.StringFixed(places)...)
	}
	c := d.CoefficientInt64()
	switch {
	case c == 0:
		exp = 0
	case c < 0:
		b = append(b, '-')
		c = -c
	}
	// d is c × 10^exp: as fixed point, c's digits then exp zeros when exp
	// is positive, or c's digits with places = -exp decimal places.
	var digits [40]byte
	text := strconv.AppendInt(digits[:0], c, 10)
	places := int32(0)
	if exp > 0 {
		for range exp {
			text = append(text, '0')
		}
	} else {
		places = -exp
	}
	for places > minPlaces && text[len(text)-1] == '0' {
		text = text[:len(text)-1]
		places--
	}
	if int32(len(text)) <= places { // 0.0x: pad with leading zeros
		b = append(b, '0')
		b = append(b, '.')
		for range places - int32(len(text)) {
			b = append(b, '0')
		}
		b = append(b, text...)
	} else {
		whole := int32(len(text)) - places
		b = append(b, text[:whole]...)
		if places > 0 || minPlaces > 0 {
			b = append(b, '.')
		}
		b = append(b, text[whole:]...)
	}
	for range minPlaces - places {
		b = append(b, '0')
	}
	return b
}

// reqDecimal is a decimal read from a request body. It accepts JSON numbers
// only (the API's decimals are numbers); null or absence leave it unset.
type reqDecimal struct {
	value decimal.Decimal
	set   bool
}

// UnmarshalJSONFrom reads a JSON number exactly, without going through
// float64.
func (r *reqDecimal) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 'n':
		*r = reqDecimal{}
		return nil
	case '0':
	default:
		return errors.New("decimal fields must be JSON numbers")
	}
	var d decimal.Decimal
	if err := jsonopt.SetDecimal(&d, v); err != nil {
		return err
	}
	*r = reqDecimal{value: d, set: true}
	return nil
}

// Bounds on request decimals, so that a number such as 1e9999 cannot make the
// server do huge arithmetic.
var (
	maxAmount = decimal.New(1, 12) // 1,000,000,000,000
)

const maxDecimalPlaces = 6

// checkDecimal reports a validation problem with a request decimal, or "".
func checkDecimal(field string, d decimal.Decimal) string {
	if d.Abs().GreaterThanOrEqual(maxAmount) {
		return fmt.Sprintf("%s must be less than %s in magnitude", field, maxAmount.StringFixed(0))
	}
	if -d.Normalize().Exponent() > maxDecimalPlaces {
		return fmt.Sprintf("%s must have at most %d decimal places", field, maxDecimalPlaces)
	}
	return ""
}

// lineAmounts computes a line's net amount (quantity × unit price, rounded to
// cents) and its tax (quantity × unit price × rate / 100, rounded to cents).
// Rounding is half away from zero (0.005 becomes 0.01), per line; document
// totals are the sums of the rounded line values.
func lineAmounts(quantity, unitPrice, ratePercent decimal.Decimal) (net, tax decimal.Decimal) {
	gross := quantity.Mul(unitPrice)
	net = gross.Round(2)
	tax = gross.Mul(ratePercent).Shift(-2).Round(2)
	return net, tax
}
