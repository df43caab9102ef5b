package invoicing

import (
	"bytes"
	"context"
	"encoding"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Do calls an endpoint the SDK has no method for (or one you want to reach
// with your own types), through the same attempt loop as every method: the
// API key, retries and their rules, the per-attempt deadline, the response
// size cap, *Error for a non-2xx status, and opts.
//
// path is relative to the base URL ("/invoices", or "/invoices?status=paid")
// and must not leave it: a scheme or host, "." or ".." segments, empty
// segments or a fragment are a *ParamError.
//
// body, when not nil, is sent as JSON, and out, when not nil, receives the
// 2xx response, both as encoding/json (v1) would do it: your struct fields
// match members case-insensitively, untagged fields by their Go name. The
// one difference is money: a decimal.Decimal anywhere in body is sent as an
// exact JSON number, as every SDK method sends it (encoding/json would
// write decimal's string); into a decimal.Decimal, out decodes a number or
// a numeric string exactly. The SDK's own types (params, records) encode and
// decode as they always do. A *json.RawMessage or *[]byte out receives the
// raw bytes.
//
// Unlike encoding/json, a 2xx body that cannot be what out is for fails the
// call with an error saying what came back, rather than leaving out as it
// was: null, or any value but an object, when out points to a record of the
// SDK, a map or a struct (but one with a method decoding it, such as
// decimal.Decimal); null, or any value but an array, when out points to a
// slice (but []byte) or an array.
//
// GET and HEAD are retried after a 5xx or a network error; other methods
// only with WithIdempotentRetry. A 429 is retried whatever the method.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, opts ...RequestOption) error {
	if !validToken(method) {
		return paramErr("method", fmt.Sprintf("%q is not an HTTP method", method))
	}
	p, q, err := relativePath(path)
	if err != nil {
		return err
	}
	r := &request{method: method, path: p, query: q, repeatable: method == http.MethodHead}
	if body != nil {
		if r.body, err = json.Marshal(body, codec.User); err != nil {
			return fmt.Errorf("invoicing: encoding %s %s request: %w", method, p, err)
		}
	}
	cfg, err := config(opts)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, r, cfg, func(b []byte) error {
		switch o := out.(type) {
		case nil:
			return nil
		case *[]byte:
			*o = bytes.Clone(b)
			return nil
		}
		if want := wantKind(out); want != 0 {
			if err := wantJSON(b, want); err != nil {
				return err
			}
		}
		return json.Unmarshal(b, out, codec.User)
	})
	return err
}

// wantKind returns the kind of JSON value out, Do's result, can only be
// decoded from: '{' for a pointer to a record of the SDK, a map or any
// other struct without a method decoding it (UnmarshalJSON, ...); '[' for a
// pointer to a slice (but []byte) or an array; 0 for anything else.
func wantKind(out any) jsontext.Kind {
	t := reflect.TypeOf(out)
	if t.Kind() != reflect.Pointer {
		return 0 // json.Unmarshal says what is wrong
	}
	if _, ok := out.(interface{ decodeJSON(*codec.Decoder) error }); ok {
		return '{'
	}
	switch out.(type) {
	case json.Unmarshaler, json.UnmarshalerFrom, encoding.TextUnmarshaler:
		return 0 // it decodes itself, from whatever it accepts
	}
	switch e := t.Elem(); e.Kind() {
	case reflect.Struct, reflect.Map:
		return '{'
	case reflect.Slice:
		if e.Elem().Kind() == reflect.Uint8 {
			return 0 // base64, as encoding/json decodes a []byte
		}
		return '['
	case reflect.Array:
		return '['
	}
	return 0
}

// relativePath checks a path given to Do and returns it escaped, with its
// query.
func relativePath(raw string) (string, url.Values, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, paramErr("path", err.Error())
	}
	switch {
	case u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "":
		return "", nil, paramErr("path", fmt.Sprintf("%q is not a path relative to the base URL", raw))
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return "", nil, paramErr("path", fmt.Sprintf("%q has a fragment", raw))
	case !strings.HasPrefix(u.Path, "/"):
		return "", nil, paramErr("path", fmt.Sprintf("%q does not start with /", raw))
	}
	for _, seg := range strings.Split(u.Path[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", nil, paramErr("path", fmt.Sprintf("%q has an empty, . or .. segment", raw))
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", nil, paramErr("path", "query: "+err.Error())
	}
	return u.EscapedPath(), q, nil
}
