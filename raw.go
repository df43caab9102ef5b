package invoicing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)


// RawObject keeps the complete JSON object a value was decoded from, so that
// no field the service sends is lost, including fields the SDK has no typed
// field for. It is embedded in the records of the resources the service
// documents only in outline (Contact, Bill, BillLineItem, Account, TaxCode,
// Report, ReportLine, ReportTotals, BankAccount, BankTransaction): read an
// untyped field with Get, test for it with Has, or decode the whole object
// into a struct of your own with Decode.
//
// The kept bytes are a private copy, never a view of a reused buffer. The
// zero RawObject (a value built in code rather than decoded) holds nothing.
//
// The typed fields beside it are a decoded view: a value decoded from the
// service marshals back (json.Marshal) to the kept object, so edits to typed
// fields are not reflected there. Because the service documents these
// records' fields only in outline, typed fields are decoded leniently: a
// field whose JSON value does not fit its Go type (a number where the field
// is a string, a datetime where it is a Date, "" where it is a time) is left
// zero and named by MismatchedFields, and the decode goes on, so one odd
// field never fails a call or a list. JSON null leaves a field zero and is
// not a mismatch, as with encoding/json. A nested record (a bill's line, a
// report's row) is decoded the same way and names its own mismatches; a
// bill's line_items or a report's lines that are not an array of objects
// are a mismatch of that field of the bill or report.
//
// A record itself must be a JSON object: decoding a string, a number, a
// boolean or an array into one is an error, naming what was expected.
type RawObject struct {
	// raw is the JSON value as decoded: a private copy, immutable, so never
	// a view of a reused buffer; "" when not decoded.
	raw string
	// mismatched holds the JSON names of the typed fields that did not
	// fit, joined by commas (which a JSON tag name never holds); "" when
	// all fit.
	mismatched string
}

// MismatchedFields returns the JSON names of the typed fields whose value in
// the object did not fit their Go type, in the order the fields are
// declared, or nil when every field fit (and for a value not decoded from
// JSON). Those fields are left zero; their values are still in Raw, and Get
// reads them into a type that fits:
//
//	var code json.Number
//	if slices.Contains(a.MismatchedFields(), "code") && a.Get("code", &code) == nil {
//		// the service sent the account's code as a number, such as 200
//	}
//
// A nested record (a bill's line, a report's row) names its own mismatched
// fields; its parent names only its own.
func (r RawObject) MismatchedFields() []string {
	if r.mismatched == "" {
		return nil
	}
	return strings.Split(r.mismatched, ",")
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
// leaves the value unchanged, as encoding/json does for other types; any
// other value that is not a JSON object is an error.
//
// A record whose typed fields all fit costs one json.Unmarshal, as a plain
// struct does. Only when that fails on a valid object (so on a value that
// does not fit a field: the JSON itself was checked) does decodeFields
// decode the object again, field by field, leaving the fields that do not
// fit zero and naming them in r.
//
// RawObject deliberately has no JSON, text, String or IsZero methods: they
// would be promoted to the types embedding it (and to their aliases) and
// take over their encoding, decoding or printing.
func decodeRaw[A any](b []byte, r *RawObject, v *A) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	*r = RawObject{}
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("invoicing: a record must be a JSON object, got %s", describeJSON(b))
	}
	if err := json.Unmarshal(b, v); err != nil {
		if !json.Valid(b) {
			return err
		}
		bad, ferr := decodeFields(b, reflect.ValueOf(v).Elem())
		if ferr != nil {
			return err // not reached for a valid object; keep the first error
		}
		r.mismatched = strings.Join(bad, ",")
	}
	r.raw = string(b) // a copy: b may be a view of the pipeline's pooled buffer
	return nil
}

// decodeFields decodes the JSON object b into the struct v one typed field
// at a time, following encoding/json's rules: members are matched to
// fields by JSON name (the tag's name, else the field's; exact match first,
// then case-insensitive), in the object's order, so that of two members
// for one field the last wins; unexported fields, fields tagged "-" and
// embedded fields (RawObject) are skipped; a member decodes into the field
// as json.Unmarshal decodes into it. A field with a member that does not
// fit is set to zero, and its JSON name is returned, in field order.
//
// The records do not use the ",string" tag option, embed nothing but
// RawObject and have no two fields of one name (a test checks it): for
// them, a decode that succeeds here gives what json.Unmarshal gives.
func decodeFields(b []byte, v reflect.Value) ([]string, error) {
	t := v.Type()
	names := make([]string, t.NumField()) // "" for a field JSON does not decode
	for i := range names {
		if name, ok := jsonName(t.Field(i)); ok {
			names[i] = name
		}
	}
	failed := make([]bool, len(names))
	err := eachMember(b, func(key string, value []byte, _ int) error {
		i := fieldIndex(names, key)
		if i < 0 || failed[i] {
			return nil
		}
		f := v.Field(i)
		if json.Unmarshal(value, f.Addr().Interface()) != nil {
			failed[i] = true
			f.SetZero()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var bad []string
	for i, failed := range failed {
		if failed {
			bad = append(bad, names[i])
		}
	}
	return bad, nil
}

// fieldIndex returns the index of the field encoding/json decodes the member
// key into, given the fields' JSON names ("" for none), or -1.
func fieldIndex(names []string, key string) int {
	for i, n := range names {
		if n != "" && n == key {
			return i
		}
	}
	for i, n := range names {
		if n != "" && strings.EqualFold(n, key) {
			return i
		}
	}
	return -1
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
