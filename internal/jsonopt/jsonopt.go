// Package jsonopt holds the encoding/json/v2 options every package of the
// module decodes and encodes with, and the exact-decimal codec they install,
// so that the SDK, webhooks, invoicingtest and the command-line tool read and
// write JSON by one set of rules. The rules, and why, are written once in
// the invoicing package documentation ("JSON").
package jsonopt

import (
	v1json "encoding/json" // only for its Number type, which callers may pass in Extra
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
)

// Decode are the options of every decode:
//   - a name given twice in one object is accepted, as encoding/json (v1)
//     does, the last member winning (v1 merged a later object or array into
//     the earlier value, and ignored a later null; v2 does not);
//   - invalid UTF-8 in a string is accepted and replaced by U+FFFD, as v1
//     does;
//   - a decimal.Decimal decodes exactly from a JSON number or a string
//     holding one (see UnmarshalDecimal);
//   - a time.Time decodes as its own UnmarshalJSON parses it, as v1 does
//     (v2's parser refuses some datetimes v1 accepted, such as an hour of
//     one digit);
//   - an encoding/json Number, which a caller's own types may use, decodes
//     as encoding/json decodes it.
//
// Names match case-sensitively (v2's rule): a member whose name differs
// from a field's only in case is not that field.
var Decode = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(UnmarshalDecimal),
		json.UnmarshalFromFunc(unmarshalTime),
		json.UnmarshalFromFunc(unmarshalV1Number),
	)),
)

// Encode are the options of every encode of a record: decimal.Decimal
// values as exact JSON numbers (see MarshalDecimal), an encoding/json Number
// as the number it holds (as encoding/json writes it; v2 would write a
// string), map members sorted by name, and nil slices and maps as null, as
// encoding/json (v1) writes them. Values kept as they were received (a
// record's Extra) are written as they are: a duplicate name or invalid UTF-8
// that Decode accepted in them is no error.
var Encode = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithMarshalers(json.JoinMarshalers(
		json.MarshalToFunc(MarshalDecimal),
		json.MarshalToFunc(marshalV1Number),
	)),
	json.Deterministic(true),
	json.FormatNilSliceAsNull(true),
	json.FormatNilMapAsNull(true),
)

// EncodeParams are the options of every request body: Encode's, except that
// a name given twice in one object (an Extra member that a typed field also
// sends) is an error.
var EncodeParams = json.JoinOptions(Encode, jsontext.AllowDuplicateNames(false))

// DecodeOpts is Decode as a slice, to pass on without allocating one per
// call: json.Unmarshal(b, v, jsonopt.DecodeOpts...).
var DecodeOpts = []json.Options{Decode}

// ErrNotDecimal is the error (wrapped) of a JSON value that is neither a
// number nor a string holding one.
var ErrNotDecimal = errors.New("want a JSON number or a numeric string")

// zero is the shared coefficient of every zero decimal decoded: Shift keeps
// it rather than allocating, and decimal never modifies a coefficient.
var zero = decimal.Zero

// UnmarshalDecimal decodes the next JSON value of dec into d, exactly: a
// number (1.50 keeps its exponent, -2), or a string holding one (as
// decimal.Decimal's own UnmarshalJSON accepts); null leaves d unchanged.
func UnmarshalDecimal(dec *jsontext.Decoder, d *decimal.Decimal) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return SetDecimal(d, v)
}

// SetDecimal sets d from the JSON value v as UnmarshalDecimal does.
func SetDecimal(d *decimal.Decimal, v jsontext.Value) error {
	switch v.Kind() {
	case '0':
		if m, exp, ok := smallDecimal(v); ok {
			setSmall(d, m, exp)
			return nil
		}
		x, err := decimal.NewFromString(string(v))
		if err != nil {
			return fmt.Errorf("invalid decimal %s: %w", v, err)
		}
		*d = x
		return nil
	case '"':
		// As decimal.Decimal's UnmarshalJSON: the text between the quotes,
		// not unescaped, must parse (webhook payloads carry money so).
		if m, exp, ok := smallDecimal(v[1 : len(v)-1]); ok {
			setSmall(d, m, exp)
			return nil
		}
		if err := d.UnmarshalJSON(v); err != nil {
			return fmt.Errorf("%w: %v", ErrNotDecimal, err)
		}
		return nil
	case 'n':
		return nil
	}
	return fmt.Errorf("%w, got %s", ErrNotDecimal, kindName(v.Kind()))
}

// setSmall sets d to m × 10^exp; a zero shares one coefficient.
func setSmall(d *decimal.Decimal, m int64, exp int32) {
	if m == 0 {
		*d = zero.Shift(exp)
		return
	}
	*d = decimal.New(m, exp)
}

// SmallDecimal returns the coefficient and exponent of the JSON number v
// when it is [-]digits[.digits] with at most 18 significant digits, the
// form money takes; ok is false for any other number (an exponent, more
// digits), which the caller parses the slow way.
func SmallDecimal(v []byte) (m int64, exp int32, ok bool) { return smallDecimal(v) }

func smallDecimal(v []byte) (m int64, exp int32, ok bool) {
	i, neg := 0, false
	if len(v) > 0 && v[0] == '-' {
		neg, i = true, 1
	}
	digits, intDigits, fracDigits, frac := 0, 0, 0, false
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			if m != 0 || c != '0' {
				if digits++; digits > 18 {
					return 0, 0, false
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
			return 0, 0, false
		}
	}
	if intDigits == 0 || (frac && fracDigits == 0) {
		return 0, 0, false
	}
	if neg {
		m = -m
	}
	return m, exp, true
}

// MarshalDecimal writes d as an exact JSON number with as many decimal
// places as its exponent says, never in exponent form: 12.50 decoded from
// "12.50" is written 12.50 again, and 1e3 is written 1000.
func MarshalDecimal(enc *jsontext.Encoder, d decimal.Decimal) error {
	return enc.WriteValue(jsontext.Value(d.StringFixed(max(0, -d.Exponent()))))
}

// marshalV1Number writes an encoding/json Number as encoding/json does: the
// number it holds, 0 when empty; one that is not a JSON number is an error.
func marshalV1Number(enc *jsontext.Encoder, n v1json.Number) error {
	if n == "" {
		n = "0"
	}
	return enc.WriteValue(jsontext.Value(n))
}

// unmarshalTime decodes a datetime as time.Time's UnmarshalJSON does (RFC
// 3339; null leaves t unchanged).
func unmarshalTime(dec *jsontext.Decoder, t *time.Time) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return t.UnmarshalJSON(v)
}

// unmarshalV1Number decodes an encoding/json Number as encoding/json does: a
// JSON number, or a string holding one; null leaves n unchanged.
func unmarshalV1Number(dec *jsontext.Decoder, n *v1json.Number) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case '0':
		*n = v1json.Number(v)
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		if !jsontext.Value(s).IsValid() || jsontext.Value(s).Kind() != '0' {
			return fmt.Errorf("invalid number literal %q", s)
		}
		*n = v1json.Number(s)
	case 'n':
	default:
		return fmt.Errorf("want a number, got %s", kindName(v.Kind()))
	}
	return nil
}

// kindName names a JSON kind for error messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an invalid value"
}

// KindName names the JSON kind k for error messages: "a string", "an
// object", ...
func KindName(k jsontext.Kind) string { return kindName(k) }
