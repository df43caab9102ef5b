package codec

import (
	v1 "encoding/json"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/shopspring/decimal"
)

// User are the options for values of the caller's own types, which the SDK
// reads and writes as encoding/json (v1) does: Client.Do's body and result,
// Extra.Get and Extra.Decode, the values of a params type's Extra. Names
// match case-insensitively, as encoding/json matches them, and an
// encoding/json Number is a number both ways. The one difference: a
// decimal.Decimal is written as an exact JSON number, as the SDK sends money
// everywhere, rather than as the JSON string its own MarshalJSON writes.
var User = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	json.Deterministic(true),
	json.WithMarshalers(json.JoinMarshalers(
		json.MarshalToFunc(func(enc *jsontext.Encoder, d decimal.Decimal) error {
			return enc.WriteValue(jsontext.Value(FormatDecimal(d)))
		}),
		json.MarshalToFunc(func(enc *jsontext.Encoder, n v1.Number) error {
			if n == "" {
				n = "0" // as encoding/json writes it
			}
			if v := jsontext.Value(n); !v.IsValid() || v.Kind() != '0' {
				return fmt.Errorf("invalid number literal %q", string(n))
			}
			return enc.WriteValue(jsontext.Value(n))
		}),
	)),
	json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, n *v1.Number) error {
		v, err := dec.ReadValue()
		switch {
		case err != nil:
			return err
		case v.Kind() == '0':
			*n = v1.Number(v)
		case v.Kind() == '"': // as encoding/json takes a Number from a string holding one
			s := unquote(v)
			if t := jsontext.Value(s); !t.IsValid() || t.Kind() != '0' {
				return fmt.Errorf("invalid number literal %q", s)
			}
			*n = v1.Number(s)
		case v.Kind() != 'n':
			return fmt.Errorf("want a number, got %s", KindName(v.Kind()))
		}
		return nil
	})),
)
