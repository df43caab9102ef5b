package invoicing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrFieldMissing is returned (wrapped) by RawObject.Get when the object has
// no field of the requested name.
var ErrFieldMissing = errors.New("invoicing: field not present in the JSON object")

// RawObject keeps the complete JSON object a value was decoded from, so that
// no field the service sends is lost, including fields the SDK has no typed
// field for. It is embedded in the records of the services whose fields
// API.md does not show (Contact, Bill, BillLineItem, Account, TaxCode,
// Report, ReportLine, ReportTotals, BankAccount, BankTransaction): read an
// untyped field with Get, test for it with Has, or decode the whole object
// into a struct of your own with Decode.
//
// The kept bytes are a private copy, never a view of a reused buffer. The
// zero RawObject (a value built in code rather than decoded) holds nothing.
//
// The typed fields beside it are a decoded view: a value decoded from the
// service marshals back (json.Marshal) to the kept object, so edits to typed
// fields are not reflected there. Typed fields are decoded strictly: when the
// service sends a JSON type that does not fit a guessed field (a number where
// a string is expected, say), the call fails with a decoding error rather
// than leaving the field silently zero.
type RawObject struct {
	raw string // immutable, so never a view of a reused buffer; "" when not decoded
}

// Raw returns a copy of the JSON object as the service sent it, or nil when
// the value was not decoded from JSON.
func (r RawObject) Raw() json.RawMessage {
	if r.raw == "" {
		return nil
	}
	return json.RawMessage(r.raw)
}

// Has reports whether the object has a top-level field named name (matched
// exactly, case-sensitively), even when its value is null.
func (r RawObject) Has(name string) bool {
	_, ok := r.field(name)
	return ok
}

// Get decodes the top-level field named name (matched exactly) into dst, as
// json.Unmarshal would; a money field decodes exactly into a
// decimal.Decimal. It returns an error wrapping ErrFieldMissing when the
// object has no such field, and the decoding error when the value does not
// fit dst. A null value leaves dst as json.Unmarshal leaves it.
func (r RawObject) Get(name string, dst any) error {
	v, ok := r.field(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrFieldMissing, name)
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("invoicing: decoding field %q: %w", name, err)
	}
	return nil
}

// Decode decodes the whole object into dst (typically a struct of your own
// declaring the fields the SDK does not type), as json.Unmarshal would. A
// value that was not decoded from JSON has nothing to decode: dst is left
// unchanged and the result is nil.
func (r RawObject) Decode(dst any) error {
	if r.raw == "" {
		return nil
	}
	return json.Unmarshal([]byte(r.raw), dst)
}

func (r RawObject) field(name string) (json.RawMessage, bool) {
	if r.raw == "" {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(r.raw), &m) != nil {
		return nil, false
	}
	v, ok := m[name]
	return v, ok
}

// decodeRaw is the UnmarshalJSON of every type embedding RawObject: it
// decodes b into v, a pointer to the type converted to a method-less alias
// (so the decode does not recurse), and keeps a copy of b in r. JSON null
// leaves the value unchanged, as encoding/json does for other types.
//
// RawObject deliberately has no JSON, text, String or IsZero methods: they
// would be promoted to the types embedding it (and to their aliases) and
// take over their encoding, decoding or printing.
func decodeRaw[A any](b []byte, r *RawObject, v *A) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	r.raw = ""
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	r.raw = string(b) // a copy: b may be a view of the pipeline's pooled buffer
	return nil
}

// encodeRaw is the MarshalJSON of every type embedding RawObject: the kept
// object when there is one (so nothing the service sent is lost), otherwise
// v, the value converted to its method-less alias.
func encodeRaw(r RawObject, v any) ([]byte, error) {
	if r.raw != "" {
		return []byte(r.raw), nil
	}
	return json.Marshal(v)
}
