package pgmirror

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errNotObject is the error of a raw JSON value that is not an object.
var errNotObject = errors.New("not a JSON object")

// eachMember calls fn with each member of the JSON object b (its key,
// decoded and as written, and its value's bytes), in order, without
// decoding the values: a scan of the bytes for where each value ends. It
// fails for b that is not an object, or not valid JSON where it scans; it
// does not validate what it skips (the mirror's raw JSON is the SDK's
// encoding, valid by construction).
func eachMember(b []byte, fn func(key string, rawKey, value []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errNotObject
		}
		end, err := stringEnd(b, i)
		if err != nil {
			return err
		}
		i0, key := i, string(b[i+1:end-1])
		if bytes.IndexByte(b[i:end], '\\') >= 0 {
			if err := json.Unmarshal(b[i:end], &key); err != nil {
				return err
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errNotObject
		}
		start := skipSpace(b, i+1)
		stop, err := valueEnd(b, start)
		if err != nil {
			return err
		}
		fn(key, b[i0:end], b[start:stop])
		i = skipSpace(b, stop)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return nil
		default:
			return errNotObject
		}
	}
}

// eachElement calls fn with each element of the JSON array b, as
// eachMember does with an object's members.
func eachElement(b []byte, fn func(value []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		stop, err := valueEnd(b, i)
		if err != nil {
			return err
		}
		fn(b[i:stop])
		i = skipSpace(b, stop)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return nil
		default:
			return errors.New("not a JSON array")
		}
	}
}

// valueEnd returns where the JSON value starting at b[i] ends.
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := stringEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
		j++
	}
	if j == i {
		return 0, errNotObject
	}
	return j, nil
}

// stringEnd returns where the JSON string starting at b[i] ends (after its
// closing quote).
func stringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("an unterminated JSON string")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
