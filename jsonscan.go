package invoicing

import (
	"encoding/json"
	"errors"
)

// This file splits a JSON object into its members, counting the elements
// of those that are arrays, without decoding them: a list response is
// refused for holding too many records before any record is decoded, in
// the one pass that finds the records.
//
// eachMember checks the object's own structure (braces, keys, colons,
// commas) and finds where each value ends; it does not check what is inside
// a value. Its callers hand every value to encoding/json, which does, so
// that together they accept exactly the valid JSON objects.

var (
	errNotObject = errors.New("not a JSON object")
	errSyntax    = errors.New("malformed JSON")
)

// eachMember calls fn with the key, the raw value and (for an array) the
// number of elements of each member of the JSON object b, in order. It
// fails when b is not an object; fn must check the value it is given (see
// above).
func eachMember(b []byte, fn func(key string, value []byte, elements int) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for i < len(b) {
		if b[i] != '"' {
			return errSyntax
		}
		end := skipString(b, i)
		key, err := memberKey(b[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		start := skipSpace(b, i+1)
		if start >= len(b) {
			return errSyntax
		}
		end, elements := skipValue(b, start)
		if end == start {
			return errSyntax // no value
		}
		if err := fn(key, b[start:end], elements); err != nil {
			return err
		}
		i = skipSpace(b, end)
		switch {
		case i >= len(b):
			return errSyntax
		case b[i] == '}':
			return trailing(b, i+1)
		case b[i] != ',':
			return errSyntax
		}
		i = skipSpace(b, i+1)
	}
	return errSyntax
}

// trailing fails when anything but white space follows index i.
func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// memberKey returns the text of the JSON string k.
func memberKey(k []byte) (string, error) {
	if len(k) < 2 || k[0] != '"' || k[len(k)-1] != '"' {
		return "", errSyntax
	}
	plain := true
	for _, c := range k[1 : len(k)-1] {
		if c < 0x20 || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(k[1 : len(k)-1]), nil
	}
	var s string
	err := json.Unmarshal(k, &s)
	return s, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at b[i]
// and, when that value is an array, its number of elements: one more than
// its top-level commas unless it is empty (exact for valid JSON, which
// encoding/json checks afterwards).
func skipValue(b []byte, i int) (end, elements int) {
	if i >= len(b) {
		return len(b), 0
	}
	switch b[i] {
	case '"':
		return skipString(b, i), 0
	case '{', '[':
		array := b[i] == '['
		depth, commas, empty := 0, 0, true
		for ; i < len(b); i++ {
			c := b[i]
			if depth == 1 && empty && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ']' && c != '}' {
				empty = false
			}
			switch c {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case ',':
				if depth == 1 {
					commas++
				}
			case '}', ']':
				if depth--; depth == 0 {
					if array && !empty {
						elements = commas + 1
					}
					return i + 1, elements
				}
			}
		}
		return len(b), 0
	default: // a number, true, false or null
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i, 0
			}
		}
		return i, 0
	}
}

// skipString returns the index just past the JSON string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}
