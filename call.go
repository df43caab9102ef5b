package invoicing

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// do runs one call: every attempt of it, through go-retryablehttp, and
// then decode on the body of its 2xx response (a PDF's body is left open
// in the response instead). Each attempt goes
//
//  1. gate: wait out a pause after a 429 of the call's key, the rate limit,
//     and the call's Limiters (WithLimiter);
//  2. deadline: the attempt gets its own (WithTimeout);
//  3. send: through the middleware to the http.Client's transport;
//  4. capped read: the whole body, up to the limit;
//  5. classify: retry or not (checkRetry);
//  6. wait (backoff: Retry-After, jitter, caps), or return.
//
// Steps 1 to 3 are the RoundTrip of the call's transport; 4 and 5 are
// retryablehttp's CheckRetry hook and 6 its Backoff hook, after which
// retryablehttp waits (ending with the context). Where retryablehttp cannot
// express a rule: it has no hook before the first attempt, so the gate runs
// in the transport (before every attempt, but not before a redirect of
// one); and its retry budget would leave the last response unread and close
// the Client's idle connections, so checkRetry ends the call itself once
// the budget is spent, and RetryMax is only a backstop.
func (c *Client) do(ctx context.Context, r *request, cfg *callConfig, decode func([]byte) error) (*http.Response, error) {
	if ctx == nil {
		return nil, errors.New("invoicing: nil context")
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	u, err := c.url(r, cfg.query)
	if err != nil {
		return nil, err
	}
	var body any
	if r.body != nil {
		body = r.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("invoicing: building %s %s request: %w", r.method, r.path, err)
	}
	c.setHeaders(req.Header, r, cfg)
	cl := &call{c: c, r: r, key: cfg.key, limiter: cfg.limiter, buf: c.getBuf(), repeatable: r.method == http.MethodGet || r.repeatable || cfg.repeatable}
	defer c.bufs.Put(cl.buf)
	cl.hc = *c.hc
	cl.hc.Transport = cl
	cl.rc = retryablehttp.Client{HTTPClient: &cl.hc, RetryMax: c.maxRetries + 1, CheckRetry: cl.checkRetry,
		Backoff: cl.backoff, ErrorHandler: retryablehttp.PassthroughErrorHandler}
	start := time.Now()
	resp, err := cl.rc.Do(req)
	info := Response{Attempts: cl.n, Duration: time.Since(start)}
	if resp != nil {
		info.StatusCode, info.Header, info.RequestID = resp.StatusCode, resp.Header, resp.Header.Get(requestIDHeader)
	}
	if cfg.into != nil {
		*cfg.into = info
	}
	if c.log != nil {
		c.logf(ctx, slog.LevelDebug, "invoicing: call", cl.r.route(), "attempts", cl.n, "status", info.StatusCode, "took", info.Duration, "error", err)
	}
	switch {
	case err != nil:
		if resp != nil {
			resp.Body.Close()
		}
		return nil, c.failure(ctx, r, cfg, err, info)
	case !isSuccess(resp.StatusCode):
		e := newError(r.method, r.path, resp, bytes.Clone(cl.body), info)
		if e.StatusCode == http.StatusNotFound && e.Detail == http.StatusText(http.StatusNotFound) && !strings.HasSuffix(c.base, apiPrefix) {
			e.hint = "the base URL must end in " + apiPrefix + "; this Client uses " + c.base
		}
		return nil, e
	case cl.readErr != nil:
		return nil, fmt.Errorf("invoicing: reading %s %s response: %w", r.method, r.path, cl.readErr)
	case decode != nil:
		if err := decode(cl.body); err != nil {
			return nil, fmt.Errorf("invoicing: decoding %s %s response: %w", r.method, r.path, err)
		}
	}
	return resp, nil
}

// call is one call while it runs: the hooks retryablehttp calls and what
// they share.
type call struct {
	c          *Client
	r          *request
	hc         http.Client          // the Client's, with the call as its transport
	rc         retryablehttp.Client // runs the attempts
	key        pauseKey
	limiter    Limiter // the call's WithLimiter, waited on after the gate; nil when none
	repeatable bool
	n          int     // attempts so far
	buf        *[]byte // the pooled buffer body is read into
	body       []byte  // the latest response's body, read within its attempt
	readErr    error   // why a 2xx body could not be read
	lo, hi     time.Duration
}

// RoundTrip is one attempt, or one redirect within it: gate, deadline,
// middleware, send.
func (cl *call) RoundTrip(req *http.Request) (*http.Response, error) {
	c := cl.c
	if req.Response == nil { // a new attempt, not a redirect
		if err := c.gate(req.Context(), cl.key); err != nil {
			return nil, err
		}
		if err := cl.waitLimiter(req.Context()); err != nil {
			return nil, err
		}
		cl.n++
	}
	parent := req.Context()
	ctx, cancel := context.WithCancelCause(parent)
	d := c.timeout
	timer := time.AfterFunc(d, func() { cancel(&attemptTimeout{d: d}) })
	start := time.Now()
	resp, err := c.send(req.WithContext(&attemptContext{Context: ctx, r: cl.r, n: cl.n}))
	if cl.limiter != nil { // an attempt's outcome: its last hop's (a redirect's next hop reports it)
		switch {
		case err != nil:
			answered(cl.limiter, 0, nil)
		case resp.StatusCode < 300 || resp.StatusCode >= 400 || resp.Header.Get("Location") == "":
			answered(cl.limiter, resp.StatusCode, resp.Header)
		}
	}
	switch {
	case err != nil:
		timer.Stop()
		cancel(nil)
		err = timeoutCause(ctx, parent, err)
	default:
		b := &body{rc: resp.Body, timer: timer, d: d, ctx: ctx, parent: parent, cancel: cancel}
		if cl.r.pdf && isSuccess(resp.StatusCode) {
			b.idle = true // each wait for more of the stream gets d
			timer.Stop()
		}
		resp.Body = b
	}
	if c.log != nil {
		c.logf(parent, slog.LevelDebug, "invoicing: attempt", cl.r.route(), "attempt", cl.n, "status", status(resp), "took", time.Since(start), "error", err)
	}
	return resp, err
}

// waitLimiter waits on the call's Limiter, if any. When Wait fails it
// returns ctx's error if ctx has ended, else a limiterError wrapping Wait's.
func (cl *call) waitLimiter(ctx context.Context) error {
	if cl.limiter == nil {
		return nil
	}
	if err := cl.limiter.Wait(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return &limiterError{err: err}
	}
	return nil
}

// limiterError is a Limiter's refusal to let an attempt go: it ends the
// call, which is not retried.
type limiterError struct{ err error }

func (e *limiterError) Error() string { return "waiting on the Limiter: " + e.err.Error() }
func (e *limiterError) Unwrap() error { return e.err }

// checkRetry reads the body of a response (capped: the Client's limit for
// a 2xx, 64 KiB for an error; a PDF's 2xx body streams instead) and says
// whether the call tries again:
//   - never after its context ended, nor past the retry budget;
//   - 429: always, unless Retry-After asks for more than the maximum wait;
//     every other call with the same key then waits as long before sending;
//   - 5xx (but 501) and network errors, a stalled body included: only when
//     the call is repeatable (a GET, an invoice create carrying its
//     reference, or WithIdempotentRetry), the wait fitting as above;
//   - any other status (409 and every 4xx included): never;
//   - nor when the wait would outlast the context.
func (cl *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c := cl.c
	cl.body, cl.readErr = nil, nil
	if err == nil && !(cl.r.pdf && isSuccess(resp.StatusCode)) {
		limit := c.maxBody
		if !isSuccess(resp.StatusCode) {
			limit = maxErrorBody
		}
		*cl.buf, err = readCapped(resp.Body, (*cl.buf)[:0], resp.ContentLength, limit)
		resp.Body.Close()
		resp.Body = http.NoBody
		cl.body = *cl.buf
		if isSuccess(resp.StatusCode) {
			cl.readErr = err
		} else {
			err = nil // classified by its status; what could be read is its body
		}
	}
	if ctx.Err() != nil {
		return false, nil
	}
	var ra time.Duration
	switch {
	case err != nil:
		if !cl.repeatable || !retryable(err) {
			return false, nil
		}
	case resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented && cl.repeatable:
		if ra = retryAfter(resp.Header, time.Now()); ra > c.waitMax {
			return false, nil // asks for more than the maximum wait: the caller gets it now
		}
	default:
		return false, nil
	}
	cl.lo, cl.hi = c.delay(cl.n, ra)
	now := time.Now()
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.pauses.set(cl.key, now, now.Add(cl.lo), newError(cl.r.method, cl.r.path, resp, bytes.Clone(cl.body), Response{}))
	}
	if dl, ok := ctx.Deadline(); cl.n > c.maxRetries || ok && now.Add(cl.hi).After(dl) {
		return false, nil
	}
	if c.log != nil {
		c.logf(ctx, slog.LevelInfo, "invoicing: retrying", cl.r.route(), "retry", cl.n, "status", status(resp), "wait", cl.hi, "error", err)
	}
	return true, nil
}

