package invoicing

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Response describes how a call went: pass WithResponseInto to a call to
// get it, and find it in every *Error.
type Response struct {
	// StatusCode is the HTTP status of the final response, or 0 when no
	// response was received (a network error, a timeout, a cancelled
	// context).
	StatusCode int
	// Header is the final response's header; nil when there was none.
	Header http.Header
	// RequestID is the id the service gave the final response in its
	// X-Request-Id header, for support requests and log correlation; "" when
	// the response had none.
	RequestID string
	// Attempts is how many times the request was sent: 1 plus the retries.
	// It is 0 when the call failed before sending anything.
	Attempts int
	// Duration is the time the call took, waits between attempts included.
	Duration time.Duration
}

// requestIDHeader is the header the service's request id is read from. The
// API documentation names none; X-Request-Id is the common convention.
const requestIDHeader = "X-Request-Id"

// wantJSON returns nil when b, the body of a 2xx response, holds a JSON
// value of kind want ('{' for an object, '[' for an array) or starts like
// one (the decoder then checks the rest), and otherwise an error that says
// what came back: null, another kind of value, an empty body or something
// that is not JSON, with the beginning of it. A gateway that answers a list
// with null would otherwise make it look empty.
func wantJSON(b []byte, want jsontext.Kind) error {
	v := bytes.Trim(b, " \t\r\n")
	if len(v) > 0 && jsontext.Kind(v[0]) == want {
		return nil
	}
	name := "a JSON object"
	if want == '[' {
		name = "a JSON array"
	}
	return fmt.Errorf("want %s, got %s", name, describeJSON(v))
}

// describeJSON names the kind of the JSON text v and quotes its beginning:
// "null", "an array: [1,2]", `a string: "paid"`, "an empty body",
// "invalid JSON: <html>...".
func describeJSON(v []byte) string {
	switch {
	case len(v) == 0:
		return "an empty body"
	case string(v) == "null":
		return "null"
	}
	what := "invalid JSON"
	if val := jsontext.Value(bytes.Clone(v)); val.IsValid() && val.Compact() == nil {
		what, v = codec.KindName(val.Kind()), val
	}
	return what + ": " + excerpt(v, 64)
}

// excerpt returns up to max bytes of b (cut between characters, "..."
// marking the cut), as they are when they are printable text, else quoted
// as a Go string, so that a body cannot forge log lines.
func excerpt(b []byte, max int) string {
	more := ""
	if len(b) > max {
		for max > 0 && !utf8.RuneStart(b[max]) {
			max--
		}
		b, more = b[:max], "..."
	}
	s := string(b)
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		s = strconv.Quote(s)
	}
	return s + more
}
