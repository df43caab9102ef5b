package invoicing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"
)

// checkRetry is the retry policy (a retryablehttp.CheckRetry). It decides
// whether the call in ctx makes another attempt and, if so, how long it
// waits first (the wait itself happens in the attempt transport's gate):
//   - never after the context ends, nor past the call's retry budget;
//   - 429: always, unless Retry-After asks for more than the maximum wait or
//     for longer than the context has left; the caller then gets the 429.
//     Every other request of the Client then waits as long before sending;
//   - 5xx (but 501) and network errors (a stall included): only when the
//     call is repeatable (a GET, an invoice create carrying its idempotency
//     reference, or WithIdempotentRetry), and when the wait fits as above;
//   - any other status (409 and every 4xx included): never.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	cl := callFrom(ctx)
	if cl == nil {
		return false, nil
	}
	limited := resp != nil && resp.StatusCode == http.StatusTooManyRequests
	var wait time.Duration
	switch {
	case err != nil:
		if !cl.repeatable || !retryableTransportError(err) {
			return false, nil
		}
		wait = c.backoff(cl.attempts)
	case limited:
		wait = c.retryWait(resp, cl.attempts)
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented && cl.repeatable:
		wait = c.retryWait(resp, cl.attempts)
	default:
		return false, nil
	}
	if wait > c.waitMax {
		return false, nil // Retry-After asks for more than the maximum wait
	}
	if limited {
		// Every call of the Client waits, whether or not this one retries.
		now := c.clk.Now()
		cl.cfg.pause.pause(now, wait, newError(cl.method, cl.path, resp, errorBody(resp, cl), now))
	}
	if cl.attempts > cl.cfg.retries {
		return false, nil // the call's retry budget is spent
	}
	if dl, ok := ctx.Deadline(); ok && c.clk.Now().Add(wait).After(dl) {
		return false, nil // the wait would outlast the context
	}
	cl.wait = wait
	if c.log != nil {
		c.logRetry(ctx, cl, resp, err, wait)
	}
	return true, nil
}

// retryWait is the wait before retrying after resp: its Retry-After plus
// up to 10% jitter when it has one (more than the maximum wait when
// Retry-After asks for that), the exponential backoff otherwise.
func (c *Client) retryWait(resp *http.Response, attempts int) time.Duration {
	ra := retryAfter(resp.Header, c.clk.Now())
	if ra <= 0 {
		return c.backoff(attempts)
	}
	if ra > c.waitMax {
		return ra
	}
	return min(ra+jitter(ra/10), c.waitMax)
}

// backoff is the wait before retry number attempts (1 for the first):
// exponential from the minimum wait (or, when that is 0, from a 32nd of the
// maximum) up to the maximum, with "equal jitter" (a random wait in [d/2,
// d]).
func (c *Client) backoff(attempts int) time.Duration {
	lo, hi := c.waitMin, c.waitMax
	if lo <= 0 {
		lo = hi / 32
	}
	d := lo
	for i := 1; i < attempts && d < hi; i++ {
		d *= 2
	}
	if d > hi || d <= 0 {
		d = hi
	}
	return d/2 + jitter(d-d/2)
}

// retryableTransportError reports whether a transport error may go away on
// a second try: certificate and TLS failures, refused redirects and a
// response over the size limit do not.
func retryableTransportError(err error) bool {
	var (
		unknownCA  x509.UnknownAuthorityError
		invalidErr x509.CertificateInvalidError
		hostErr    x509.HostnameError
		recordErr  tls.RecordHeaderError
		verifyErr  *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &invalidErr), errors.As(err, &hostErr),
		errors.As(err, &recordErr), errors.As(err, &verifyErr):
		return false
	case errors.As(err, new(*pausedError)), errors.Is(err, http.ErrSchemeMismatch), errors.Is(err, errInsecureRedirect),
		errors.Is(err, ErrResponseTooLarge), errors.Is(err, ErrInvalidOption):
		return false
	}
	return true
}

// jitter returns a random duration in [0, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

func (c *Client) logRetry(ctx context.Context, cl *call, resp *http.Response, err error, wait time.Duration) {
	attrs := []slog.Attr{slog.String("route", cl.route()), slog.Int("retry", cl.attempts), slog.Duration("wait", wait)}
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	} else {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "invoicing: retrying", attrs...)
}
