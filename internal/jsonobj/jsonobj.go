// Package jsonobj builds JSON objects whose fields keep the order they are
// given in, so that generated webhook payloads read like the field lists of
// the API document. invoicingtest and cmd/invoicing share it.
package jsonobj

import (
	"bytes"
	"encoding/json"
)

// Object is a JSON object as an ordered list of fields. A key given twice
// is written twice; Set replaces a key instead.
type Object []Field

// Field is one member of an Object; Value is encoded with encoding/json.
type Field struct {
	Key   string
	Value any
}

// MarshalJSON writes the fields in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
