package invoicing

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// fieldPath tells where in data a decode into a value of type t fails, as
// a path such as "line_items[1].unit_price", or "" when it cannot tell. It
// runs only after a decode failed, to name the field in the error:
// encoding/json names no field for an error of a type's own UnmarshalJSON
// (a Date, a decimal) and no index for one inside an array.
func fieldPath(data []byte, t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(data, &members) != nil {
			return ""
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			raw, ok := members[name]
			if !ok || json.Unmarshal(raw, reflect.New(f.Type).Interface()) == nil {
				continue
			}
			return joinPath(name, fieldPath(raw, f.Type))
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) != nil {
			return ""
		}
		for i, raw := range elems {
			if json.Unmarshal(raw, reflect.New(t.Elem()).Interface()) != nil {
				return joinPath("["+strconv.Itoa(i)+"]", fieldPath(raw, t.Elem()))
			}
		}
	}
	return ""
}

func joinPath(head, rest string) string {
	if rest == "" || rest[0] == '[' {
		return head + rest
	}
	return head + "." + rest
}

// jsonName is the JSON member name encoding/json uses for the struct field
// f, and false for a field it does not decode (unexported, or tagged "-").
// Embedded structs are not followed: the SDK's records have none that carry
// JSON fields.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}
