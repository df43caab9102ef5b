package webhooks

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// MarshalJSON encodes e as {"Type": ..., "Body": ...}, Body compacted but
// otherwise as received: a name given twice stays twice (which
// encoding/json/v2 refuses to write unless given
// jsontext.AllowDuplicateNames(true)), and invalid UTF-8 (or an escaped
// lone surrogate, \ud800) becomes U+FFFD. A nil Body is written as null.
// encoding/json decodes it back into a RawEvent as it decodes any struct.
func (e RawEvent) MarshalJSON() ([]byte, error) {
	type plain RawEvent // without this method
	if e.Body != nil {
		e.Body = codec.CleanUTF8(e.Body)
	}
	return json.Marshal(plain(e))
}

var _ json.Marshaler = RawEvent{}

// A RawEvent's Body is a jsontext.Value, which encoding/json reads and
// writes as raw JSON through its own methods.
var _ json.Marshaler = jsontext.Value(nil)
