package webhooks

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// encodeOptions are jsonopt.Encode with money written as a JSON string, the
// way webhook bodies carry it: marshalMoney comes before jsonopt.Encode's
// marshalers, so it wins for decimal.Decimal and they still apply to the
// rest.
var encodeOptions = json.JoinOptions(jsonopt.Encode, json.WithMarshalers(
	json.JoinMarshalers(json.MarshalToFunc(marshalMoney), jsonoptMarshalers()),
))

// encodeOpts is encodeOptions as a slice, to pass on without allocating one
// per call.
var encodeOpts = []json.Options{encodeOptions}

// jsonoptMarshalers returns jsonopt.Encode's marshalers (nil, an empty list,
// if it had none).
func jsonoptMarshalers() *json.Marshalers {
	m, _ := json.GetOption(jsonopt.Encode, json.WithMarshalers)
	return m
}

// marshalMoney writes d as a JSON string holding its exact digits: "4500.00"
// keeps its two places. It does not depend on the decimal package's
// variables (TrimTrailingZeros, UseScientificNotation).
func marshalMoney(enc *jsontext.Encoder, d decimal.Decimal) error {
	b := append(enc.AvailableBuffer(), '"')
	b = append(b, d.StringFixed(max(0, -d.Exponent()))...)
	return enc.WriteValue(append(b, '"'))
}

// The JSON methods of every event and nested object type T are one line
// each: they convert T to its plain twin P (type P T: the same fields and
// tags, none of T's methods, so encoding P does not call them again) and
// call one of the helpers below. The encoding/json (v1) methods go through
// the v2 ones, so both APIs read and write the same JSON.

// encodeTo is MarshalJSONTo: p with encodeOptions.
func encodeTo[P any](enc *jsontext.Encoder, p *P) error {
	return json.MarshalEncode(enc, p, encodeOpts...)
}

// decodeFrom is UnmarshalJSONFrom: the next value of dec into p with
// jsonopt.Decode.
func decodeFrom[P any](dec *jsontext.Decoder, p *P) error {
	return json.UnmarshalDecode(dec, p, jsonopt.DecodeOpts...)
}

// encodeV1 is MarshalJSON: v through its MarshalJSONTo.
func encodeV1(v json.MarshalerTo) ([]byte, error) {
	return json.Marshal(v, encodeOpts...)
}

// decodeV1 is UnmarshalJSON: b through v's UnmarshalJSONFrom. null leaves v
// unchanged, as encoding/json (v1) does for a struct.
func decodeV1(b []byte, v json.UnmarshalerFrom) error {
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, v, jsonopt.DecodeOpts...)
}
