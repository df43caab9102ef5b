package invoicing

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Sentinel errors for the statuses of the API's error table. Every non-2xx
// response is returned as an *Error, which matches the sentinel for its status
// with errors.Is:
//
//	if errors.Is(err, invoicing.ErrNotFound) { ... }
var (
	ErrBadRequest   = errors.New("invoicing: invalid parameters (400)")
	ErrUnauthorized = errors.New("invoicing: invalid or missing API key (401)")
	ErrForbidden    = errors.New("invoicing: API key lacks the required scope (403)")
	ErrNotFound     = errors.New("invoicing: resource does not exist (404)")
	ErrConflict     = errors.New("invoicing: duplicate resource (409)")
	ErrValidation   = errors.New("invoicing: validation failed (422)")
	ErrRateLimited  = errors.New("invoicing: rate limit exceeded (429)")
	// ErrServer matches every 5xx response.
	ErrServer = errors.New("invoicing: server error (5xx)")
)

// Sentinels for the item errors whose detail texts the API documentation
// gives. An *Error matches one when both its status and its detail are the
// documented ones; it still matches ErrConflict or ErrValidation too.
var (
	// ErrItemCodeExists: POST /items with an item_code already in use (409).
	ErrItemCodeExists = errors.New("invoicing: " + detailItemCodeExists)
	// ErrUnitPriceRequired: POST /items of type SALES or PURCHASE without unit_price (422).
	ErrUnitPriceRequired = errors.New("invoicing: " + detailUnitPriceRequired)
	// ErrInvalidItemType: POST /items with an item_type other than SALES, PURCHASE or TEXT (422).
	ErrInvalidItemType = errors.New("invoicing: " + detailInvalidItemType)
)

const (
	detailItemCodeExists    = "Item code already exists"
	detailUnitPriceRequired = "unit_price is required for SALES and PURCHASE items"
	detailInvalidItemType   = "item_type must be one of: SALES, PURCHASE, TEXT"
)

// Error is a non-2xx response from the service. Use errors.As to read it and
// errors.Is to compare it with the sentinels (ErrNotFound, ...).
type Error struct {
	// Response is the final response: StatusCode, Header, RequestID, and
	// how many Attempts the call made in how long (Duration).
	Response
	// Method and Path identify the request (Path excludes the base URL and query).
	Method, Path string
	// Detail is the service's `detail` message. When the service sent a list
	// of validation problems it is their messages joined with "; "; when the
	// body was not the documented JSON (an HTML page from a proxy, say) it is
	// the HTTP status text ("HTTP 520" for a status net/http has none for).
	Detail string
	// Problems holds the validation problems when `detail` was an array of
	// {loc, msg, type} objects; nil otherwise.
	Problems []Problem
	// RetryAfter is the wait the response asked for in its Retry-After
	// header (seconds or an HTTP date), or 0 when it had none. A call that
	// starts while its API key is paused after a 429, when the pause ends
	// after the call's deadline, sends nothing: it gets that 429's Error at
	// once, with what is left of the pause here and Attempts 0.
	RetryAfter time.Duration
	// Body is the raw response body, truncated to 64 KiB.
	Body []byte

	// hint is advice for the first mistakes, shown by Error.
	hint string
}

// apiPrefix is the path prefix every base URL of the API ends in.
const apiPrefix = "/api/v1/external"

// Problem is one entry of a validation error list.
type Problem struct {
	// Loc is the path to the offending value, e.g. ["body", "line_items", "0", "unit_price"];
	// numeric indexes are given as decimal strings.
	Loc []string `json:"loc"`
	// Msg is the human-readable message.
	Msg string `json:"msg"`
	// Type is the machine-readable kind of the problem.
	Type string `json:"type"`
}

// Field returns Loc joined with dots, without a leading "body" or "query".
func (p Problem) Field() string {
	loc := p.Loc
	if len(loc) > 1 && (loc[0] == "body" || loc[0] == "query" || loc[0] == "path") {
		loc = loc[1:]
	}
	return strings.Join(loc, ".")
}

// Error returns `invoicing: METHOD PATH: STATUS: "detail"`, then the
// Retry-After, how many attempts were made when there were several, and
// advice for a likely mistake (a 404 "Not Found" from a base URL without
// /api/v1/external). The service's detail is quoted (control characters
// escaped) so that it cannot forge log lines; the Detail field keeps it
// verbatim.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invoicing: ")
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteByte(' ')
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(strconv.Itoa(e.StatusCode))
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	if e.Detail != "" && e.Detail != statusText(e.StatusCode) {
		b.WriteString(": ")
		b.WriteString(strconv.Quote(e.Detail))
	}
	var notes []string
	if e.RetryAfter > 0 {
		notes = append(notes, "retry after "+e.RetryAfter.String())
	}
	if e.Attempts > 1 {
		notes = append(notes, "after "+strconv.Itoa(e.Attempts)+" attempts")
	}
	if e.hint != "" {
		notes = append(notes, e.hint)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's status code, or the
// documented item error matching e's status and detail.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrItemCodeExists:
		return e.StatusCode == http.StatusConflict && e.Detail == detailItemCodeExists
	case ErrUnitPriceRequired:
		return e.StatusCode == http.StatusUnprocessableEntity && e.Detail == detailUnitPriceRequired
	case ErrInvalidItemType:
		return e.StatusCode == http.StatusUnprocessableEntity && e.Detail == detailInvalidItemType
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	}
	return target != nil && target == statusSentinel(e.StatusCode)
}

