package invoicing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// ErrResponseTooLarge is returned (wrapped) when a JSON response is larger
// than the client's WithMaxResponseBytes limit. It is never retried.
var ErrResponseTooLarge = errors.New("invoicing: response body too large")

// request is one API call.
type request struct {
	method, path string     // path relative to the base URL, escaped: "/invoices/<uuid>"
	query        url.Values // the params' query; may be nil
	paged        bool       // page and page_size belong to the list, not to WithQuery
	body         []byte     // JSON; nil for none
	pdf          bool       // a 2xx body streams to the caller instead of being read
	repeatable   bool       // a non-GET safe to repeat after a 5xx or a network error
}

// url returns the request's URL: base, path, the query of its params and
// the WithQuery extras (a clash between the two is a *ParamError).
func (c *Client) url(r *request, extra url.Values) (string, error) {
	u, q := c.base+r.path, r.query
	if len(extra) > 0 {
		q = url.Values{}
		maps.Copy(q, r.query)
		var reserved []string
		if r.paged {
			reserved = []string{"page", "page_size"}
		}
		if err := mergeQuery(q, extra, reserved...); err != nil {
			return "", err
		}
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u, nil
}

// setHeaders sets a request's headers: the call's own, the key, the SDK's.
func (c *Client) setHeaders(h http.Header, r *request, cfg *callConfig) {
	for k, vs := range cfg.header {
		h[k] = vs
	}
	h["Authorization"] = c.auth()
	if cfg.auth != nil {
		h["Authorization"] = cfg.auth()
	}
	if h["User-Agent"] == nil {
		h["User-Agent"] = c.ua
	}
	if h["Accept"] == nil {
		h["Accept"] = hdrJSON
		if r.pdf {
			h["Accept"] = hdrPDF // and the JSON {detail} of an error
		}
	}
	if r.body != nil {
		h["Content-Type"] = hdrJSON
	}
}

var (
	hdrJSON = []string{"application/json"}
	hdrPDF  = []string{"application/pdf, application/json"}
)

// httpClient returns the http.Client the SDK sends through and the
// transport under it: a copy of hc (hc itself is not modified), or a new
// client over a clone of http.DefaultTransport that keeps up to MaxPrefetch
// idle connections to the service (instead of 2), so that a prefetching
// List reuses its connections from one round of pages to the next. Its
// redirect policy refuses plain http on a non-loopback host unless insecure
// (net/http drops the Authorization header on a redirect to another host,
// but keeps it from https to http on the same one), then applies hc's own,
// or net/http's limit of 10 redirects.
func httpClient(hc *http.Client, insecure bool) (*http.Client, http.RoundTripper) {
	var cp http.Client
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxPrefetch
	var next http.RoundTripper = t
	if hc != nil {
		cp, next = *hc, hc.Transport
		if next == nil {
			next = http.DefaultTransport // what hc would use
		}
	}
	then := cp.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		switch {
		case req.URL.Scheme != "https" && !insecure && !isLoopback(req.URL.Hostname()):
			return errInsecureRedirect
		case then != nil:
			err := then(req, via)
			if err != nil && err != http.ErrUseLastResponse { // which net/http compares with ==
				err = &refusedRedirect{err}
			}
			return err
		case len(via) >= 10:
			return errTooManyRedirects
		}
		return nil
	}
	return &cp, next
}

// errInsecureRedirect stops a redirect that would downgrade to plain http.
// It and errTooManyRedirects come wrapped in "invoicing: METHOD PATH: ".
var errInsecureRedirect = errors.New("refusing to follow a redirect to plain http (the API key would travel in clear text)")

// errTooManyRedirects stops the 10th redirect, as net/http does.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// refusedRedirect is the error of the caller's CheckRedirect: like the
// SDK's own refusals, a second try would meet it again.
type refusedRedirect struct{ err error }

func (e *refusedRedirect) Error() string { return e.err.Error() }

