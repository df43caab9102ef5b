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

// checkRetry is the retry policy (a retryablehttp.CheckRetry):
//   - never after the context ends;
//   - 429: always, unless Retry-After asks for more than the maximum wait or
//     for longer than the context has left; the caller then gets the 429;
//   - 5xx (but 501) and network errors: only when the request is repeatable
//     (a GET, or an invoice create carrying its idempotency reference);
//   - any other status (409 and every 4xx included): never.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	repeatable := ctx.Value(noRepeatKey{}) == nil
	if err != nil {
		return repeatable && retryableTransportError(err), nil
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		return c.waitFits(ctx, resp), nil
	case code >= 500 && code != http.StatusNotImplemented:
		return repeatable && c.waitFits(ctx, resp), nil
	}
	return false, nil
}

// waitFits reports whether the Retry-After of resp, if any, is within the
// maximum wait and ends before the context's deadline.
func (c *Client) waitFits(ctx context.Context, resp *http.Response) bool {
	now := c.now()
	ra := retryAfter(resp.Header, now)
	if ra > c.waitMax {
		return false
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(ra).After(dl) {
		return false
	}
	return true
}

// retryableTransportError reports whether a transport error may go away on
// a second try: certificate and TLS failures and malformed requests do not.
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
	case errors.Is(err, http.ErrSchemeMismatch), errors.Is(err, errInsecureRedirect):
		return false
	}
	return true
}

// backoff is the wait before a retry (a retryablehttp.Backoff): the
// response's Retry-After plus up to 10% jitter, capped at hi (or at Retry-After itself when larger, which checkRetry has already refused); otherwise
// exponential from lo with "equal jitter" (a random wait in [d/2, d]).
func (c *Client) backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	var wait time.Duration
	if resp != nil {
		if ra := retryAfter(resp.Header, c.now()); ra > 0 {
			wait = min(ra+jitter(ra/10), max(ra, hi))
			c.logRetry(resp, attempt, wait)
			return wait
		}
	}
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	if d > hi || d <= 0 {
		d = hi
	}
	wait = d/2 + jitter(d-d/2)
	c.logRetry(resp, attempt, wait)
	return wait
}

// jitter returns a random duration in [0, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

func (c *Client) logRetry(resp *http.Response, attempt int, wait time.Duration) {
	if c.log == nil {
		return
	}
	attrs := []slog.Attr{slog.Int("retry", attempt+1), slog.Duration("wait", wait)}
	ctx := context.Background()
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode), slog.String("path", resp.Request.URL.Path))
		ctx = resp.Request.Context()
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "invoicing: retrying", attrs...)
}
