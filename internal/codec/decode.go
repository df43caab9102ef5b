package codec

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
)

// decodeOptions accept what encoding/json (v1) accepts: a name given twice
// in one object (the last member wins) and invalid UTF-8 in a string
// (replaced by U+FFFD).
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// A Decoder decodes one JSON document into records, straight from its token
// stream. In a list page (share set), strings that repeat from record to
// record (a client's name, a currency) are shared rather than stored again,
// and so are the coefficients of equal amounts: decimal never changes a
// coefficient, and Shift shares it (see shared). The *string fields of a
// page's records point into slabs allocated a few at a time, and the bytes
// of a document's strings are copied into a few blocks (newText).
type Decoder struct {
	dec  *jsontext.Decoder // the stream being read: top, or a lenient member's
	top  *jsontext.Decoder
	in   bytes.Reader
	subs []*memberDecoder // lenient members' decoders, by nesting depth
	nest int

	share  bool
	shared *shared     // allocated on a page's first use, cleared after each
	ptrs   []string    // the *string fields of a page point into these slabs
	times  []time.Time // and its *time.Time fields into these
	texts  []byte      // and the bytes of its unique strings are in these

	// kept is set by a field decoder to the member's text when the field
	// would not write the same text back, and empty when the value it
	// stored is empty (see Meta).
	kept  jsontext.Value
	empty bool
	// element is set while a new element of an array of records begins.
	element bool
}

// memberDecoder reads one member's value on its own, for a lenient record.
type memberDecoder struct {
	r    bytes.Reader
	dec  *jsontext.Decoder
	name []byte // the member's name
}

// shared holds the strings and the coefficients a page's records share.
// Each table is direct-mapped: a value's hash picks its one slot, where a
// later value of the same hash replaces it. A look-up is one hash and one
// comparison, and a body of only distinct values costs no more than the
// tables.
type shared struct {
	seed   maphash.Seed
	used   bool
	strs   [sharedSlots]string
	coeffs [sharedSlots]decimal.Decimal // coeffs[i] is ms[i] (exponent 0)
	ms     [sharedSlots]int64           // 0: an empty slot
}

// sharedSlots is the size of each table of shared (a page of 100 invoices
// has some 300 distinct amounts): 1 << sharedBits.
const (
	sharedBits  = 10
	sharedSlots = 1 << sharedBits
)

var decoders = sync.Pool{New: func() any {
	d := new(Decoder)
	d.top = jsontext.NewDecoder(&d.in, decodeOptions...)
	return d
}}

// Decode decodes the JSON document b with fn, which must read one value;
// anything after it is an error. share is for list pages (see Decoder). An
// error names where in the document it occurred, as a path such as
// "invoices[3].line_items[1].unit_price".
func Decode(b []byte, share bool, fn func(*Decoder) error) error {
	d := decoders.Get().(*Decoder)
	d.in.Reset(b)
	d.top.Reset(&d.in, decodeOptions...)
	d.dec, d.share = d.top, share
	defer func() {
		d.in.Reset(nil)
		d.top.Reset(&d.in, decodeOptions...)
		if d.shared != nil && d.shared.used {
			*d.shared = shared{seed: d.shared.seed} // the page's values are the caller's alone
		}
		d.ptrs, d.times, d.texts, d.kept, d.nest = nil, nil, nil, nil, 0
		decoders.Put(d)
	}()
	err := fn(d)
	if err == nil {
		if _, end := d.top.ReadToken(); end != io.EOF {
			err = fmt.Errorf("invalid data after the top-level value (%v)", end)
		}
	}
	if err != nil {
		return d.pathError(err)
	}
	return nil
}

// pathError wraps err with the path of the value being decoded when it
// occurred, unless err says it already.
func (d *Decoder) pathError(err error) error {
	var xe *jsontext.SyntacticError
	if errors.As(err, &xe) || errors.As(err, new(*TooManyError)) {
		return err
	}
	if p := PointerPath(d.top.StackPointer()); p != "" {
		return fmt.Errorf("field %s: %w", p, err)
	}
	return err
}

