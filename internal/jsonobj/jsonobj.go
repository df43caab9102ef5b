// Package jsonobj builds JSON objects whose fields keep the order they are
// given in, so that generated webhook payloads read like the field lists of
// the API document. webhooks, invoicingtest and cmd/invoicing share it.
package jsonobj

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Object is a JSON object as an ordered list of fields. Set replaces a
// key's value; a key given twice (by appending) is written twice, which the
// encoder refuses unless it allows duplicate names
// (jsontext.AllowDuplicateNames).
type Object []Field

// Field is one member of an Object; Value is encoded with the options of
// the encoder the Object is written to (jsonopt.Encode, say).
type Field struct {
	Key   string
	Value any
}

// MarshalJSONTo writes the fields in order, straight to enc.
func (o Object) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, f := range o {
		if err := enc.WriteToken(jsontext.String(f.Key)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, f.Value); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// With returns o with fields appended; o itself is not changed.
func (o Object) With(fields ...Field) Object {
	out := make(Object, 0, len(o)+len(fields))
	return append(append(out, o...), fields...)
}

// Set returns o with the value of key replaced, or with the field appended
// when o has no such key. It changes o's elements in place.
func (o Object) Set(key string, value any) Object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = value
			return o
		}
	}
	return append(o, Field{Key: key, Value: value})
}

// Get returns the value of key and whether o has it.
func (o Object) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Parse reads a JSON object into an Object: its members in order, each
// value kept as the exact JSON text it was (a jsontext.Value). Names given
// twice and invalid UTF-8 are kept as they are.
func Parse(b []byte) (Object, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("jsonobj: want a JSON object, got %v", tok.Kind())
	}
	o := Object{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before ReadValue voids tok
		value, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		o = append(o, Field{Key: name, Value: value.Clone()})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err == nil {
		return nil, fmt.Errorf("jsonobj: data after the object")
	}
	return o, nil
}
