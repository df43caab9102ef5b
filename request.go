package invoicing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// ErrResponseTooLarge is returned (wrapped) when a JSON response is larger
// than the client's WithMaxResponseBytes limit. It is never retried.
var ErrResponseTooLarge = errors.New("invoicing: response body too large")

var (
	hdrJSON = []string{"application/json"}
	// hdrPDF asks for the PDF, and for the JSON {detail} body of an error.
	hdrPDF = []string{"application/pdf, application/json"}
)

// request is one API call: everything the pipeline needs to send it.
type request struct {
	method string
	path   string     // relative to the base URL, already escaped: "/invoices/<uuid>"
	query  url.Values // may be nil
	body   any        // JSON-encoded when non-nil
	// pdf marks a PDF download: a 2xx body is streamed to the caller rather
	// than read by the pipeline.
	pdf bool
	// object marks a response whose 2xx body must be a JSON object (every
	// SDK record and list); Client.Do accepts any JSON.
	object bool
	// paged marks a list request: page and page_size belong to ListParams,
	// not to WithQuery.
	paged bool
	// repeatable marks a non-GET request as safe to send again after a 5xx
	// or a network error (an invoice create carrying its reference).
	repeatable bool
	opts       []RequestOption
	// cfg, when set, is the call's settings already resolved from opts (List
	// resolves them once for all its pages).
	cfg *callConfig
}

// call is the state of one call while it runs, shared by the pipeline's
// stages through the request's context: its settings, how many attempts it
// made, and the wait before its next one.
type call struct {
	method, path string
	cfg          callConfig
	pdf          bool
	repeatable   bool
	attempts     int
	wait         time.Duration // before the next attempt; set by checkRetry
	buf          *[]byte       // pooled buffer holding the latest JSON response body
	// resp and body are the latest attempt's response and the bytes
	// exchange read of it (see remember); nil when a middleware replaced
	// the body, or for a streamed PDF.
	resp *http.Response
	body []byte
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	cl, _ := ctx.Value(callKey{}).(*call)
	return cl
}

// route is the call's route template, e.g. "GET /invoices/{id}".
func (cl *call) route() string { return cl.method + " " + routeTemplate(cl.path) }

// Route returns the route template of a request the SDK is sending, such as
// "GET /invoices/{id}": the method, then the path relative to the base URL
// with every UUID segment replaced by {id}. Middleware (see WithMiddleware)
// use it to name spans and metrics without raw ids. It returns "" for a
// request the SDK did not make.
func Route(req *http.Request) string {
	if cl := callFrom(req.Context()); cl != nil {
		return cl.route()
	}
	return ""
}

// Attempt returns which attempt of its call a request the SDK is sending
// is: 1 for the first try, 2 for the first retry, and so on (a redirect
// followed within an attempt keeps its number). Middleware use it to tell
// retries apart. It returns 0 for a request the SDK did not make.
func Attempt(req *http.Request) int {
	if cl := callFrom(req.Context()); cl != nil {
		return cl.attempts
	}
	return 0
}

