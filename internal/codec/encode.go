package codec

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
)

// An Encoder writes records as JSON. Its methods latch the first error, so
// that generated code is one line a field; Marshal returns it.
type Encoder struct {
	b      []byte
	frames []frame
	path   []step // where params are being written, for FieldError
	err    error
}

// step is one member on the path to a value being written: name, or
// name[index] in an array.
type step struct {
	name  string
	index int // -1: not in an array
}

// frame is an object being written.
type frame struct {
	meta  *Meta                     // nil for params
	extra map[string]jsontext.Value // a record's Extra: a field it names is not written
	first bool                      // no member written yet
	names []string                  // params: the members written, which Extra must not repeat
}

// builtMeta is the Meta of a record built in code.
var builtMeta Meta

var encoders = sync.Pool{New: func() any { return new(Encoder) }}

// Marshal returns what fn writes.
func Marshal(fn func(*Encoder)) ([]byte, error) {
	e := encoders.Get().(*Encoder)
	defer func() {
		if cap(e.b) <= 1<<20 {
			*e = Encoder{b: e.b[:0], frames: e.frames[:0], path: e.path[:0]}
			encoders.Put(e)
		}
	}()
	fn(e)
	if e.err != nil {
		return nil, e.err
	}
	return bytes.Clone(e.b), nil
}

// FieldError is the error of a params value that cannot be sent: Path
// names the member, as "line_items[0].Extra".
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

func (e *Encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *Encoder) failAt(name, reason string) {
	var parts []string
	for _, s := range e.path {
		if s.index < 0 {
			parts = append(parts, s.name)
		} else {
			parts = append(parts, fmt.Sprintf("%s[%d]", s.name, s.index))
		}
	}
	e.fail(&FieldError{Path: strings.Join(append(parts, name), "."), Reason: reason})
}

// Begin opens a record whose Meta is m and whose Extra is extra. It
// reports false, having written null, for an element of an array of records
// decoded from null.
func (e *Encoder) Begin(m *Meta, extra map[string]jsontext.Value) bool {
	if m.d != nil && m.d.null {
		e.b = append(e.b, "null"...)
		return false
	}
	e.b = append(e.b, '{')
	e.frames = append(e.frames, frame{meta: m, extra: extra, first: true})
	return true
}

// End writes a record's Extra members, in name order, and closes it.
func (e *Encoder) End(extra map[string]jsontext.Value) {
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		e.name(name)
		if v := extra[name]; v == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.b = append(e.b, v...)
		}
	}
	e.close()
}

// BeginParams opens a request body.
func (e *Encoder) BeginParams() {
	e.b = append(e.b, '{')
	e.frames = append(e.frames, frame{first: true})
}

// EndParams writes a request body's Extra members, in name order, each
// encoded with User, and closes it. A member with an empty name, or one a
// field already wrote, is a *FieldError: the SDK does not pick which value
// the caller meant.
func (e *Encoder) EndParams(extra map[string]any) {
	fr := &e.frames[len(e.frames)-1]
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		switch {
		case name == "":
			e.failAt("Extra", "has a member with an empty name")
		case slices.Contains(fr.names, name):
			e.failAt(name, "is set both by a typed field and in Extra")
		}
		b, err := json.Marshal(extra[name], User)
		if err != nil {
			e.failAt(name, "cannot be encoded as JSON: "+err.Error())
			continue
		}
		e.name(name)
		e.b = append(e.b, b...)
	}
	e.close()
}

func (e *Encoder) close() {
	e.frames = e.frames[:len(e.frames)-1]
	e.b = append(e.b, '}')
}

// name writes the member name, after a comma unless it is the first.
func (e *Encoder) name(name string) {
	fr := &e.frames[len(e.frames)-1]
	if !fr.first {
		e.b = append(e.b, ',')
	}
	fr.first = false
	if fr.meta == nil {
		fr.names = append(fr.names, name)
	}
	e.b, _ = jsontext.AppendQuote(e.b, name)
	e.b = append(e.b, ':')
}