// PointerPath turns a JSON Pointer such as "/invoices/1/issue_date" into the
// path "invoices[1].issue_date".
func PointerPath(p jsontext.Pointer) string {
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

// PeekKind returns the kind of the next value.
func (d *Decoder) PeekKind() jsontext.Kind { return d.dec.PeekKind() }

// Skip consumes the next value.
func (d *Decoder) Skip() error { return d.dec.SkipValue() }

// Begin starts a record whose Meta is m: it reports true when the next
// value is an object (which Members then reads). JSON null is consumed and
// leaves the record unchanged, as encoding/json does, but for a new element
// of an array of records, which remembers it (to write null back). Any
// other value is an error.
func (d *Decoder) Begin(m *Meta) (bool, error) {
	element := d.element
	d.element = false
	switch k := d.dec.PeekKind(); k {
	case '{':
		return true, nil
	case 'n':
		if element {
			m.data().null = true
		}
		_, err := d.dec.ReadToken()
		return false, err
	default:
		_, err := d.dec.ReadValue() // consumed, so that the error's path is the value's
		return false, cmpErr(err, fmt.Errorf("a record must be a JSON object, got %s", KindName(k)))
	}
}

// Members reads the members of an object into a record of shape s whose
// Meta is m and whose Extra is *extra. member decodes the member named name
// (unescaped, valid until it reads) into its field and returns the field's
// index, or returns -1 without reading when no field has that name: the
// member is then kept in Extra. In a lenient record a member whose value
// does not fit its field is kept in Extra too, and the field is left zero:
// lenient is the record (a pointer) when it decodes leniently, nil
// otherwise.
func (d *Decoder) Members(m *Meta, s *Shape, extra *map[string]jsontext.Value, lenient any, member func(name []byte) (int, error)) error {
	*m = Meta{}
	var seen bits
	var read func(name []byte) error
	if lenient == nil {
		if err := d.strict(m, s, extra, &seen, member); err != nil {
			return err
		}
	} else {
		if len(d.subs) == d.nest {
			sub := new(memberDecoder)
			sub.dec = jsontext.NewDecoder(&sub.r, decodeOptions...)
			d.subs = append(d.subs, sub)
		}
		sub := d.subs[d.nest]
		d.nest++
		defer func() { d.nest-- }()
		read = func(name []byte) error {
			sub.name = append(sub.name[:0], name...) // name is valid only until the next read
			name = sub.name
			raw, err := d.dec.ReadValue()
			if err != nil {
				return err
			}
			outer := d.dec
			sub.r.Reset(raw)
			sub.dec.Reset(&sub.r, decodeOptions...)
			d.dec, d.kept, d.empty = sub.dec, nil, false
			i, err := member(name)
			d.dec = outer
			if i >= 0 {
				if seen.has(i) && err != nil { // a name given twice: the last member wins
					zeroField(lenient, s.names[i])
				}
				seen.set(i)
				m.forget(i)
			}
			if i >= 0 && err == nil {
				d.mark(m, s, i)
				if delete(*extra, string(name)); len(*extra) == 0 {
					*extra = nil // an earlier member of the name did not fit
				}
				return nil
			}
			if *extra == nil { // no field, or a value that does not fit it: kept as sent
				*extra = make(map[string]jsontext.Value)
			}
			(*extra)[string(name)] = CleanUTF8(raw)
			return nil
		}
		if err := d.Object(read); err != nil {
			return err
		}
	}
	if !seen.covers(&s.required) {
		for i := range s.names {
			if !seen.has(i) && s.required.has(i) {
				m.data().absent.set(i)
			}
		}
	}
	if m.d != nil {
		// In field order, so that two objects of the same members in
		// another order give equal records.
		slices.SortFunc(m.d.overrides, func(a, b override) int { return a.field - b.field })
	}
	return nil
}

// zeroField sets the field of the struct v points to whose JSON name is
// name to its zero value: an earlier member of the name had set it. (Rare:
// a name given twice in a lenient record, the last value not fitting.)
func zeroField(v any, name string) {
	rv := reflect.ValueOf(v).Elem()
	for _, f := range reflect.VisibleFields(rv.Type()) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && !f.Anonymous && (tag == name || tag == "" && f.Name == name) {
			rv.FieldByIndex(f.Index).SetZero()
			return
		}
	}
}