// backoff is the wait before the next attempt, in the bounds checkRetry
// found for it.
func (cl *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return cl.lo + rand.N(cl.hi-cl.lo+1)
}

// delay returns the bounds of the wait before the retry after attempt n:
// ra plus up to 10% when the response asked for it (Retry-After), capped at
// the maximum wait; otherwise exponential backoff from the minimum wait (or
// a 32nd of the maximum when that is 0) up to the maximum, with "equal
// jitter" (anywhere in [d/2, d]).
func (c *Client) delay(n int, ra time.Duration) (lo, hi time.Duration) {
	if ra > 0 {
		return ra, min(ra+ra/10, c.waitMax)
	}
	d := c.waitMin
	if d <= 0 {
		d = c.waitMax / 32
	}
	for i := 1; i < n && d < c.waitMax; i++ {
		d *= 2
	}
	d = min(d, c.waitMax)
	return d / 2, d
}

// retryable reports whether a transport error may go away on a second
// try: certificate and TLS failures, refused redirects, a pause refused by
// the gate, a Limiter's error and a response over the size limit do not.
func retryable(err error) bool {
	var tlsErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	return !(errors.As(err, &tlsErr) || errors.As(err, &recordErr) || errors.As(err, &unknownCA) ||
		errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, new(*pausedError)) ||
		errors.As(err, new(*limiterError)) ||
		errors.Is(err, http.ErrSchemeMismatch) || errors.Is(err, errInsecureRedirect) ||
		errors.Is(err, errTooManyRedirects) || errors.As(err, new(*refusedRedirect)) ||
		errors.Is(err, ErrResponseTooLarge))
}

