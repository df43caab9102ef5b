package invoicingtest

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// encodeOptions are the options of every JSON document the fake writes
// (responses, webhook payloads, saved states): jsonopt.Encode, plus the
// escaping of encoding/json (v1), so that the output stays what it was when
// the fake wrote it with v1 and bodies users compare byte for byte, and the
// signatures of webhook deliveries, do not change:
//   - <, > and & are escaped as \u003c, \u003e and \u0026;
//   - U+2028 and U+2029 are escaped as \u2028 and \u2029.
//
// Invalid UTF-8 in a string (a name given to AddClient, say) is written as
// U+FFFD, as jsonopt.Encode allows, rather than failing the response (v1
// wrote the escape \ufffd, this writes the character itself).
var encodeOptions = json.JoinOptions(
	jsonopt.Encode,
	jsontext.EscapeForHTML(true),
	jsontext.EscapeForJS(true),
)

// bodyBuffers are the buffers responses are encoded into, reused from one
// response to the next.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer kept for reuse; a larger one (a big
// report) is left to the garbage collector.
const maxPooledBody = 1 << 20

// writeJSON writes v as the JSON response body with the given status, or a
// 500 when v cannot be encoded.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	if err := json.MarshalWrite(buf, v, encodeOptions); err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, "encoding response: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorBody is the body of every error answer: {"detail": ...}.
type errorBody struct {
	Detail string `json:"detail"`
}

// errorJSON returns {"detail": detail}.
func errorJSON(detail string) []byte {
	// It cannot fail: a string always encodes under encodeOptions.
	b, _ := json.Marshal(errorBody{detail}, encodeOptions)
	return b
}

// writeError writes {"detail": ...} with the error's status.
func writeError(w http.ResponseWriter, err *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(err.status)
	_, _ = w.Write(errorJSON(err.detail))
}

// listPage is the body of every list endpoint: the page's records under
// the resource's key, plus total, page, page_size and has_more.
type listPage[V any] struct {
	key     string
	records []V
	total   int
	page    pageParams
	hasMore bool
}

// MarshalJSONTo writes the members sorted by name (has_more, invoices,
// page, page_size, total), the order encoding/json gave the map this body
// once was; the records are an array even when there are none.
func (p listPage[V]) MarshalJSONTo(enc *jsontext.Encoder) error {
	names := [...]string{p.key, "has_more", "page", "page_size", "total"}
	slices.Sort(names[:])
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, name := range names {
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return err
		}
		var err error
		switch name {
		case "has_more":
			err = enc.WriteToken(jsontext.Bool(p.hasMore))
		case "page":
			err = enc.WriteToken(jsontext.Int(int64(p.page.page)))
		case "page_size":
			err = enc.WriteToken(jsontext.Int(int64(p.page.size)))
		case "total":
			err = enc.WriteToken(jsontext.Int(int64(p.total)))
		default: // p.key
			records := p.records
			if records == nil {
				records = []V{}
			}
			err = json.MarshalEncode(enc, records)
		}
		if err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// date is a civil date, held as midnight UTC and written as "YYYY-MM-DD".
type date time.Time

// String returns the date as YYYY-MM-DD.
func (d date) String() string { return formatDate(time.Time(d)) }

// MarshalJSONTo writes the date as a JSON string.
func (d date) MarshalJSONTo(enc *jsontext.Encoder) error {
	b := time.Time(d).AppendFormat(append(enc.AvailableBuffer(), '"'), time.DateOnly)
	return enc.WriteValue(append(b, '"'))
}

// UnmarshalJSONFrom reads a "YYYY-MM-DD" string.
func (d *date) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '"' {
		return errors.New("a date must be a JSON string")
	}
	t, err := parseDate(tok.String())
	*d = date(t)
	return err
}

// datetime is a point in time, written as RFC 3339 in UTC with a trailing
// Z, to the second. A nil *datetime is written as null. A view's
// *datetime is the record's own *time.Time (updated_at): updates replace
// that pointer rather than change the time it points to, so the view may
// be encoded after s.mu is released.
type datetime time.Time

// MarshalJSONTo writes the datetime as a JSON string.
func (t datetime) MarshalJSONTo(enc *jsontext.Encoder) error {
	b := time.Time(t).UTC().AppendFormat(append(enc.AvailableBuffer(), '"'), time.RFC3339)
	return enc.WriteValue(append(b, '"'))
}

// nullString is a string written as JSON null when it is empty.
type nullString string

// MarshalJSONTo writes the string, or null.
func (s nullString) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s == "" {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.String(string(s)))
}