// want reports whether field i, named name, whose value is zero or not, is
// written: unless f omits it empty, or (for a decoded record) it had no
// member and is still empty, or it had a member and is still empty
// although f omits it; and never when Extra holds its name. When it is
// written, raw is the member's text as sent, if the field would write it
// otherwise.
func (e *Encoder) want(i int, name string, zero bool, f Flags) (ok bool, raw jsontext.Value) {
	fr := &e.frames[len(e.frames)-1]
	if _, inExtra := fr.extra[name]; inExtra {
		return false, nil
	}
	write := !zero || f&OmitEmpty == 0
	if fr.meta != nil && fr.meta.d != nil {
		m := fr.meta.d
		if zero && m.absent.has(i) {
			return false, nil
		}
		if !write && m.present.has(i) {
			write = true
		}
		if write && len(m.overrides) > 0 {
			raw = fr.meta.override(i)
		}
	}
	return write, raw
}

// same writes raw in place of the field's own text when raw decodes (with
// decode, into a value of the field's type) to the field's value v: the
// field still holds what was decoded.
func same[T comparable](e *Encoder, raw jsontext.Value, v T, decode func(*Decoder, *T) error) bool {
	if raw == nil {
		return false
	}
	var got T
	err := Decode(raw, false, func(d *Decoder) error { return decode(d, &got) })
	if err != nil || got != v {
		return false
	}
	e.b = append(e.b, raw...)
	return true
}

// String writes a string field (a string type's, converted).
func (e *Encoder) String(i int, name string, v string, f Flags) {
	ok, raw := e.want(i, name, v == "", f)
	if !ok {
		return
	}
	e.name(name)
	if !same(e, raw, v, (*Decoder).String) {
		e.b, _ = jsontext.AppendQuote(e.b, v) // invalid UTF-8 is written as U+FFFD
	}
}

// WriteStringPtr writes a *string field (nil as null).
func WriteStringPtr[S ~string](e *Encoder, i int, name string, v *S, f Flags) {
	if ok, _ := e.want(i, name, v == nil, f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b, _ = jsontext.AppendQuote(e.b, string(*v))
}

// Bool writes a bool field.
func (e *Encoder) Bool(i int, name string, v bool, f Flags) {
	ok, raw := e.want(i, name, !v, f)
	if !ok {
		return
	}
	e.name(name)
	if !same(e, raw, v, (*Decoder).Bool) {
		e.b = strconv.AppendBool(e.b, v)
	}
}

// BoolPtr writes a *bool field (nil as null).
func (e *Encoder) BoolPtr(i int, name string, v *bool, f Flags) {
	if ok, _ := e.want(i, name, v == nil, f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = strconv.AppendBool(e.b, *v)
}

// Int writes an int field.
func (e *Encoder) Int(i int, name string, v int, f Flags) {
	if ok, raw := e.want(i, name, v == 0, f); ok {
		e.name(name)
		e.int(v, raw)
	}
}

// IntPtr writes an *int field (nil as null).
func (e *Encoder) IntPtr(i int, name string, v *int, f Flags) {
	if ok, raw := e.want(i, name, v == nil, f); ok {
		e.name(name)
		if v == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.int(*v, raw)
		}
	}
}

func (e *Encoder) int(v int, raw jsontext.Value) {
	if !same(e, raw, v, (*Decoder).Int) {
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	}
}

// Decimal writes money: as an exact JSON number, or a string with
// AsString.
func (e *Encoder) Decimal(i int, name string, v decimal.Decimal, f Flags) {
	if ok, raw := e.want(i, name, v.IsZero(), f); ok {
		e.name(name)
		e.decimal(v, f, raw)
	}
}

// DecimalPtr writes *decimal.Decimal money (nil as null).
func (e *Encoder) DecimalPtr(i int, name string, v *decimal.Decimal, f Flags) {
	if ok, raw := e.want(i, name, v == nil, f); ok {
		e.name(name)
		if v == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.decimal(*v, f, raw)
		}
	}
}

// exactDecimal is a decimal compared as it writes: 1.50 is not 1.5.
type exactDecimal struct{ s string }

func (e *Encoder) decimal(v decimal.Decimal, f Flags, raw jsontext.Value) {
	text := FormatDecimal(v)
	if raw != nil && same(e, raw, exactDecimal{text}, func(d *Decoder, x *exactDecimal) error {
		var y decimal.Decimal
		err := d.Decimal(&y, f)
		*x = exactDecimal{FormatDecimal(y)}
		return err
	}) {
		return
	}
	if f&AsString != 0 {
		e.b = append(append(append(e.b, '"'), text...), '"')
	} else {
		e.b = append(e.b, text...)
	}
}