// failure is the error of a call that got no response to return: the gate
// refused to wait out a pause (the 429's *Error), or the network, the
// attempt's deadline or the context failed it.
func (c *Client) failure(ctx context.Context, r *request, cfg *callConfig, err error, info Response) error {
	var pe *pausedError
	if errors.As(err, &pe) {
		e := &Error{Detail: http.StatusText(http.StatusTooManyRequests)}
		if pe.cause != nil {
			*e = *pe.cause
		}
		e.Response = Response{StatusCode: http.StatusTooManyRequests, Duration: info.Duration}
		e.Method, e.Path, e.RetryAfter = r.method, r.path, pe.left
		if cfg.into != nil {
			*cfg.into = e.Response
		}
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is the request's, said below
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%w)", ctxErr, err)
	}
	if info.Attempts > 1 {
		return fmt.Errorf("invoicing: %s %s: %w (after %d attempts)", r.method, r.path, err, info.Attempts)
	}
	return fmt.Errorf("invoicing: %s %s: %w", r.method, r.path, err)
}

// gate waits until a call made with key may send an attempt: after any
// pause that key is in after a 429, and the Client's rate limit. A pause
// that ends after the context's deadline is refused at once (pausedError).
func (c *Client) gate(ctx context.Context, key pauseKey) error {
	for {
		left, cause := c.pauses.left(key, time.Now())
		if left <= 0 {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Now().Add(left).After(dl) {
			return &pausedError{left: left, cause: cause}
		}
		if err := sleep(ctx, left); err != nil {
			return err
		}
	}
	if c.limiter != nil {
		r := c.limiter.Reserve()
		if err := sleep(ctx, r.Delay()); err != nil {
			r.Cancel()
			return err
		}
	}
	return ctx.Err()
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
