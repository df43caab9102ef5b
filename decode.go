package invoicing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// This file decodes response bodies straight from the token stream of a
// jsontext.Decoder. The records the API documents in full (Invoice, Item,
// Quote and their lines) decode through a switch on each member's name, with
// no reflection; every other type through encoding/json/v2 on the same
// decoder. The rules (names matched exactly, duplicates and invalid UTF-8 as
// encoding/json v1 takes them) are jsonopt.Decode's, and written in the
// package documentation ("JSON").

// decodeState decodes one JSON body. In a list page (share set), strings
// that repeat from record to record (a client's name, a currency, an account
// id) are stored once, and so are the coefficients of equal amounts: decimal
// never changes a coefficient, and shares them itself (Decimal.Shift); the
// *string fields of the page's records point into slabs allocated a few at
// a time. A single record is not worth the maps.
type decodeState struct {
	dec    *jsontext.Decoder
	in     *bytes.Buffer // what dec reads, when the state is pooled
	share  bool
	strs   map[string]string
	coeffs map[int64]decimal.Decimal
	ptrs   []string
}

// recordDecoder is implemented by the records decoded by name switch.
type recordDecoder interface {
	decodeFrom(st *decodeState) error
}

// decodeBody decodes the JSON body b into out, which must hold one JSON
// value and nothing after it. A decode error names the field it is in, as a
// path such as "line_items[1].unit_price".
func decodeBody(b []byte, out any) error {
	st := getDecodeState(b)
	defer putDecodeState(st)
	var err error
	if r, ok := out.(recordDecoder); ok {
		err = r.decodeFrom(st)
	} else {
		err = json.UnmarshalDecode(st.dec, out)
	}
	if err == nil {
		if _, end := st.dec.ReadToken(); end != io.EOF {
			err = fmt.Errorf("invalid data after the top-level value (%v)", end)
		}
	}
	if err != nil {
		return st.pathError(err)
	}
	return nil
}

// decodeStates keeps decodeStates, each with its decoder, for reuse:
// a decoder is large enough that allocating one per response shows.
var decodeStates = sync.Pool{New: func() any {
	st := &decodeState{in: new(bytes.Buffer)}
	st.dec = jsontext.NewDecoder(st.in, jsonopt.Decode)
	return st
}}

// getDecodeState returns a decodeState reading b.
func getDecodeState(b []byte) *decodeState {
	st := decodeStates.Get().(*decodeState)
	*st.in = *bytes.NewBuffer(b)
	st.dec.Reset(st.in, jsonopt.Decode)
	return st
}

// putDecodeState returns st for reuse. What it handed out (strings, the
// coefficients of decimals, *string slabs) stays with the records: the maps
// are cleared and the slab dropped, never reused.
func putDecodeState(st *decodeState) {
	*st.in = bytes.Buffer{} // let go of the body
	st.dec.Reset(st.in, jsonopt.Decode)
	clear(st.strs)
	clear(st.coeffs)
	st.share, st.ptrs = false, nil
	decodeStates.Put(st)
}

// decodeRecord is the UnmarshalJSONFrom of the records decoded by name
// switch.
func decodeRecord(dec *jsontext.Decoder, r recordDecoder) error {
	return r.decodeFrom(&decodeState{dec: dec})
}

// pathError wraps err with the path of the value being decoded when it
// occurred, unless err already says it (encoding/json/v2's own errors do).
func (st *decodeState) pathError(err error) error {
	var se *json.SemanticError
	var xe *jsontext.SyntacticError
	switch {
	case errors.Is(err, ErrInconsistentList), errors.As(err, &xe):
		return err // about the whole page; or says where itself
	case errors.As(err, &se) && se.JSONPointer != "":
		inner := error(se)
		if se.Err != nil {
			inner = se.Err
		}
		return fmt.Errorf("field %s: %w", pointerPath(se.JSONPointer), inner)
	}
	if p := pointerPath(st.dec.StackPointer()); p != "" {
		return fmt.Errorf("field %s: %w", p, err)
	}
	return err
}