// strict reads the members of a record of shape s that does not decode
// leniently (see Members), noting in seen the fields that had one.
func (d *Decoder) strict(m *Meta, s *Shape, extra *map[string]jsontext.Value, seen *bits, member func(name []byte) (int, error)) error {
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for d.dec.PeekKind() != '}' {
		quoted, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		name := quoted[1 : len(quoted)-1]
		d.kept, d.empty = nil, false
		i, err := member(name) // a field's name needs no unescaping: try it as it is
		if i < 0 && err == nil && !verbatim(name) {
			name = []byte(unquote(quoted))
			i, err = member(name)
		}
		switch {
		case err != nil:
			return err
		case i < 0:
			err = d.keep(extra, name)
		default:
			seen.set(i)
			if m.d != nil || d.kept != nil || d.empty {
				d.mark(m, s, i)
			}
		}
		if err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

// mark records what the Meta of a record of shape s needs to know of the
// member of field i just decoded: present although empty and omitempty,
// and its text when the field would write it otherwise (d.kept).
func (d *Decoder) mark(m *Meta, s *Shape, i int) {
	if m.d != nil {
		m.forget(i) // a name given twice: the last member wins
	}
	if d.empty && s.omit.has(i) {
		m.data().present.set(i)
	}
	if d.kept != nil {
		m.data().overrides = append(m.data().overrides, override{field: i, raw: d.kept.Clone()})
		d.kept = nil
	}
}

// forget drops what m remembers of field i's member.
func (m *Meta) forget(i int) {
	if m.d == nil {
		return
	}
	m.d.present.clear(i)
	for j, o := range m.d.overrides {
		if o.field == i {
			m.d.overrides = append(m.d.overrides[:j], m.d.overrides[j+1:]...)
			return
		}
	}
}

// keep reads the next value into (*extra)[name].
func (d *Decoder) keep(extra *map[string]jsontext.Value, name []byte) error {
	key := string(name) // name is valid only until the next read
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	if *extra == nil {
		*extra = make(map[string]jsontext.Value)
	}
	(*extra)[key] = CleanUTF8(v)
	return nil
}

// value reads the next value, which must be of kind want or null; it
// returns nil for null, after noting it as the member's text (the field's
// zero value does not encode as null). The caller sets the field to zero
// on null: of a name given twice, the last member wins.
func (d *Decoder) value(want jsontext.Kind, name string) (jsontext.Value, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case want:
		return v, nil
	case 'n':
		d.kept = v
		return nil, nil
	}
	return nil, errKind(name, v.Kind())
}

// Unique decodes a JSON string that does not repeat from record to record
// (an id, a document number) into *dst: a page does not try to share it.
func (d *Decoder) Unique(dst *string) error {
	v, err := d.value('"', "a string")
	*dst = ""
	if v != nil {
		*dst = d.newText(v)
	}
	d.empty = *dst == ""
	return err
}

// newText returns the text of the JSON string v. When it needs no
// unescaping its bytes are copied into the document's slab, allocated a few
// kilobytes at a time (at most the document's size), rather than each into
// an allocation of its own.
func (d *Decoder) newText(v jsontext.Value) string {
	raw := v[1 : len(v)-1]
	if len(raw) == 0 || len(raw) > maxSlabText || !verbatim(raw) {
		return unquote(v)
	}
	if cap(d.texts)-len(d.texts) < len(raw) {
		d.texts = make([]byte, 0, max(len(raw), min(slabSize, int(d.in.Size()))))
	}
	start := len(d.texts)
	d.texts = append(d.texts, raw...)
	// The slab's bytes are never written again: they are the string's.
	return unsafe.String(&d.texts[start], len(raw))
}

// slabSize is the size of a slab of newText; a text longer than
// maxSlabText has an allocation of its own.
const (
	slabSize    = 4096
	maxSlabText = 256
)

// String decodes a JSON string into *dst (a string type's, converted).
func (d *Decoder) String(dst *string) error {
	v, err := d.value('"', "a string")
	*dst = ""
	if v != nil {
		*dst = d.text(v)
	}
	d.empty = *dst == ""
	return err
}

// ReadStringPtr decodes a JSON string or null (nil) into *dst.
func ReadStringPtr[S ~string](d *Decoder, dst **S) error {
	if d.null() {
		*dst = nil
		return d.readNull()
	}
	var s string
	if err := d.String(&s); err != nil {
		return err
	}
	if len(d.ptrs) == cap(d.ptrs) {
		d.ptrs = make([]string, 0, 32)
	}
	d.ptrs = append(d.ptrs, s)
	// S's underlying type is string: the pointers are interchangeable.
	*dst = (*S)(unsafe.Pointer(&d.ptrs[len(d.ptrs)-1]))
	return nil
}

// text returns the text of the JSON string v, shared when d shares.
func (d *Decoder) text(v jsontext.Value) string {
	raw := v[1 : len(v)-1]
	if !d.share {
		return d.newText(v)
	}
	sh := d.sharing()
	slot := &sh.strs[maphash.Bytes(sh.seed, raw)%sharedSlots]
	if *slot == string(raw) {
		return *slot
	}
	s := d.newText(v)
	if s == string(raw) { // not escaped: raw is its text
		*slot = s
	}
	return s
}

// sharing returns d's tables of shared values, for a page.
func (d *Decoder) sharing() *shared {
	if d.shared == nil {
		d.shared = &shared{seed: maphash.MakeSeed()}
	}
	d.shared.used = true
	return d.shared
}

// Bool decodes true or false into *dst.
func (d *Decoder) Bool(dst *bool) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 't', 'f':
		*dst = v.Kind() == 't'
	case 'n':
		*dst, d.kept = false, v
	default:
		return errKind("a boolean", v.Kind())
	}
	d.empty = !*dst
	return nil
}

