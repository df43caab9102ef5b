package webhooks

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// MarshalJSON encodes e as {"Type": ..., "Body": ...}, with Body compacted
// but otherwise as received: a name given twice stays twice (which
// encoding/json/v2 refuses to write unless given
// jsontext.AllowDuplicateNames(true)), and invalid UTF-8 (or an escaped
// lone surrogate, \ud800) becomes U+FFFD. A nil Body is written as null.
func (e RawEvent) MarshalJSON() ([]byte, error) {
	b, _ := jsontext.AppendQuote([]byte(`{"Type":`), string(e.Type)) // invalid UTF-8 is written as U+FFFD
	b = append(b, `,"Body":`...)
	if e.Body == nil {
		b = append(b, "null"...)
	} else {
		body, err := rawJSON(e.Body)
		if err != nil {
			return nil, err
		}
		b = append(b, body...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes what MarshalJSON writes into e: the members Type
// and Body (kept as sent, a name given twice included; null gives a nil
// Body). Other members are ignored; null leaves e unchanged.
func (e *RawEvent) UnmarshalJSON(b []byte) error {
	return codec.Decode(b, false, func(d *codec.Decoder) error {
		if d.PeekKind() == 'n' {
			return d.Skip()
		}
		var r RawEvent
		err := d.Object(func(name []byte) error {
			switch string(name) {
			case "Type":
				return codec.ReadString(d, &r.Type)
			case "Body":
				if d.PeekKind() == 'n' {
					r.Body = nil
					return d.Skip()
				}
				return d.Raw(&r.Body)
			}
			return d.Skip()
		})
		if err == nil {
			*e = r
		}
		return err
	})
}

// rawJSON returns the JSON value v compacted, with any invalid UTF-8 in its
// strings replaced by U+FFFD, names given twice kept.
func rawJSON(v jsontext.Value) (jsontext.Value, error) {
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	if v.IsValid(jsontext.AllowDuplicateNames(true)) {
		out := v.Clone()
		return out, out.Compact(opts...)
	}
	// Token by token: a string read with AllowInvalidUTF8 has its invalid
	// bytes (and escaped lone surrogates) replaced, and is written back
	// valid.
	dec := jsontext.NewDecoder(bytes.NewReader(v), opts...)
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, opts...)
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '"' {
			tok = jsontext.String(tok.String())
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
	compact := jsontext.Value(out.Bytes())
	return compact, compact.Compact(opts...) // drops the encoder's final newline
}
