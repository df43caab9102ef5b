package invoicing

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// The records of the resources the service documents only in outline
// (Contact, Bill, BillLineItem, Account, TaxCode, Report, ReportLine,
// BankAccount, BankTransaction) decode leniently: a member whose value does
// not fit its typed field (a number where the field is a string, a datetime
// where it is a Date, "" where it is a time) leaves the field zero, is named
// by the record's MismatchedFields and is kept in its Extra, and the decode
// goes on, so one odd field never fails a call or a list. JSON null leaves a
// field zero and is not a mismatch. A nested record (a bill's line, a
// report's row) is decoded the same way and names its own mismatches; a
// bill's line_items or a report's lines that are not an array are a
// mismatch of that field of the bill or report.
//
// A record itself must be a JSON object: decoding a string, a number, a
// boolean or an array into one is an error, naming what was expected.

// decodedFrom is what an outline record remembers of the JSON object it was
// decoded from: which typed fields had a member, and which of those members
// did not fit.
type decodedFrom struct {
	decoded    bool
	present    uint64 // bit i: the struct's field i had a member
	mismatched []string
}

// has reports whether the object had a member for the typed field named
// name of the record type t.
func (d *decodedFrom) has(t reflect.Type, name string) bool {
	f, ok := jsonFields(t)[name]
	return ok && d.present&(1<<f.index) != 0
}

// decodeLenient is the UnmarshalJSONFrom of every outline record: v points
// to the record converted to a type without methods, from to the record's
// decodedFrom. Each member decodes into the typed field of its name as
// encoding/json/v2 decodes it; one that does not fit leaves the field zero,
// its name goes to from.mismatched (in field order) and its value to the
// record's Extra, as do the members of no typed field. Once a field failed,
// later members of its name (a duplicate) are ignored.
func decodeLenient[P any](dec *jsontext.Decoder, v *P, from *decodedFrom) error {
	if k := dec.PeekKind(); k != '{' && k != 'n' {
		_, err := dec.ReadValue()
		return cmpErr(err, fmt.Errorf("invoicing: a record must be a JSON object, got %s", jsonopt.KindName(k)))
	}
	if dec.PeekKind() == '{' {
		var zero P
		*v, *from = zero, decodedFrom{decoded: true}
	}
	rv := reflect.ValueOf(v).Elem()
	fields := jsonFields(rv.Type())
	extra := rv.FieldByName("Extra").Addr().Interface().(*Extra)
	var failed uint64
	st := &decodeState{dec: dec}
	keep := func(name []byte, member jsontext.Value) {
		if *extra == nil {
			*extra = make(Extra)
		}
		(*extra)[string(name)] = member.Clone()
	}
	err := st.object(func(name []byte) error {
		fi, ok := fields[string(name)]
		if !ok {
			return st.extra(extra, name)
		}
		i := fi.index
		member, err := dec.ReadValue()
		if err != nil || failed&(1<<i) != 0 {
			return err
		}
		f := rv.Field(i)
		switch {
		case member.Kind() == 'n' && !fi.nullable:
			// The field cannot encode null: keep the null as it came, so the
			// record encodes back to it. Not a mismatch; the field is zero.
			f.SetZero()
			from.present &^= 1 << i
			keep(name, member)
		case json.Unmarshal(member, f.Addr().Interface(), jsonopt.DecodeOpts...) != nil:
			failed |= 1 << i
			from.present &^= 1 << i
			f.SetZero()
			keep(name, member)
		default:
			from.present |= 1 << i
			delete(*extra, string(name)) // an earlier null of the name
		}
		return nil
	})
	for i := range rv.NumField() {
		if failed&(1<<i) != 0 {
			name, _ := jsonName(rv.Type().Field(i))
			from.mismatched = append(from.mismatched, name)
		}
	}
	return err
}

// fieldInfo describes a typed field of an outline record.
type fieldInfo struct {
	index int
	// nullable reports whether the field's zero value encodes as null (a
	// pointer, a slice, a Date), so that a null member fits it.
	nullable bool
}

// jsonFields maps the JSON names of t's typed fields to what decodeLenient
// needs of them.
func jsonFields(t reflect.Type) map[string]fieldInfo {
	if f, ok := fieldsByType.Load(t); ok {
		return f.(map[string]fieldInfo)
	}
	fields := make(map[string]fieldInfo, t.NumField())
	for i := range t.NumField() {
		if name, ok := jsonName(t.Field(i)); ok {
			zero, err := json.Marshal(reflect.New(t.Field(i).Type).Interface(), jsonopt.Encode)
			fields[name] = fieldInfo{index: i, nullable: err == nil && string(zero) == "null"}
		}
	}
	fieldsByType.Store(t, fields)
	return fields
}

// fieldsByType caches jsonFields for the few outline record types (and
// their method-less copies); its maps are never modified once stored.
var fieldsByType sync.Map // reflect.Type → map[string]fieldInfo

// jsonName is the JSON member name encoding/json/v2 uses for the struct
// field f, and false for a field that is not one member (unexported, tagged
// "-", or the inline Extra).
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if !f.IsExported() || tag == "-" || strings.Contains(tag, ",embed") {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}

// marshalLenient is the MarshalJSONTo of every outline record (v and from as
// for decodeLenient). A record built in code encodes all its typed fields,
// then Extra's members. A decoded record encodes back to the members it was
// decoded from: the typed fields that had a member that fit, then Extra's
// members (a mismatched member, or a null the field cannot hold, as the
// service sent it).
func marshalLenient[P any](enc *jsontext.Encoder, v *P, from *decodedFrom) error {
	if !from.decoded {
		return marshalRecord(enc, v)
	}
	b, err := json.Marshal(v, jsonopt.Encode)
	if err != nil {
		return err
	}
	fields := jsonFields(reflect.TypeFor[P]())
	dec := jsontext.NewDecoder(bytes.NewBuffer(b), jsonopt.Decode)
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var buf bytes.Buffer
	out := jsontext.NewEncoder(&buf, jsonopt.Encode)
	if err := out.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	var typedDone uint64 // typed fields come first: a name seen again is Extra's
	for dec.PeekKind() != '}' {
		quoted, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name, _ := unquote(quoted)
		val, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if f, typed := fields[name]; typed && typedDone&(1<<f.index) == 0 {
			typedDone |= 1 << f.index
			if from.present&(1<<f.index) == 0 {
				continue // absent, null or mismatched: Extra has the member if it came
			}
		}
		if err := out.WriteToken(jsontext.String(name)); err != nil {
			return err
		}
		if err := out.WriteValue(val); err != nil {
			return err
		}
	}
	if err := out.WriteToken(jsontext.EndObject); err != nil {
		return err
	}
	// On enc with the SDK's options: the kept values may hold what its own
	// options would refuse (see jsonopt.Encode).
	return json.MarshalEncode(enc, jsontext.Value(bytes.TrimSpace(buf.Bytes())), jsonopt.Encode)
}
