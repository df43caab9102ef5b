package invoicing

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// unquote returns the text of v, a JSON string a jsontext.Decoder read (so
// already checked): the bytes between its quotes when they need no
// unescaping, the unescaped text otherwise, with invalid UTF-8 replaced by
// U+FFFD as encoding/json v1 replaces it.
func unquote(v jsontext.Value) (string, error) {
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), nil
	}
	b, _ := jsontext.AppendUnquote(nil, v) // only invalid UTF-8 can fail here; it is replaced
	return string(b), nil
}