// BoolPtr decodes true, false or null (nil) into *dst.
func (d *Decoder) BoolPtr(dst **bool) error { return readPtr(d, dst, d.Bool) }

// Int decodes a JSON number that is an integer in range into *dst.
func (d *Decoder) Int(dst *int) error {
	v, err := d.value('0', "a number")
	if v == nil {
		*dst = 0
		return err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return fmt.Errorf("want an integer, got %s", v)
	}
	if n == 0 && v[0] == '-' {
		d.kept = v
	}
	*dst, d.empty = n, n == 0
	return nil
}

// IntPtr decodes an integer or null (nil) into *dst.
func (d *Decoder) IntPtr(dst **int) error { return readPtr(d, dst, d.Int) }

// Decimal decodes money exactly into *dst, from a JSON number (1.50 keeps
// its two places) or a string holding one. f says which of the two the
// record writes (AsString); the other is remembered as sent.
func (d *Decoder) Decimal(dst *decimal.Decimal, f Flags) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	var canonical bool
	switch v.Kind() {
	case '0':
		canonical, err = d.setDecimal(dst, v)
		canonical = canonical && f&AsString == 0
	case '"':
		// As decimal.Decimal's UnmarshalJSON: the text between the quotes,
		// not unescaped, must parse.
		canonical, err = d.setDecimal(dst, v[1:len(v)-1])
		canonical = canonical && f&AsString != 0
	case 'n':
		*dst, d.kept, d.empty = decimal.Zero, v, true
		return nil
	default:
		return fmt.Errorf("%w, got %s", ErrNotDecimal, KindName(v.Kind()))
	}
	if err == nil && !canonical {
		d.kept = v
	}
	d.empty = dst.IsZero()
	return err
}

// ErrNotDecimal is the error (wrapped) of a JSON value that is neither a
// number nor a string holding one.
var ErrNotDecimal = errors.New("want a JSON number or a numeric string")

// setDecimal parses the number text s into *dst, sharing the coefficients
// of equal amounts, and reports whether dst writes back as s.
func (d *Decoder) setDecimal(dst *decimal.Decimal, s []byte) (canonical bool, err error) {
	m, exp, neg, ok := SmallDecimal(s)
	if !ok {
		x, err := decimal.NewFromString(string(s))
		if err != nil {
			return false, fmt.Errorf("%w: invalid decimal %q", ErrNotDecimal, s)
		}
		*dst = x
		return FormatDecimal(x) == string(s), nil
	}
	if m == 0 || !d.share {
		*dst = newDecimal(m, exp)
		return m != 0 || !neg, nil
	}
	sh := d.sharing()
	i := uint64(m) * 0x9e3779b97f4a7c15 >> (64 - sharedBits) // Fibonacci hashing
	if sh.ms[i] != m {                                       // m is not 0
		sh.ms[i], sh.coeffs[i] = m, decimal.New(m, 0)
	}
	*dst = sh.coeffs[i].Shift(exp)
	return true, nil
}

