package webhooks

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// MarshalJSON encodes e as {"Type": ..., "Body": ...}, through the codec of
// every record, Body compacted but otherwise as received: a name given
// twice stays twice (which encoding/json/v2 refuses to write unless given
// jsontext.AllowDuplicateNames(true)), and invalid UTF-8 (or an escaped
// lone surrogate, \ud800) becomes U+FFFD. A nil Body is written as null.
// Nothing is escaped for HTML. encoding/json decodes it back into a
// RawEvent as it decodes any struct.
func (e RawEvent) MarshalJSON() ([]byte, error) {
	var body jsontext.Value
	if e.Body != nil {
		body = codec.CleanUTF8(e.Body)
		if err := body.Compact(jsontext.AllowDuplicateNames(true)); err != nil {
			return nil, err
		}
	}
	return codec.Marshal(func(enc *codec.Encoder) {
		var m codec.Meta // a RawEvent remembers nothing of the JSON it came from
		enc.Begin(&m, nil)
		enc.String(0, "Type", string(e.Type), 0)
		enc.Raw(1, "Body", body, 0)
		enc.End(nil)
	})
}
