// Package jsonopt holds the encoding/json/v2 options of the JSON that is not
// the SDK's records: what invoicingtest serves and the command-line tool
// writes, and the webhook sample bodies. Records go through internal/codec.
// Money is exact both ways, as in the records.
package jsonopt

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Decode accepts what encoding/json (v1) accepts in a body: a name given
// twice in one object (the last wins) and invalid UTF-8 (replaced by
// U+FFFD); a decimal.Decimal decodes exactly from a JSON number or a string
// holding one, a time.Time as its own UnmarshalJSON parses it. Names match
// case-sensitively.
var Decode = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, d *decimal.Decimal) error {
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			return SetDecimal(d, v)
		}),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *time.Time) error {
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			return t.UnmarshalJSON(v)
		}),
	)),
)

// Encode writes money as exact JSON numbers with its decimal places, map
// members sorted by name, nil slices and maps as null (as encoding/json
// does), and values kept as received as they are.
var Encode = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, d decimal.Decimal) error {
		return enc.WriteValue(jsontext.Value(codec.FormatDecimal(d)))
	})),
	json.Deterministic(true),
	json.FormatNilSliceAsNull(true),
	json.FormatNilMapAsNull(true),
)

// SetDecimal sets d from the JSON value v, a number or a string holding one
// (null leaves d unchanged).
func SetDecimal(d *decimal.Decimal, v jsontext.Value) error {
	switch v.Kind() {
	case '0':
		x, err := codec.ParseDecimal(v)
		if err == nil {
			*d = x
		}
		return err
	case '"':
		x, err := codec.ParseDecimal(v[1 : len(v)-1])
		if err == nil {
			*d = x
		}
		return err
	case 'n':
		return nil
	}
	return fmt.Errorf("%w, got %s", codec.ErrNotDecimal, codec.KindName(v.Kind()))
}
