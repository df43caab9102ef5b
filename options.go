package invoicing

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// ErrInvalidOption matches (with errors.Is) the error of an option given an
// unusable value: NewClient returns it, and a call given such an option
// returns it before anything is sent.
var ErrInvalidOption = errors.New("invoicing: invalid option")

// invalidOption returns an error matching ErrInvalidOption.
func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// An Option configures a Client in NewClient: its transport, how it retries
// and waits, its limits, its logging. Options that describe one call are
// RequestOptions instead; no setting has both.
type Option func(*settings)

func (s *settings) fail(format string, args ...any) {
	if s.err == nil {
		s.err = invalidOption(format, args...)
	}
}

// WithHTTPClient makes the Client send requests through hc: its Transport,
// Jar, Timeout and redirect policy. The SDK's own rule still applies on top
// of hc's CheckRedirect (which runs after it): no redirect to plain http on
// a non-loopback host, where the API key would travel in clear text (see
// WithInsecureHTTP). hc itself is not modified. Give its Transport a
// MaxIdleConnsPerHost of at least the WithPrefetch you use; net/http's
// default of 2 dials most connections again for every round of pages.
func WithHTTPClient(hc *http.Client) Option { return func(s *settings) { s.hc = hc } }

// WithTimeout sets the deadline of each attempt of every call (default one
// minute), so that no call waits forever on a server that stops answering,
// even with a context that has no deadline. It covers connecting, the
// response headers and, for JSON responses, the whole body; for PDFs,
// which stream, it bounds the wait for the headers and then each wait for
// more of the body. An attempt that runs out is a network error: retried
// where retrying is safe. To bound one call as a whole, give its context a
// deadline. d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d <= 0 {
			s.fail("timeout %v is not positive", d)
		}
		s.timeout = d
	}
}

// WithMaxRetries sets how many times a request may be repeated after its
// first try (default 3; 0 disables retries). Which failures are retried
// does not change: see WithIdempotentRetry.
func WithMaxRetries(n int) Option {
	return func(s *settings) {
		if n < 0 {
			s.fail("max retries %d is negative", n)
		}
		s.maxRetries = n
	}
}

// WithRetryWait sets the bounds of the wait between tries (defaults 500 ms
// and 30 s). Backoff grows from min towards max with jitter. A 429 or 503
// whose Retry-After asks for more than max is not retried: the caller gets
// the *Error at once, with RetryAfter set.
func WithRetryWait(min, max time.Duration) Option {
	return func(s *settings) {
		if min < 0 || max < min {
			s.fail("retry wait bounds %v, %v: want 0 <= min <= max", min, max)
		}
		s.waitMin, s.waitMax = min, max
	}
}

// WithRateLimit keeps the Client under perSecond requests a second on
// average, with bursts of up to burst requests, by making requests wait
// before they are sent (each attempt counts), so that a bulk job stays
// under the service's limit instead of bouncing off it. Waits end with the
// call's context. perSecond must be positive and burst at least 1. Without
// it the Client sends as fast as it is asked to, pausing only after a 429.
func WithRateLimit(perSecond float64, burst int) Option {
	return func(s *settings) {
		if !(perSecond > 0) || burst < 1 {
			s.fail("rate limit %v/s with burst %d: want a positive rate and a burst of at least 1", perSecond, burst)
			return
		}
		s.limiter = rate.NewLimiter(rate.Limit(perSecond), burst)
	}
}

// WithMiddleware adds middleware that sees every attempt of every call, in
// the order given (the first is the outermost). See Middleware.
func WithMiddleware(mw ...Middleware) Option {
	return func(s *settings) {
		for _, m := range mw {
			if m == nil {
				s.fail("nil middleware")
			}
		}
		s.middleware = append(s.middleware, mw...)
	}
}

// WithLogger logs each attempt (route template such as "GET
// /invoices/{id}", attempt number, status or error, duration) and each
// call's outcome at Debug level, and retries at Info level. Headers and
// bodies are never logged, so the API key cannot leak. By default nothing
// is logged.
func WithLogger(l *slog.Logger) Option { return func(s *settings) { s.log = l } }

// WithUserAgent appends part (e.g. "myapp/1.2") to the SDK's User-Agent.
func WithUserAgent(part string) Option {
	return func(s *settings) {
		if strings.ContainsAny(part, "\r\n") {
			s.fail("user agent must not contain line breaks")
		}
		s.userAgent = part
	}
}

// WithInsecureHTTP allows a plain http:// base URL on a host that is not
// loopback, which sends the API key in clear text. Loopback hosts (localhost,
// 127.0.0.0/8, ::1) are always allowed.
func WithInsecureHTTP() Option { return func(s *settings) { s.insecure = true } }

