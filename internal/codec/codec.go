// Package codec is the one JSON codec of the SDK's records: the API's
// records and their lines (package invoicing), the params sent as request
// bodies, and the webhook events (package webhooks).
//
// A record's struct definition is the single source of its JSON: the
// generator (internal/cmd/recordgen, run by go generate) reads each struct
// marked with a //codec:record or //codec:params directive and writes its
// decodeJSON and encodeJSON methods, which call this package's field
// decoders and encoders, one line a field. Nothing here knows a record by
// name.
//
// The rules every record follows:
//
//   - Decoding reads straight from the token stream. A member no field holds
//     is kept, exactly as sent, in the record's Extra. A member whose text the
//     field would not write back the same way (money sent as a JSON string
//     where the API sends numbers, null for a string, a datetime with a
//     "+00:00" offset) is remembered in the record's Meta, so that the record
//     encodes back to exactly what it was decoded from.
//   - A record decoded from an object starts afresh (its previous content is
//     dropped); JSON null leaves it unchanged, as encoding/json does.
//   - A lenient record (the resources the API documents only in outline)
//     does not fail on a member whose value does not fit its field: the field
//     is left zero and the member is kept in Extra, where MismatchedFields
//     finds it.
//   - Encoding a decoded record writes the members it was decoded from (and
//     any field set since); a record built in code writes every field but
//     those its tag omits when empty. Extra's members follow, in name order;
//     a member of Extra named like a field wins over the field.
package codec

import (
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Meta is what a record remembers of the JSON object it was decoded from
// where that differs from what the record would write of itself: a field's
// member that was absent, or present although the field is empty and tagged
// omitempty, or a member's text the field would write otherwise. Every
// record has one, in an unexported field. It is zero for a record built in
// code, and for one decoded from the JSON it writes, so that such a record
// equals (==, reflect.DeepEqual) the same record built in code.
type Meta struct {
	d *metaData // nil when there is nothing to remember: the common case
}

// metaData is what a Meta remembers, when it remembers anything.
type metaData struct {
	null      bool       // decoded from a null element of an array of records
	absent    bits       // fields written by default that had no member
	present   bits       // fields left out by default (empty, omitempty) that had one
	overrides []override // members whose text the field would not reproduce
}

// data returns what m remembers, allocating it on the first need.
func (m *Meta) data() *metaData {
	if m.d == nil {
		m.d = new(metaData)
	}
	return m.d
}

// override is the text of a member as it was sent, for a field whose own
// encoding of the same value differs.
type override struct {
	field int
	raw   jsontext.Value
}

// A Shape describes a record type: its fields' JSON names by index (as the
// generated code numbers them) and which ones are left out when empty.
type Shape struct {
	names    []string
	omit     bits
	required bits // the others: a record writes them whatever their value
}

// NewShape returns the shape of a record with the fields names, of which
// those at the indexes omit are tagged omitempty (or omitzero).
func NewShape(names []string, omit ...int) *Shape {
	s := &Shape{names: names}
	for _, i := range omit {
		s.omit.set(i)
	}
	for i := range names {
		if !s.omit.has(i) {
			s.required.set(i)
		}
	}
	return s
}

// Has reports whether the JSON object of a record (its shape s, its Extra
// extra) has a member named name: for a decoded record, whether the object
// it came from had one (null included); for a record built in code, whether
// it writes one.
func (m *Meta) Has(s *Shape, extra map[string]jsontext.Value, name string) bool {
	if _, ok := extra[name]; ok {
		return true
	}
	i := slices.Index(s.names, name)
	if i < 0 {
		return false
	}
	if m.d == nil {
		return !s.omit.has(i)
	}
	return !m.d.absent.has(i) && (!s.omit.has(i) || m.d.present.has(i))
}

// Mismatched returns the names of the fields of shape s (in field order)
// whose member is kept in extra because its value did not fit the field, or
// nil.
func Mismatched(s *Shape, extra map[string]jsontext.Value) []string {
	var out []string
	for _, f := range s.names {
		if _, ok := extra[f]; ok {
			out = append(out, f)
		}
	}
	return out
}

func (m *Meta) override(i int) jsontext.Value {
	if m.d == nil {
		return nil
	}
	for _, o := range m.d.overrides {
		if o.field == i {
			return o.raw
		}
	}
	return nil
}

// bits is a set of field indexes: the first 64 inline, the rest (a record
// with more fields) in more.
type bits struct {
	lo   uint64
	more []uint64
}

func (b *bits) set(i int) {
	if i < 64 {
		b.lo |= 1 << i
	} else {
		b.setMore(i)
	}
}

func (b *bits) setMore(i int) {
	w := i/64 - 1
	for len(b.more) <= w {
		b.more = append(b.more, 0)
	}
	b.more[w] |= 1 << (i % 64)
}

func (b *bits) clear(i int) {
	if i < 64 {
		b.lo &^= 1 << i
	} else if w := i/64 - 1; w < len(b.more) {
		b.more[w] &^= 1 << (i % 64)
	}
}

func (b *bits) has(i int) bool {
	if i < 64 {
		return b.lo&(1<<i) != 0
	}
	w := i/64 - 1
	return w < len(b.more) && b.more[w]&(1<<(i%64)) != 0
}

// covers reports whether b holds every index c holds.
func (b *bits) covers(c *bits) bool {
	if b.lo&c.lo != c.lo || len(b.more) < len(c.more) {
		return false
	}
	for w, x := range c.more {
		if b.more[w]&x != x {
			return false
		}
	}
	return true
}

// Flags are a field's encoding options, from its struct tag.
type Flags uint8

const (
	// OmitEmpty leaves out of a record built in code a field whose value is
	// empty (tag option omitempty or omitzero).
	OmitEmpty Flags = 1 << iota
	// AsString writes money as a JSON string (tag option string), as webhook
	// bodies carry it; the default is a JSON number, as the API sends it.
	AsString
)
