package invoicing

import (
	"encoding/json"
	"errors"
)

// This file splits a JSON object into its members, and counts an array's
// elements, without decoding them: a list response is refused for holding
// too many records before any record is decoded.
//
// eachMember checks the object's own structure (braces, keys, colons,
// commas) and finds where each value ends; it does not check what is inside
// a value. Its callers hand every value to encoding/json, which does, so
// that together they accept exactly the valid JSON objects.

var (
	errNotObject = errors.New("not a JSON object")
	errSyntax    = errors.New("malformed JSON")
)

// eachMember calls fn with the key and the raw value of each member of the
// JSON object b, in order. It fails when b is not an object; fn must check
// the value it is given (see above).
func eachMember(b []byte, fn func(key string, value []byte) error) error {
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
		end = skipValue(b, start)
		if end == start {
			return errSyntax // no value
		}
		if err := fn(key, b[start:end]); err != nil {
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

// countElements returns the number of elements of the JSON array b (of
// its elements up to the first syntax error, when b is not valid JSON).
func countElements(b []byte) int {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return 0
	}
	i = skipSpace(b, i+1)
	n := 0
	for i < len(b) && b[i] != ']' {
		end := skipValue(b, i)
		if end == i {
			break // not JSON: encoding/json will say so
		}
		n++
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // a number, true, false or null
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
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