// WithMaxResponseBytes caps how many bytes of a JSON response are read
// (default 32 MiB); a larger body fails with ErrResponseTooLarge. PDFs are
// streamed and not capped.
func WithMaxResponseBytes(n int) Option {
	return func(s *settings) {
		if n <= 0 {
			s.fail("max response bytes %d is not positive", n)
		}
		s.maxBody = n
	}
}

// A RequestOption describes one call: what it sends besides its params,
// whose key it uses, whether it may be repeated, where its Response goes.
// Every method, and Client.Do, takes any number of them last:
//
//	inv, err := c.Invoices.Get(ctx, id,
//		invoicing.WithHeader("X-Correlation-Id", cid),
//		invoicing.WithResponseInto(&resp))
//
// An option given an unusable value makes the call fail with an error
// matching ErrInvalidOption before anything is sent.
type RequestOption func(*callConfig)

// A ListOption changes a List: a RequestOption, or WithPrefetch, which
// means nothing to a call that fetches one response.
type ListOption interface{ applyList(*callConfig) }

func (o RequestOption) applyList(cfg *callConfig) { o(cfg) }

// callConfig is one call's settings, from its options.
type callConfig struct {
	header     http.Header // extra request headers; nil when none
	query      url.Values  // extra query parameters; nil when none
	auth       func() []string
	key        pauseKey // whose 429 pauses the call: the zero key for the Client's
	limiter    Limiter  // waited on before each attempt; nil when none
	repeatable bool
	into       *Response
	prefetch   int // pages List keeps in flight; 0 = one at a time
	err        error
}

func (cfg *callConfig) fail(format string, args ...any) {
	if cfg.err == nil {
		cfg.err = invalidOption(format, args...)
	}
}

// config returns the settings of a call given opts, or the error of the
// first invalid option.
func config[O interface{ applyList(*callConfig) }](opts []O) (*callConfig, error) {
	cfg := new(callConfig)
	for _, o := range opts {
		o.applyList(cfg)
	}
	return cfg, cfg.err
}

// WithHeader adds a header to the request, e.g. an Idempotency-Key or a
// correlation id your gateway expects. It refuses (ErrInvalidOption) the
// headers the SDK owns, Authorization and Content-Type, a name that is not
// a valid header name, and a name or value holding CR, LF or NUL. Given
// twice for one name, both values are sent. A User-Agent or Accept given
// here replaces the SDK's (WithUserAgent adds to the SDK's User-Agent for
// every call instead).
func WithHeader(key, value string) RequestOption {
	return func(cfg *callConfig) {
		switch ck := textproto.CanonicalMIMEHeaderKey(key); {
		case !validToken(key):
			cfg.fail("header name %q is not a valid token", key)
		case ck == "Authorization" || ck == "Content-Type":
			cfg.fail("header %s is set by the SDK", ck)
		case strings.ContainsAny(value, "\r\n\x00"):
			cfg.fail("header %s: value holds CR, LF or NUL", ck)
		default:
			if cfg.header == nil {
				cfg.header = http.Header{}
			}
			cfg.header[ck] = append(cfg.header[ck], value)
		}
	}
}

// validToken reports whether s is an RFC 9110 token (a header name, a
// method).
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// WithQuery adds a query parameter to the request, for filters the SDK has
// no field for. A parameter the call already sets (a typed filter, page or
// page_size) is a *ParamError rather than a second value. Given twice for
// one key, both values are sent.
func WithQuery(key, value string) RequestOption {
	return func(cfg *callConfig) {
		if key == "" {
			cfg.fail("empty query parameter name")
			return
		}
		if cfg.query == nil {
			cfg.query = url.Values{}
		}
		cfg.query[key] = append(cfg.query[key], value)
	}
}

// WithAPIKey sends this call with key instead of the Client's API key, so
// that one Client (its connections, middleware and rate limit) serves many
// businesses, each with its own key. The key is held as the Client's is:
// never printed, logged or put in an error. Whitespace around it is trimmed;
// a key with a "Bearer " prefix, or holding whitespace, fails the call with
// ErrInvalidOption.
//
// A 429 pauses only the calls made with the same key: the service scopes
// everything else to the business that owns a key, and the API documents no
// limit shared between businesses, so one busy tenant does not stall the
// others. WithRateLimit, the Client's own budget, counts the calls of every
// key.
func WithAPIKey(key string) RequestOption {
	key, err := checkKey(key)
	auth, id := bearer(key), pauseKey(sha256.Sum256([]byte(key)))
	return func(cfg *callConfig) {
		if err != nil {
			cfg.fail("WithAPIKey: %s", strings.TrimPrefix(err.Error(), "invoicing: "))
			return
		}
		cfg.auth, cfg.key = auth, id
	}
}