func (e *refusedRedirect) Unwrap() error { return e.err }

// body is a response body read within its attempt's deadline; an idle one
// (a PDF's, which streams) gives each Read the whole deadline instead.
// Closing it ends the attempt.
type body struct {
	rc          io.ReadCloser
	timer       *time.Timer
	d           time.Duration
	idle        bool
	ctx, parent context.Context
	cancel      context.CancelCauseFunc
}

func (b *body) Read(p []byte) (int, error) {
	if b.idle {
		b.timer.Reset(b.d)
	}
	n, err := b.rc.Read(p)
	if b.idle {
		b.timer.Stop()
	}
	if err != nil && err != io.EOF {
		if te := timeoutCause(b.ctx, b.parent, err); te != err {
			te.(*attemptTimeout).stalled = b.idle
			err = te
		}
	}
	return n, err
}

func (b *body) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// attemptTimeout is the error of an attempt that exceeded its deadline
// (WithTimeout). It matches context.DeadlineExceeded and is a net.Error
// whose Timeout is true.
type attemptTimeout struct {
	d       time.Duration
	stalled bool // the body stopped coming, after the headers
}

func (e *attemptTimeout) Error() string {
	if e.stalled {
		return fmt.Sprintf("the response body stalled for %v (per-attempt timeout)", e.d)
	}
	return fmt.Sprintf("no complete response within %v (per-attempt timeout)", e.d)
}

func (e *attemptTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

func (e *attemptTimeout) Timeout() bool { return true }

func (e *attemptTimeout) Temporary() bool { return true }

// timeoutCause returns the attempt's timeout in place of err when the
// attempt context ctx ended because of it (and not because parent ended).
func timeoutCause(ctx, parent context.Context, err error) error {
	var te *attemptTimeout
	if parent.Err() == nil && errors.As(context.Cause(ctx), &te) {
		return te
	}
	return err
}

// maxErrorBody caps how much of an error response is read and kept.
const maxErrorBody = 64 << 10

// readCapped reads all of r into buf[:0], failing with ErrResponseTooLarge
// beyond limit bytes (with the first limit bytes, which an error response
// keeps as its Body). size is the Content-Length (or -1), a hint for the
// first allocation, never trusted beyond 256 KiB.
func readCapped(r io.Reader, buf []byte, size int64, limit int) ([]byte, error) {
	b := buf[:0]
	if want := int(min(size, int64(limit), 256<<10)) + 1; size > 0 && cap(b) < want {
		b = slices.Grow(b, want) // +1: room to see EOF without growing
	}
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, max(512, cap(b)))
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case len(b) > limit:
			return b[:limit], fmt.Errorf("%w (over %d bytes)", ErrResponseTooLarge, limit)
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		}
	}
}

// getBuf returns a response buffer from the pool; do puts it back, after
// decoding, unless it grew past 1 MiB.
func (c *Client) getBuf() *[]byte {
	if b, ok := c.bufs.Get().(*[]byte); ok && cap(*b) <= 1<<20 {
		return b
	}
	return new([]byte)
}

func isSuccess(code int) bool { return code >= 200 && code <= 299 }

func status(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// logf logs one line with the route and args (name, value pairs; a zero
// int or nil error is left out). Callers check c.log first, so that a
// Client without a logger boxes nothing.
func (c *Client) logf(ctx context.Context, level slog.Level, msg, route string, args ...any) {
	attrs := []slog.Attr{slog.String("route", route)}
	for i := 0; i+1 < len(args); i += 2 {
		switch v := args[i+1].(type) {
		case error:
			if v != nil {
				attrs = append(attrs, slog.String(args[i].(string), v.Error()))
			}
		case int:
			if v != 0 {
				attrs = append(attrs, slog.Int(args[i].(string), v))
			}
		default:
			attrs = append(attrs, slog.Any(args[i].(string), v))
		}
	}
	c.log.LogAttrs(ctx, level, msg, attrs...)
}