func statusSentinel(code int) error {
	switch code {
	case http.StatusBadRequest:
		return ErrBadRequest
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusForbidden:
		return ErrForbidden
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusUnprocessableEntity:
		return ErrValidation
	case http.StatusTooManyRequests:
		return ErrRateLimited
	}
	return nil
}

// newError builds the *Error for a non-2xx response from its (capped)
// body, which becomes the Error's own.
func newError(method, path string, resp *http.Response, body []byte, info Response) *Error {
	e := &Error{Response: info, Method: method, Path: path, Body: body, RetryAfter: retryAfter(resp.Header, time.Now())}
	e.Response.StatusCode, e.Response.Header = resp.StatusCode, resp.Header
	e.RequestID = resp.Header.Get(requestIDHeader)
	e.Detail, e.Problems = parseDetail(body)
	if e.Detail == "" {
		e.Detail = statusText(resp.StatusCode)
	}
	return e
}

// statusText is http.StatusText(code), or "HTTP 520" for a status it has
// no text for (a proxy's 499, 520 to 527), so that Detail always says
// something.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "HTTP " + strconv.Itoa(code)
}

// parseDetail extracts the `detail` of an error body: a string, or an array
// of {loc, msg, type} problems. Anything else yields "".
func parseDetail(body []byte) (string, []Problem) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return "", nil
	}
	var env struct {
		Detail jsontext.Value `json:"detail"`
	}
	if json.Unmarshal(body, &env, codec.User) != nil || len(env.Detail) == 0 {
		return "", nil
	}
	switch env.Detail.Kind() {
	case '"':
		var s string
		if json.Unmarshal(env.Detail, &s, codec.User) == nil {
			return s, nil
		}
	case '[':
		var raw []struct {
			Loc  []jsontext.Value `json:"loc"`
			Msg  string           `json:"msg"`
			Type string           `json:"type"`
		}
		if json.Unmarshal(env.Detail, &raw, codec.User) != nil {
			return "", nil
		}
		problems := make([]Problem, len(raw))
		msgs := make([]string, len(raw))
		for i, r := range raw {
			p := Problem{Msg: r.Msg, Type: r.Type, Loc: make([]string, 0, len(r.Loc))}
			for _, l := range r.Loc {
				var s string
				if json.Unmarshal(l, &s, codec.User) != nil {
					s = string(l) // a number (array index): keep its text
				}
				p.Loc = append(p.Loc, s)
			}
			problems[i] = p
			msgs[i] = p.Msg
			if f := p.Field(); f != "" {
				msgs[i] = f + ": " + p.Msg
			}
		}
		return strings.Join(msgs, "; "), problems
	case 'n':
		return "", nil
	default:
		// A number, object or bool: keep its JSON text rather than lose it.
		return string(env.Detail), nil
	}
	return "", nil
}

// maxRetryAfter caps what a Retry-After header can ask for.
const maxRetryAfter = 365 * 24 * time.Hour

// retryAfter reads a Retry-After header given in seconds or as an HTTP date.
// It returns 0 when the header is absent, malformed or in the past, and at
// most maxRetryAfter (which a number of seconds too large to parse also
// gives: it asks for longer than any wait).
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(max(secs, 0), int64(maxRetryAfter/time.Second))) * time.Second
	} else if errors.Is(err, strconv.ErrRange) && v[0] != '-' {
		d = maxRetryAfter
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// ParamError reports a request the API document makes certainly invalid; it
// is returned before anything is sent.
type ParamError struct {
	// Field is the JSON name of the offending field or query parameter,
	// e.g. "line_items[0].unit_price" or "page_size".
	Field string
	// Reason says what is wrong with it.
	Reason string
	kind   error // a documented service error this check stands in for, if any
}

// Error returns "invoicing: invalid FIELD: REASON".
func (e *ParamError) Error() string {
	return "invoicing: invalid " + e.Field + ": " + e.Reason
}

// Is makes errors.Is(err, ErrInvalidParams) true for every *ParamError, and
// errors.Is(err, ErrUnitPriceRequired) (or ErrInvalidItemType) true when the
// check stands in for that documented service error.
func (e *ParamError) Is(target error) bool {
	return target == ErrInvalidParams || (e.kind != nil && target == e.kind)
}

// ErrInvalidParams matches every *ParamError: a request rejected by the SDK
// before it was sent.
var ErrInvalidParams = errors.New("invoicing: invalid request parameters")

func paramErr(field, reason string) error { return &ParamError{Field: field, Reason: reason} }