// pointerPath turns a JSON Pointer such as "/invoices/1/issue_date" into
// the path "invoices[1].issue_date".
func pointerPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// errKind is the error of a value of the wrong JSON kind.
func errKind(want string, got jsontext.Kind) error {
	return fmt.Errorf("want %s, got %s", want, jsonopt.KindName(got))
}

// object decodes a JSON object, calling member with each member's name
// (unescaped; valid only during the call), which must consume the value.
// null decodes to nothing, as encoding/json leaves a value on null.
func (st *decodeState) object(member func(name []byte) error) error {
	switch k := st.dec.PeekKind(); k {
	case 'n':
		_, err := st.dec.ReadToken()
		return err
	case '{':
	default:
		_, err := st.dec.ReadValue() // consumed, so the error's path is the value's
		return cmpErr(err, errKind("an object", k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return err
	}
	for st.dec.PeekKind() != '}' {
		v, err := st.dec.ReadValue()
		if err != nil {
			return err
		}
		name := v[1 : len(v)-1]
		if !verbatim(name) {
			s, _ := unquote(v)
			name = []byte(s)
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := st.dec.ReadToken()
	return err
}

// cmpErr returns err when it is not nil, and def otherwise.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// array decodes a JSON array into *dst, one element at a time with elem
// (which must consume it). null leaves *dst unchanged; [] gives an empty,
// non-nil slice, as encoding/json does.
func array[T any](st *decodeState, dst *[]T, elem func(*T) error) error {
	switch k := st.dec.PeekKind(); k {
	case 'n':
		_, err := st.dec.ReadToken()
		return err
	case '[':
	default:
		_, err := st.dec.ReadValue()
		return cmpErr(err, errKind("an array", k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return err
	}
	s := (*dst)[:0]
	if s == nil {
		s = []T{}
	}
	for st.dec.PeekKind() != ']' {
		var zero T
		s = append(s, zero)
		if err := elem(&s[len(s)-1]); err != nil {
			*dst = s
			return err
		}
	}
	*dst = s
	_, err := st.dec.ReadToken()
	return err
}

// value reads the next value, which must be of kind want (a JSON string
// '"', number '0', ...) or null; it returns nil for null.
func (st *decodeState) value(want jsontext.Kind, name string) (jsontext.Value, error) {
	v, err := st.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case want:
		return v, nil
	case 'n':
		return nil, nil
	}
	return nil, errKind(name, v.Kind())
}

// str decodes a JSON string that is unlikely to repeat (an id, a number).
func (st *decodeState) str(dst *string) error {
	v, err := st.value('"', "a string")
	if v == nil {
		return err
	}
	*dst, err = unquote(v)
	return err
}

// shared decodes a JSON string that may repeat from record to record,
// storing each distinct value once.
func (st *decodeState) shared(dst *string) error {
	v, err := st.value('"', "a string")
	if v == nil {
		return err
	}
	if !st.share {
		*dst, err = unquote(v)
		return err
	}
	raw := v[1 : len(v)-1]
	if s, ok := st.strs[string(raw)]; ok {
		*dst = s
		return nil
	}
	s, err := unquote(v)
	if s == string(raw) && len(st.strs) < maxShared { // not escaped: raw is the key
		if st.strs == nil {
			st.strs = make(map[string]string, 64)
		}
		st.strs[s] = s
	}
	*dst = s
	return err
}

// maxShared bounds how many distinct strings and coefficients one body
// shares, so that a body of only distinct values costs no more than that.
const maxShared = 4096

// strPtr decodes a JSON string or null into a *string (nil for null).
func (st *decodeState) strPtr(dst **string) error {
	if st.dec.PeekKind() == 'n' {
		_, err := st.dec.ReadToken()
		*dst = nil
		return err
	}
	var s string
	if err := st.shared(&s); err != nil {
		return err
	}
	if !st.share {
		p := new(string) // s itself stays on the stack
		*p = s
		*dst = p
		return nil
	}
	if len(st.ptrs) == cap(st.ptrs) {
		st.ptrs = make([]string, 0, 32)
	}
	st.ptrs = append(st.ptrs, s)
	*dst = &st.ptrs[len(st.ptrs)-1]
	return nil
}

// decimal decodes money exactly (see jsonopt.SetDecimal), sharing the
// coefficients of equal amounts.
func (st *decodeState) decimal(dst *decimal.Decimal) error {
	v, err := st.dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() != '0' || !st.share {
		return jsonopt.SetDecimal(dst, v)
	}
	m, exp, ok := jsonopt.SmallDecimal(v)
	if !ok || m == 0 {
		return jsonopt.SetDecimal(dst, v)
	}
	c, ok := st.coeffs[m]
	if !ok {
		c = decimal.New(m, 0)
		if st.coeffs == nil {
			st.coeffs = make(map[int64]decimal.Decimal, 64)
		}
		if len(st.coeffs) < maxShared {
			st.coeffs[m] = c
		}
	}
	*dst = c.Shift(exp)
	return nil
}

// date decodes a Date.
func (st *decodeState) date(dst *Date) error { return dst.UnmarshalJSONFrom(st.dec) }

// time decodes an RFC 3339 datetime exactly as time.Time's UnmarshalJSON
// does (null leaves dst unchanged).
func (st *decodeState) time(dst *time.Time) error {
	v, err := st.dec.ReadValue()
	if err != nil {
		return err
	}
	return dst.UnmarshalJSON(v)
}

// timePtr decodes a datetime or null into a *time.Time (nil for null).
func (st *decodeState) timePtr(dst **time.Time) error {
	if st.dec.PeekKind() == 'n' {
		_, err := st.dec.ReadToken()
		*dst = nil
		return err
	}
	t := new(time.Time)
	if err := st.time(t); err != nil {
		return err
	}
	*dst = t
	return nil
}

// bool decodes true or false (null leaves dst unchanged).
func (st *decodeState) bool(dst *bool) error {
	v, err := st.dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 't', 'f':
		*dst = v.Kind() == 't'
	case 'n':
	default:
		return errKind("a boolean", v.Kind())
	}
	return nil
}

// int decodes a JSON number that is an integer in range (null leaves dst
// unchanged).
func (st *decodeState) int(dst *int) error {
	v, err := st.value('0', "a number")
	if v == nil {
		return err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return fmt.Errorf("want an integer, got %s", v)
	}
	*dst = n
	return nil
}

// extra keeps the member name, whose value is next, in *dst.
func (st *decodeState) extra(dst *Extra, name []byte) error {
	v, err := st.dec.ReadValue()
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = make(Extra)
	}
	(*dst)[string(name)] = v.Clone()
	return nil
}

// unquote returns the text of v, a JSON string a jsontext.Decoder read (so
// already checked): the bytes between its quotes when they need no
// unescaping, the unescaped text otherwise, with invalid UTF-8 replaced by
// U+FFFD as encoding/json v1 replaces it.
func unquote(v jsontext.Value) (string, error) {
	if raw := v[1 : len(v)-1]; verbatim(raw) {
		return string(raw), nil
	}
	b, _ := jsontext.AppendUnquote(nil, v) // only invalid UTF-8 can fail here; it is replaced
	return string(b), nil
}

// verbatim reports whether the contents raw of a JSON string are its text:
// no escape, and valid UTF-8 (one pass for the common all-ASCII case).
func verbatim(raw []byte) bool {
	for i, c := range raw {
		if c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			return bytes.IndexByte(raw[i:], '\\') < 0 && utf8.Valid(raw[i:])
		}
	}
	return true
}

// unmarshalRecord is the UnmarshalJSON of every record: the encoding/json
// (v1) interface, decoding with the SDK's rules through encoding/json/v2.
func unmarshalRecord(b []byte, v any) error { return decodeBody(b, v) }

// marshalJSON is the MarshalJSON of every record: v encoded with the SDK's
// rules, through its MarshalJSONTo.
func marshalJSON(v any) ([]byte, error) { return json.Marshal(v, jsonopt.Encode) }

// marshalRecord is the MarshalJSONTo of every record: v, a pointer to the
// record converted to a type without methods, encoded with the SDK's rules
// (money as exact JSON numbers; Extra's members after the typed fields).
func marshalRecord(enc *jsontext.Encoder, v any) error {
	return json.MarshalEncode(enc, v, jsonopt.Encode)
}
