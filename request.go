package invoicing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
)

// ErrResponseTooLarge is returned (wrapped) when a JSON response is larger
// than the client's WithMaxResponseBytes limit.
var ErrResponseTooLarge = errors.New("invoicing: response body too large")

var (
	hdrJSON = []string{"application/json"}
	hdrPDF  = []string{"application/pdf"}
)

// request is one API call: everything the pipeline needs to send it.
type request struct {
	method string
	path   string     // relative to the base URL, already escaped: "/invoices/<uuid>"
	query  url.Values // may be nil
	body   any        // JSON-encoded when non-nil
	accept []string   // Accept header; JSON when nil
	// repeatable marks a non-GET request as safe to send again after a 5xx
	// or a network error (an invoice create carrying its reference).
	repeatable bool
}

// noRepeatKey marks, in a request's context, a request that must not be
// sent again after a 5xx or a network error.
type noRepeatKey struct{}

// send runs the pipeline up to the response: encoding, auth, retries. A 2xx
// response is returned with its body open; any other status becomes an
// *Error (body read, capped, and closed).
func (c *Client) send(ctx context.Context, r *request) (*http.Response, error) {
	if ctx == nil {
		return nil, errors.New("invoicing: nil context")
	}
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body any
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("invoicing: encoding %s %s request: %w", r.method, r.path, err)
		}
		body = b
	}
	if r.method != http.MethodGet && !r.repeatable {
		ctx = context.WithValue(ctx, noRepeatKey{}, true)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("invoicing: building %s %s request: %w", r.method, r.path, err)
	}
	h := req.Header
	h["Authorization"] = c.auth
	h["User-Agent"] = c.ua
	h["Accept"] = hdrJSON
	if r.accept != nil {
		h["Accept"] = r.accept
	}
	if body != nil {
		h["Content-Type"] = hdrJSON
	}
	var start time.Time
	if c.log != nil {
		start = time.Now()
	}
	resp, err := c.rc.Do(req)
	if c.log != nil {
		c.logResult(ctx, r, resp, err, time.Since(start))
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, fmt.Errorf("invoicing: %s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, newError(r.method, r.path, resp, b, c.now())
	}
	return resp, nil
}

// do sends r and decodes a 2xx JSON response into out (unless out is nil).
// It returns the response's status code.
func (c *Client) do(ctx context.Context, r *request, out any) (int, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	bp := c.getBuf()
	defer c.putBuf(bp)
	*bp, err = readCapped(resp.Body, *bp, resp.ContentLength, c.maxBody)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("invoicing: reading %s %s response: %w", r.method, r.path, err)
	}
	if out != nil {
		if err := json.Unmarshal(*bp, out); err != nil {
			return resp.StatusCode, fmt.Errorf("invoicing: decoding %s %s response: %w", r.method, r.path, err)
		}
	}
	return resp.StatusCode, nil
}

// maxPooledBuf is the largest response buffer kept for reuse.
const maxPooledBuf = 1 << 20

func (c *Client) getBuf() *[]byte {
	if bp, ok := c.bufs.Get().(*[]byte); ok {
		return bp
	}
	return new([]byte)
}

// putBuf returns a buffer for reuse unless it grew past maxPooledBuf.
func (c *Client) putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBuf {
		c.bufs.Put(bp)
	}
}

// readCapped reads all of r into buf[:0], failing with ErrResponseTooLarge
// beyond max bytes. size is the Content-Length (or -1) used as a hint.
func readCapped(r io.Reader, buf []byte, size int64, max int) ([]byte, error) {
	b := buf[:0]
	if size > 0 && size <= int64(max) {
		b = slices.Grow(b, int(size)+1) // +1: room to see EOF without growing
	} else if cap(b) < 512 {
		b = slices.Grow(b, 512)
	}
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > max {
			return b[:0], fmt.Errorf("%w (over %d bytes)", ErrResponseTooLarge, max)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b[:0], err
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b)) // double
		}
	}
}

func (c *Client) logResult(ctx context.Context, r *request, resp *http.Response, err error, took time.Duration) {
	attrs := []slog.Attr{slog.String("method", r.method), slog.String("path", r.path), slog.Duration("took", took)}
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
func getOne[T any](ctx context.Context, c *Client, collection, id string) (*T, error) {
	path, err := resourcePath(collection, id, "")
	if err != nil {
		return nil, err
	}
	return getQuery[T](ctx, c, path, nil)
}

// getQuery fetches path with the query q into a new T.
func getQuery[T any](ctx context.Context, c *Client, path string, q url.Values) (*T, error) {
	v := new(T)
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: path, query: q}, v); err != nil {
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
