package invoicing

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Do calls an endpoint the SDK has no method for (or one you want to reach
// with your own types), through the same pipeline as every method: the API
// key, retries and their rules, the per-attempt deadline, the response size
// cap, *Error for a non-2xx status, and opts.
//
// path is relative to the base URL ("/invoices", or "/invoices?status=paid")
// and must not leave it: a scheme or host, "." or ".." segments, empty
// segments or a fragment are a *ParamError. body, when not nil, is sent as
// JSON with encoding/json (a decimal.Decimal encodes as a string that way;
// give a json.RawMessage to send exact numbers). out, when not nil, receives
// the 2xx response decoded with encoding/json, or its raw bytes when it is a
// *json.RawMessage or *[]byte.
//
// GET and HEAD are retried after a 5xx or a network error; other methods
// only with WithIdempotentRetry. A 429 is retried whatever the method.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, opts ...RequestOption) error {
	if !validHeaderName(method) {
		return paramErr("method", fmt.Sprintf("%q is not an HTTP method", method))
	}
	p, q, err := relativePath(path)
	if err != nil {
		return err
	}
	r := &request{method: method, path: p, query: q, body: body, opts: opts, repeatable: method == http.MethodHead}
	_, err = c.do(ctx, r, out)
	return err
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
