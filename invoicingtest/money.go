package invoicingtest

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// Decimals are written into JSON by these small types rather than through
// decimal.Decimal's own MarshalJSON, whose output depends on package
// variables of the decimal module, or jsonopt.MarshalDecimal, which writes
// the digits as they are: the fake shows money with at least two decimal
// places, as the service does. StringFixed does not depend on the package
// variables.

// money is a monetary amount written as a JSON number with at least two
// decimal places (110.00), keeping any further places exactly.
type money decimal.Decimal

// MarshalJSONTo writes the amount as a JSON number.
func (m money) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(moneyText(decimal.Decimal(m))))
}

// number is a quantity or a rate written as a JSON number with no trailing
// zeros (2, 1.5, 10).
type number decimal.Decimal

// MarshalJSONTo writes the value as a JSON number.
func (n number) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(numberText(decimal.Decimal(n))))
}

// moneyString is a monetary amount written as a JSON string ("110.00"), as
// webhook payloads carry them.
type moneyString decimal.Decimal

// MarshalJSONTo writes the amount as a JSON string.
func (m moneyString) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(moneyText(decimal.Decimal(m))))
}

// numberString is a quantity or rate written as a JSON string ("1.5").
type numberString decimal.Decimal

// MarshalJSONTo writes the value as a JSON string.
func (n numberString) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(numberText(decimal.Decimal(n))))
}

func moneyText(d decimal.Decimal) string {
	places := int32(2)
	if p := -d.Normalize().Exponent(); p > places {
		places = p
	}
	return d.StringFixed(places)
}

func numberText(d decimal.Decimal) string {
	places := -d.Normalize().Exponent()
	if places < 0 {
		places = 0
	}
	return d.StringFixed(places)
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