// A Limiter is a request budget WithLimiter makes a call wait on before each
// attempt. Wait returns nil when the attempt may be sent, or an error (the
// context's when it ends first) that ends the call. *rate.Limiter
// (golang.org/x/time/rate) satisfies it; so does a budget shared between
// processes, kept in a database for instance. A Limiter must be safe for
// concurrent use: the pages a List fetches ahead (WithPrefetch) wait on it
// at once.
type Limiter interface {
	Wait(ctx context.Context) error
}

// An AdaptiveLimiter is a Limiter that hears how each attempt it let go
// ended, to adapt its rate: a budget that backs off on 429 and creeps up
// while the service answers, for a service whose limits are not
// published. Answered is called once per attempt, as soon as its response's
// status and header are in (before the body is read), with the status (0
// when no response came: a network error or a timeout) and the header (nil
// then; Retry-After, say, for a 429). It must not block.
type AdaptiveLimiter interface {
	Limiter
	Answered(status int, header http.Header)
}

// WithLimiter makes every attempt of this call (the first and each retry,
// not a redirect within one) wait on l.Wait with the call's context, after
// any 429 pause of the call's key and after the Client's WithRateLimit, so
// that one Client can give each business its own budget, alongside
// WithAPIKey. For a List, each page's attempts wait. Given more than once,
// every Limiter is waited on, in the order given. An l that is an
// AdaptiveLimiter hears each attempt's outcome.
//
// An error from Wait ends the call and no request is sent for that attempt:
// when the call's context has ended the call's error is the context's
// (errors.Is matches context.Canceled or context.DeadlineExceeded);
// otherwise it wraps Wait's error, which errors.Is matches, and is not
// retried. (A *rate.Limiter refuses at once a wait that would outlast the
// context's deadline, before the context ends: the call's error is then
// rate's, not context.DeadlineExceeded.) A nil l fails the call with
// ErrInvalidOption.
func WithLimiter(l Limiter) RequestOption {
	return func(cfg *callConfig) {
		if l == nil {
			cfg.fail("WithLimiter(nil)")
			return
		}
		switch prev := cfg.limiter.(type) {
		case nil:
			cfg.limiter = l
		case limiterChain:
			cfg.limiter = append(prev, l)
		default:
			cfg.limiter = limiterChain{prev, l}
		}
	}
}

// limiterChain is the Limiters of a call given WithLimiter more than once,
// waited on in turn. (One interface in callConfig, rather than a slice,
// keeps the config of a call without them in a smaller size class.)
type limiterChain []Limiter

// Wait waits on each Limiter in turn and returns the first error.
func (ls limiterChain) Wait(ctx context.Context) error {
	for _, l := range ls {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Answered tells each AdaptiveLimiter of the chain an attempt's outcome.
func (ls limiterChain) Answered(status int, header http.Header) {
	for _, l := range ls {
		answered(l, status, header)
	}
}

// answered tells l of an attempt's outcome when it is an AdaptiveLimiter.
func answered(l Limiter, status int, header http.Header) {
	if a, ok := l.(AdaptiveLimiter); ok {
		a.Answered(status, header)
	}
}

// WithIdempotentRetry lets this call be repeated after a 5xx response or a
// network error (a stall included) even though it is not a GET: for a create
// you know is safe to send twice, for instance because your own Extra or
// header makes the service de-duplicate it. Without it only GETs and
// invoice creates carrying their idempotency Reference are repeated after
// such failures; a 429 is retried in every case.
func WithIdempotentRetry() RequestOption {
	return func(cfg *callConfig) { cfg.repeatable = true }
}

// WithResponseInto makes the call fill *r when it ends, whether it
// succeeded or failed: the final status and headers, the request id, how
// many attempts were made and how long the call took. For List it holds the
// response of the last page yielded. r must not be nil.
func WithResponseInto(r *Response) RequestOption {
	return func(cfg *callConfig) {
		if r == nil {
			cfg.fail("WithResponseInto(nil)")
			return
		}
		cfg.into = r
	}
}

// MaxPrefetch is the largest number of pages WithPrefetch lets a List keep in
// flight.
const MaxPrefetch = 64

// WithPrefetch makes List fetch up to n pages ahead while the caller ranges
// over the current one (1 <= n <= MaxPrefetch); without it List fetches one
// page at a time. Records still come out once each and in the service's
// order, and at most n+1 pages are held in memory. The pages ahead are
// planned from the first page's total: n requests overlap from the second
// page on. A Client made without WithHTTPClient keeps up to MaxPrefetch
// idle connections to the service, so the n connections are reused from one
// round of pages to the next.
func WithPrefetch(n int) ListOption { return prefetch(n) }

type prefetch int

func (n prefetch) applyList(cfg *callConfig) {
	if n < 1 || n > MaxPrefetch {
		cfg.fail("prefetch %d is outside 1..%d", n, MaxPrefetch)
		return
	}
	cfg.prefetch = int(n)
}
