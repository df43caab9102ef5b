package invoicing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// A Middleware sees every attempt the Client makes (a retried call passes
// through it once per try): it may read or add headers, time the attempt,
// record a span or a metric, and must call next to send the request (or
// answer without sending). Route(req) names the request's route template,
// e.g. "GET /invoices/{id}", for span and metric names without raw ids.
//
// The request carries the API key in its Authorization header: never log
// it. The response next returns has its body already read into memory
// (except a PDF's, which streams), so the time next takes covers the whole
// JSON response; that body stays valid until next is called again.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// attemptTransport is the Transport of the http.Client through which
// go-retryablehttp sends each attempt of a call. Before an attempt it waits
// as the Client's rules say (the call's backoff, a Client-wide pause after
// a 429, the rate limit); it then gives the request its own deadline and
// sends it through the middleware to exchange. A redirect the http.Client
// follows comes through again as a request of the same attempt, with a
// deadline of its own.
type attemptTransport struct{ c *Client }

func (t attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	cl := callFrom(req.Context())
	if cl == nil { // not sent by send: nothing to apply
		return c.exchange(req)
	}
	if req.Response == nil { // a new attempt, not a redirect
		if err := c.gate(req.Context(), cl); err != nil {
			return nil, err
		}
		cl.attempts++
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	d := cl.cfg.timeout
	timer := time.AfterFunc(d, func() { cancel(&attemptTimeout{d: d}) })
	var start time.Time
	if c.log != nil {
		start = time.Now()
	}
	resp, err := c.first(req.WithContext(ctx))
	timer.Stop()
	cl.remember(resp)
	if err == nil && cl.pdf && isSuccess(resp.StatusCode) {
		resp.Body = newIdleBody(resp.Body, ctx, req.Context(), cancel, d)
	} else {
		cancel(nil)
	}
	if err != nil {
		err = timeoutCause(ctx, req.Context(), err)
	}
	if c.log != nil {
		c.logAttempt(req.Context(), cl, resp, err, time.Since(start))
	}
	return resp, err
}

// exchange sends req with the underlying transport and, except for a
// PDF's 2xx body, reads the response body into the call's pooled buffer
// (capped: the Client's limit for a 2xx, maxErrorBody for an error), so
// that a stalled or broken body is an error of this attempt, retried like
// any network error.
func (c *Client) exchange(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	cl := callFrom(req.Context())
	ok := isSuccess(resp.StatusCode)
	if cl == nil || (cl.pdf && ok) {
		return resp, nil
	}
	defer resp.Body.Close()
	if cl.buf == nil {
		cl.buf = c.getBuf()
	}
	var b []byte
	if ok {
		b, err = readCapped(resp.Body, *cl.buf, resp.ContentLength, c.maxBody)
	} else {
		b, err = readCapped(io.LimitReader(resp.Body, maxErrorBody), *cl.buf, resp.ContentLength, maxErrorBody)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the %d response: %w", resp.StatusCode, err)
	}
	*cl.buf = b
	resp.Body = &bufferedBody{b: b}
	return resp, nil
}

func isSuccess(code int) bool { return code >= 200 && code <= 299 }

// gate waits until the call may send its next attempt: the backoff its
// previous attempt asked for, any pause the Client is in after a 429, and
// the Client's rate limit. All waits end with ctx.
func (c *Client) gate(ctx context.Context, cl *call) error {
	if cl.attempts > 0 && cl.wait > 0 {
		if err := c.clk.Sleep(ctx, cl.wait); err != nil {
			return err
		}
	}
	for {
		now := c.clk.Now()
		left := time.Duration(cl.cfg.pause.until.Load() - now.UnixNano())
		if left <= 0 {
			break
		}
		if dl, ok := ctx.Deadline(); ok && now.Add(left).After(dl) {
			return &pausedError{left: left, cause: cl.cfg.pause.cause.Load()}
		}
		if err := c.clk.Sleep(ctx, left); err != nil {
			return err
		}
	}
	if c.limiter != nil {
		now := c.clk.Now()
		r := c.limiter.ReserveN(now, 1)
		if !r.OK() {
			return invalidOption("the rate limit allows no request")
		}
		if err := c.clk.Sleep(ctx, r.DelayFrom(now)); err != nil {
			r.CancelAt(c.clk.Now())
			return err
		}
	}
	return ctx.Err()
}

// pauseState is how long the requests made with one API key wait before
// sending, after a 429 (see WithAPIKey for why per key).
type pauseState struct {
	until atomic.Int64          // Unix nanoseconds (on the Client's clock)
	cause atomic.Pointer[Error] // the 429 that set until
}

// pause makes every request made with p's key wait d from now (on clk)
// before sending, unless it already waits longer, after the 429 cause.
func (p *pauseState) pause(now time.Time, d time.Duration, cause *Error) {
	until := now.Add(d).UnixNano()
	for {
		cur := p.until.Load()
		if cur >= until {
			return
		}
		if p.until.CompareAndSwap(cur, until) {
			p.cause.Store(cause)
			return
		}
	}
}

// tenantPause returns the pause state of the API key key.
func (c *Client) tenantPause(key string) *pauseState {
	id := sha256.Sum256([]byte(key))
	if p, ok := c.tenants.Load(id); ok {
		return p.(*pauseState)
	}
	p, _ := c.tenants.LoadOrStore(id, new(pauseState))
	return p.(*pauseState)
}

// pausedError is the gate's refusal to wait out a pause after a 429 that
// ends after the call's deadline: the call gets the rate-limit error at
// once, as it would for its own 429 (see rateLimited), instead of waiting
// until its deadline for nothing.
type pausedError struct {
	left  time.Duration // what is left of the pause
	cause *Error        // the 429 that started it; nil if unknown
}

func (e *pausedError) Error() string {
	return fmt.Sprintf("the client is paused for %v after a 429, past the call's deadline", e.left)
}

// rateLimited returns the *Error a call on method and path gets when
// err is the gate's pausedError, and nil otherwise: the 429 that paused the
// Client, with this call's method and path and what is left of the pause as
// RetryAfter. No attempt was made.
func rateLimited(err error, method, path string, took time.Duration) *Error {
	var pe *pausedError
	if !errors.As(err, &pe) {
		return nil
	}
	e := &Error{Detail: http.StatusText(http.StatusTooManyRequests)}
	if pe.cause != nil {
		*e = *pe.cause
	}
	e.Method, e.Path, e.RetryAfter = method, path, pe.left
	e.StatusCode, e.Attempts, e.Duration = http.StatusTooManyRequests, 0, took
	return e
}

// attemptTimeout is the error of an attempt that exceeded its deadline
// (WithTimeout, WithRequestTimeout). It matches context.DeadlineExceeded
// and is a net.Error whose Timeout is true.
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
func (e *attemptTimeout) Timeout() bool        { return true }
func (e *attemptTimeout) Temporary() bool      { return true }

// timeoutCause returns the attempt's timeout error in place of err when the
// attempt context ctx ended because of it (and not because parent ended).
func timeoutCause(ctx, parent context.Context, err error) error {
	var te *attemptTimeout
	if parent.Err() == nil && errors.As(context.Cause(ctx), &te) {
		return te
	}
	return err
}

// bufferedBody is a response body already read into memory.
type bufferedBody struct {
	b   []byte
	off int
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

func (b *bufferedBody) Close() error { return nil }

// remember records the body of resp when it is still the one exchange read
// (no middleware replaced it), so that the pipeline finds those bytes again
// after an http.Client wraps the body: net/http does so for a client with a
// Timeout, and a wrapper changes nothing of what the body holds.
func (cl *call) remember(resp *http.Response) {
	cl.resp, cl.body = nil, nil
	if resp == nil {
		return
	}
	if bb, ok := resp.Body.(*bufferedBody); ok {
		cl.resp, cl.body = resp, bb.b
	}
}

// bodyOf returns the body of resp when the pipeline already holds it in
// memory: the bytes exchange read for this very response, however the
// http.Client wrapped its Body since. ok is false when the body must be read.
func (cl *call) bodyOf(resp *http.Response) (b []byte, ok bool) {
	if bb, isBuf := resp.Body.(*bufferedBody); isBuf {
		return bb.b, true
	}
	if cl != nil && cl.resp == resp && cl.body != nil {
		return cl.body, true
	}
	return nil, false
}

// errorBody returns a copy of the body of a non-2xx response, capped at
// maxErrorBody: the bytes already read, or (when a Middleware replaced the
// body) what can be read of it now.
func errorBody(resp *http.Response, cl *call) []byte {
	if b, ok := cl.bodyOf(resp); ok {
		return bytes.Clone(b)
	}
	b, _ := readCapped(io.LimitReader(resp.Body, maxErrorBody), nil, resp.ContentLength, maxErrorBody)
	return b
}

// readBody returns the whole body of a 2xx response: the bytes exchange
// read, or (when a Middleware replaced the body) the body read now, capped.
func (c *Client) readBody(resp *http.Response, cl *call) ([]byte, error) {
	if b, ok := cl.bodyOf(resp); ok {
		return b, nil
	}
	// Not into cl.buf: a replaced body may still be reading from it.
	return readCapped(resp.Body, nil, resp.ContentLength, c.maxBody)
}

// idleBody is a streamed (PDF) body whose every Read may wait at most d for
// data; on Close it ends the attempt's context.
type idleBody struct {
	rc          io.ReadCloser
	d           time.Duration
	timer       *time.Timer
	ctx, parent context.Context
	cancel      context.CancelCauseFunc
}

func newIdleBody(rc io.ReadCloser, ctx, parent context.Context, cancel context.CancelCauseFunc, d time.Duration) *idleBody {
	b := &idleBody{rc: rc, d: d, ctx: ctx, parent: parent, cancel: cancel}
	b.timer = time.AfterFunc(d, func() { cancel(&attemptTimeout{d: d, stalled: true}) })
	b.timer.Stop() // armed only while a Read waits
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.d)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF {
		err = timeoutCause(b.ctx, b.parent, err)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// maxPooledBuf is the largest response buffer kept for reuse.
const maxPooledBuf = 1 << 20

func (c *Client) getBuf() *[]byte {
	if bp, ok := c.bufs.Get().(*[]byte); ok {
		return bp
	}
	return new([]byte)
}

// release returns the call's buffer for reuse, unless it grew past
// maxPooledBuf. The call's response body must no longer be used.
func (c *Client) release(cl *call) {
	if cl == nil || cl.buf == nil {
		return
	}
	if cap(*cl.buf) <= maxPooledBuf {
		*cl.buf = (*cl.buf)[:0]
		c.bufs.Put(cl.buf)
	}
	cl.buf = nil
}

// maxSizeHint caps the buffer allocated up front from a Content-Length,
// which is a hint from the server, not an allocation order.
const maxSizeHint = 256 << 10

// readCapped reads all of r into buf[:0], failing with ErrResponseTooLarge
// beyond max bytes. size is the Content-Length (or -1), used as a hint.
func readCapped(r io.Reader, buf []byte, size int64, max int) ([]byte, error) {
	b := buf[:0]
	want := 512
	if size > 0 {
		want = int(min(size, int64(max), maxSizeHint)) + 1 // +1: room to see EOF without growing
	}
	if cap(b) < want {
		b = slices.Grow(b, want)
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

func (c *Client) logAttempt(ctx context.Context, cl *call, resp *http.Response, err error, took time.Duration) {
	attrs := []slog.Attr{slog.String("route", cl.route()), slog.Int("attempt", cl.attempts), slog.Duration("took", took)}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	} else {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "invoicing: attempt", attrs...)
}