// Time writes a datetime as time.Time's MarshalJSON does.
func (e *Encoder) Time(i int, name string, v time.Time, f Flags) {
	if ok, raw := e.want(i, name, v.IsZero(), f); ok {
		e.name(name)
		e.time(v, raw)
	}
}

// TimePtr writes a *time.Time (nil as null).
func (e *Encoder) TimePtr(i int, name string, v *time.Time, f Flags) {
	if ok, raw := e.want(i, name, v == nil, f); ok {
		e.name(name)
		if v == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.time(*v, raw)
		}
	}
}

// timeText is a datetime compared as it writes: the same instant with
// another offset writes differently.
type timeText struct{ s string }

func (e *Encoder) time(v time.Time, raw jsontext.Value) {
	if raw != nil && same(e, raw, timeText{string(appendTime(nil, v))}, func(d *Decoder, x *timeText) error {
		var t time.Time
		err := d.Time(&t)
		*x = timeText{string(appendTime(nil, t))}
		return err
	}) {
		return
	}
	if y := v.Year(); y < 0 || y > 9999 {
		e.fail(errTimeRange)
	}
	e.b = appendTime(e.b, v)
}

// Date writes a civil date as "YYYY-MM-DD", the zero Date as null.
func (e *Encoder) Date(i int, name string, v Date, f Flags) {
	ok, raw := e.want(i, name, v == Date{}, f)
	if !ok {
		return
	}
	e.name(name)
	if same(e, raw, v, (*Decoder).Date) {
		return
	}
	if v == (Date{}) {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(AppendDate(append(e.b, '"'), v), '"')
}

// Raw writes a value kept as it was sent (nil as null).
func (e *Encoder) Raw(i int, name string, v jsontext.Value, f Flags) {
	if ok, _ := e.want(i, name, v == nil, f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, v...)
}

// RawMap writes a map of values kept as they were sent, in name order (nil
// as null).
func (e *Encoder) RawMap(i int, name string, v map[string]jsontext.Value, f Flags) {
	if ok, _ := e.want(i, name, v == nil, f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.frames = append(e.frames, frame{meta: &builtMeta, first: true})
	e.b = append(e.b, '{')
	e.End(v)
}

// Custom writes a field with its own MarshalJSON.
func (e *Encoder) Custom(i int, name string, v interface{ MarshalJSON() ([]byte, error) }, f Flags) {
	if ok, _ := e.want(i, name, reflect.ValueOf(v).IsZero(), f); !ok {
		return
	}
	e.name(name)
	b, err := v.MarshalJSON()
	if err != nil {
		e.fail(err)
		return
	}
	e.b = append(e.b, b...)
}

// WriteRecord writes a nested record with encode (its encodeJSON).
func WriteRecord[T any](e *Encoder, i int, name string, v *T, encode func(*T, *Encoder), f Flags) {
	zero := reflect.ValueOf(v).Elem().IsZero()
	ok, raw := e.want(i, name, zero, f)
	if !ok {
		return
	}
	e.name(name)
	if zero && string(raw) == "null" {
		e.b = append(e.b, "null"...) // decoded from null
		return
	}
	e.path = append(e.path, step{name, -1})
	encode(v, e)
	e.path = e.path[:len(e.path)-1]
}

// WriteRecordPtr writes a *T record (nil as null).
func WriteRecordPtr[T any](e *Encoder, i int, name string, v *T, encode func(*T, *Encoder), f Flags) {
	if ok, _ := e.want(i, name, v == nil, f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.path = append(e.path, step{name, -1})
	encode(v, e)
	e.path = e.path[:len(e.path)-1]
}

// WriteRecords writes a slice of records (nil as null, empty as []).
func WriteRecords[T any](e *Encoder, i int, name string, v []T, encode func(*T, *Encoder), f Flags) {
	if ok, _ := e.want(i, name, len(v) == 0 && (v == nil || f&OmitEmpty != 0), f); !ok {
		return
	}
	e.name(name)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for j := range v {
		if j > 0 {
			e.b = append(e.b, ',')
		}
		e.path = append(e.path, step{name, j})
		encode(&v[j], e)
		e.path = e.path[:len(e.path)-1]
	}
	e.b = append(e.b, ']')
}