// DecimalPtr decodes money or null (nil) into *dst.
func (d *Decoder) DecimalPtr(dst **decimal.Decimal, f Flags) error {
	return readPtr(d, dst, func(x *decimal.Decimal) error { return d.Decimal(x, f) })
}

// Time decodes an RFC 3339 datetime into *dst as time.Time's own
// UnmarshalJSON parses it.
func (d *Decoder) Time(dst *time.Time) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == 'n' {
		*dst, d.kept, d.empty = time.Time{}, v, true
		return nil
	}
	if err := dst.UnmarshalJSON(v); err != nil {
		return err
	}
	d.empty = dst.IsZero()
	if !canonicalTime(v) {
		var buf [64]byte
		if !bytes.Equal(appendTime(buf[:0], *dst), v) {
			d.kept = v
		}
	}
	return nil
}

// TimePtr decodes a datetime or null (nil) into *dst.
func (d *Decoder) TimePtr(dst **time.Time) error {
	if !d.share || d.null() {
		return readPtr(d, dst, d.Time)
	}
	if len(d.times) == cap(d.times) {
		d.times = make([]time.Time, 0, 32)
	}
	d.times = append(d.times, time.Time{})
	t := &d.times[len(d.times)-1]
	if err := d.Time(t); err != nil {
		return err
	}
	*dst, d.empty = t, false
	return nil
}

// Raw keeps the next value as it is (null as the text null).
func (d *Decoder) Raw(dst *jsontext.Value) error {
	v, err := d.dec.ReadValue()
	if err == nil {
		*dst = CleanUTF8(v)
	}
	d.empty = len(*dst) == 0
	return err
}

// RawMap decodes a JSON object into a map of its members' values as they
// are; null gives a nil map.
func (d *Decoder) RawMap(dst *map[string]jsontext.Value) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		*dst = nil
		return d.readNull()
	case '{':
	default:
		_, err := d.dec.ReadValue()
		return cmpErr(err, errKind("an object", k))
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	m := map[string]jsontext.Value{}
	for d.dec.PeekKind() != '}' {
		quoted, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		name := unquote(quoted)
		v, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		m[name] = CleanUTF8(v)
	}
	*dst = m
	_, err := d.dec.ReadToken()
	return err
}

// Custom decodes the next value with u's own UnmarshalJSON.
func (d *Decoder) Custom(u interface{ UnmarshalJSON([]byte) error }) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return u.UnmarshalJSON(v)
}

// ReadRecord decodes a nested record into *dst with decode (its decodeJSON),
// setting *dst only when the whole record decoded. null leaves it empty,
// and is remembered (the empty record writes an object).
func ReadRecord[T any](d *Decoder, dst *T, decode func(*T, *Decoder) error) error {
	if d.null() {
		var zero T
		*dst = zero
		d.kept, _ = d.dec.ReadValue()
		return nil
	}
	v := *dst
	if err := decode(&v, d); err != nil {
		return err
	}
	*dst = v
	return nil
}

// ReadRecordPtr decodes a nested record or null (nil) into *dst.
func ReadRecordPtr[T any](d *Decoder, dst **T, decode func(*T, *Decoder) error) error {
	return readPtr(d, dst, func(v *T) error { return decode(v, d) })
}

// ReadRecords decodes a JSON array of records into *dst (null gives nil, []
// an empty slice), setting *dst only when every record decoded.
func ReadRecords[T any](d *Decoder, dst *[]T, decode func(*T, *Decoder) error) error {
	return ReadRecordsUpTo(d, dst, -1, decode)
}

// TooManyError is the error of RecordsUpTo for an array of more than limit
// records; Count counts them all.
type TooManyError struct{ Count, Limit int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("the array holds %d records, more than %d", e.Count, e.Limit)
}