// routeTemplate replaces each UUID segment of path with {id}.
func routeTemplate(path string) string {
	if !strings.Contains(path, "-") {
		return path
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if len(s) == 36 && uuid.Validate(s) == nil {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// send runs the pipeline up to the response: options, encoding, auth,
// retries. A 2xx response is returned with its body in memory (or, for a
// PDF, open); the caller must pass the call to release when done with it.
// Any other status becomes an *Error. The call's Response is filled for
// WithResponseInto either way.
func (c *Client) send(ctx context.Context, r *request) (*http.Response, *call, error) {
	if ctx == nil {
		return nil, nil, errors.New("invoicing: nil context")
	}
	cl := &call{method: r.method, path: r.path, pdf: r.pdf}
	if r.cfg != nil {
		cl.cfg = *r.cfg
	} else {
		var err error
		if cl.cfg, err = c.config(r.opts, false); err != nil {
			return nil, nil, err
		}
	}
	cl.repeatable = r.method == http.MethodGet || r.repeatable || cl.cfg.repeatable
	u, err := c.url(r, cl.cfg.query)
	if err != nil {
		return nil, nil, err
	}
	var body any
	if r.body != nil {
		b, err := encodeParams(r.body)
		if err != nil {
			if _, ok := err.(*ParamError); ok {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("invoicing: encoding %s %s request: %w", r.method, r.path, err)
		}
		body = b
	}
	ctx = context.WithValue(ctx, callKey{}, cl)
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, nil, fmt.Errorf("invoicing: building %s %s request: %w", r.method, r.path, err)
	}
	h := req.Header
	for k, vs := range cl.cfg.header {
		h[k] = vs
	}
	if cl.cfg.auth != nil {
		h["Authorization"] = cl.cfg.auth()
	} else {
		h["Authorization"] = c.authorization()
	}
	if h["User-Agent"] == nil {
		h["User-Agent"] = c.ua
	}
	if h["Accept"] == nil {
		h["Accept"] = hdrJSON
		if r.pdf {
			h["Accept"] = hdrPDF
		}
	}
	if body != nil {
		h["Content-Type"] = hdrJSON
	}
	start := c.clk.Now()
	resp, err := c.rc.Do(req)
	if err != nil && resp != nil {
		resp.Body.Close() // the context ended after a response came
		resp = nil
	}
	took := c.clk.Now().Sub(start)
	if into := cl.cfg.into; into != nil {
		into.fill(resp, cl.attempts, took)
	}
	if c.log != nil {
		c.logResult(ctx, cl, resp, err, took)
	}
	if err != nil {
		c.release(cl)
		if e := rateLimited(err, r.method, r.path, took); e != nil {
			if into := cl.cfg.into; into != nil {
				*into = e.Response
			}
			return nil, nil, e
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the request's, said below
		}
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		if cl.attempts > 1 {
			return nil, nil, fmt.Errorf("invoicing: %s %s: %w (after %d attempts)", r.method, r.path, err, cl.attempts)
		}
		return nil, nil, fmt.Errorf("invoicing: %s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := newError(r.method, r.path, resp, errorBody(resp, cl), c.clk.Now())
		e.Response.fill(resp, cl.attempts, took)
		e.hint = basePathHint(e, c.base)
		resp.Body.Close()
		c.release(cl)
		return nil, nil, e
	}
	return resp, cl, nil
}

// url returns the request's URL: base, path, the query the SDK sets and
// the WithQuery extras (a clash between the two is a *ParamError).
func (c *Client) url(r *request, extra url.Values) (string, error) {
	u, q := c.base+r.path, r.query
	if len(extra) > 0 {
		merged := url.Values{}
		for k, vs := range q {
			merged[k] = vs
		}
		var reserved []string
		if r.paged {
			reserved = []string{"page", "page_size"}
		}
		if err := mergeQuery(merged, extra, reserved...); err != nil {
			return "", err
		}
		q = merged
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u, nil
}

// do sends r and decodes a 2xx JSON response into out (unless out is nil).
// It returns the response's status code.
func (c *Client) do(ctx context.Context, r *request, out any) (int, error) {
	resp, cl, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer c.release(cl)
	defer resp.Body.Close()
	b, err := c.readBody(resp, cl)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("invoicing: reading %s %s response: %w", r.method, r.path, err)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if r.object && !opensObject(b) {
		return resp.StatusCode, fmt.Errorf("invoicing: decoding %s %s response: want a JSON object, got %s", r.method, r.path, describeJSON(b))
	}
	if err := decodeJSON(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("invoicing: decoding %s %s response: %w", r.method, r.path, err)
	}
	return resp.StatusCode, nil
}

// decodeJSON decodes b into out; a *[]byte gets a copy of b itself.
func decodeJSON(b []byte, out any) error {
	if o, ok := out.(*[]byte); ok {
		*o = bytes.Clone(b)
		return nil
	}
	return decodeBody(b, out)
}

// encodeParams encodes a request body with the SDK's rules (decimals as
// exact numbers, Extra members after the typed fields, in name order). An
// Extra member that a typed field also sends is a *ParamError.
func encodeParams(v any) ([]byte, error) {
	if hasEmptyExtraName(reflect.ValueOf(v)) {
		return nil, paramErr("Extra", "has a member with an empty name")
	}
	b, err := json.Marshal(v, jsonopt.EncodeParams)
	var xe *jsontext.SyntacticError
	var se *json.SemanticError
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &xe):
		return nil, paramErr(pointerPath(xe.JSONPointer), "is set both by a typed field and in Extra")
	case errors.As(err, &se) && se.JSONPointer != "":
		return nil, paramErr(pointerPath(se.JSONPointer), "cannot be encoded as JSON: "+cmpErr(se.Err, se).Error())
	}
	return nil, err
}

// hasEmptyExtraName reports whether the params v, or a params value in it,
// has an Extra member named "": valid JSON, but never a field of the API.
func hasEmptyExtraName(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && hasEmptyExtraName(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if hasEmptyExtraName(v.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case !f.IsExported():
			case f.Name == "Extra" && f.Type == reflect.TypeFor[map[string]any]():
				if _, ok := v.Field(i).Interface().(map[string]any)[""]; ok {
					return true
				}
			case hasEmptyExtraName(v.Field(i)):
				return true
			}
		}
	}
	return false
}

// opensObject reports whether the first byte of b after JSON white space
// is '{'.
func opensObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// describeJSON names the kind of JSON value b holds, for error messages.
func describeJSON(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(b) == 0:
		return "an empty body"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case b[0] == 'n':
		return "null"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	default:
		return "a number or something that is not JSON"
	}
}

func (c *Client) logResult(ctx context.Context, cl *call, resp *http.Response, err error, took time.Duration) {
	attrs := []slog.Attr{slog.String("route", cl.route()), slog.Int("attempts", cl.attempts), slog.Duration("took", took)}
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelDebug, "invoicing: request failed", append(attrs, slog.String("error", err.Error()))...)
		return
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "invoicing: response", append(attrs, slog.Int("status", resp.StatusCode))...)
}

// orNew returns p, or a new zero value when p is nil (nil params mean "none").
func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// getOne fetches collection/id into a new T.
func getOne[T any](ctx context.Context, c *Client, collection, id string, opts []RequestOption) (*T, error) {
	path, err := resourcePath(collection, id, "")
	if err != nil {
		return nil, err
	}
	return getQuery[T](ctx, c, path, nil, opts)
}

// getQuery fetches path with the query q into a new T.
func getQuery[T any](ctx context.Context, c *Client, path string, q url.Values, opts []RequestOption) (*T, error) {
	v := new(T)
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: path, query: q, object: true, opts: opts}, v); err != nil {
		return nil, err
	}
	return v, nil
}

// resourcePath returns collection + "/" + id + suffix after checking that id
// is a UUID, so no id can change the path. Non-canonical UUID forms (braces,
// urn:uuid:, no hyphens) are sent in canonical form.
func resourcePath(collection, id, suffix string) (string, error) {
	if len(id) != 36 || uuid.Validate(id) != nil {
		u, err := uuid.Parse(id)
		if err != nil {
			return "", paramErr("id", fmt.Sprintf("%q is not a UUID", id))
		}
		id = u.String()
	}
	return collection + "/" + id + suffix, nil
}