// ReadRecordsUpTo is Records for an array of at most limit records (-1: no
// limit): once the record after the limit begins, the rest is skipped and
// the error is a *TooManyError.
func ReadRecordsUpTo[T any](d *Decoder, dst *[]T, limit int, decode func(*T, *Decoder) error) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		*dst = nil
		return d.readNull()
	case '[':
	default:
		_, err := d.dec.ReadValue()
		return cmpErr(err, errKind("an array", k))
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	s := make([]T, 0, max(limit, 0))
	for d.dec.PeekKind() != ']' {
		if len(s) == limit {
			n := len(s)
			for d.dec.PeekKind() != ']' {
				if err := d.dec.SkipValue(); err != nil {
					return err
				}
				n++
			}
			return &TooManyError{Count: n, Limit: limit}
		}
		var zero T
		s = append(s, zero)
		d.element = true
		if err := decode(&s[len(s)-1], d); err != nil {
			return err
		}
	}
	*dst, d.empty = s, len(s) == 0
	_, err := d.dec.ReadToken()
	return err
}

// CleanUTF8 returns a copy of v, a JSON value kept as it was sent (an
// Extra member, say), in which the strings are valid: invalid UTF-8 and
// escaped lone surrogates become U+FFFD, as in every string the codec
// decodes, so that it is written back as valid JSON. Anything else stays as
// sent, names given twice included.
func CleanUTF8(v jsontext.Value) jsontext.Value {
	if utf8.Valid(v) && !bytes.Contains(v, []byte(`\u`)) {
		return v.Clone()
	}
	var out bytes.Buffer
	dec := jsontext.NewDecoder(bytes.NewReader(v), decodeOptions...)
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break // io.EOF: v is a value the decoder read whole
		}
		if tok.Kind() == '"' {
			tok = jsontext.String(tok.String()) // unescaped, invalid parts replaced
		}
		if enc.WriteToken(tok) != nil {
			return v.Clone()
		}
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// readPtr decodes a value or null (nil) into *dst with decode, setting *dst
// only when the value decoded.
func readPtr[T any](d *Decoder, dst **T, decode func(*T) error) error {
	if d.null() {
		*dst = nil
		return d.readNull()
	}
	v := new(T)
	if err := decode(v); err != nil {
		return err
	}
	*dst, d.empty = v, false
	return nil
}

// null reports whether the next value is null.
func (d *Decoder) null() bool { return d.dec.PeekKind() == 'n' }

// readNull consumes a null the field holds as nil (a pointer, a slice).
func (d *Decoder) readNull() error {
	d.empty = true
	_, err := d.dec.ReadToken()
	return err
}

// errKind is the error of a value of the wrong JSON kind.
func errKind(want string, got jsontext.Kind) error {
	return fmt.Errorf("want %s, got %s", want, KindName(got))
}

// cmpErr returns err when it is not nil, and def otherwise.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// unquote returns the text of v, a JSON string a jsontext.Decoder read (so
// already checked): the bytes between its quotes when they need no
// unescaping, the unescaped text otherwise, with invalid UTF-8 replaced by
// U+FFFD as encoding/json v1 replaces it.
func unquote(v jsontext.Value) string {
	if raw := v[1 : len(v)-1]; verbatim(raw) {
		return string(raw)
	}
	b, _ := jsontext.AppendUnquote(nil, v) // only invalid UTF-8 can fail here; it is replaced
	return string(b)
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

// KindName names the JSON kind k for error messages: "a string", "an
// object", ...
func KindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an invalid value"
}

// Object reads a JSON object that is not a record (a list page, say):
// member is called with each member's name (unescaped, valid until the
// next read) and must read its value, or Skip it. Any other value, null
// included, is an error.
func (d *Decoder) Object(member func(name []byte) error) error {
	if k := d.dec.PeekKind(); k != '{' {
		_, err := d.dec.ReadValue()
		return cmpErr(err, errKind("an object", k))
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for d.dec.PeekKind() != '}' {
		quoted, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		name := quoted[1 : len(quoted)-1]
		if !verbatim(name) {
			name = []byte(unquote(quoted))
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken()
	return err
}
