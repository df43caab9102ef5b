package invoicing

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// ErrInvalidOption matches (with errors.Is) the error of an Option or
// RequestOption given an unusable value: NewClient returns it, and a call
// given such a RequestOption returns it before anything is sent.
var ErrInvalidOption = errors.New("invoicing: invalid option")

// MaxPrefetch is the largest number of pages WithPrefetch lets a List keep in
// flight.
const MaxPrefetch = 64

// A RequestOption changes one call. Every service method, and Client.Do,
// takes any number of them after its other arguments:
//
//	inv, err := c.Invoices.Get(ctx, id,
//		invoicing.WithRequestTimeout(5*time.Second),
//		invoicing.WithRetries(0),
//		invoicing.WithResponseInto(&resp))
//
// A RequestOption given to a call wins over the Client's default for the
// same setting (WithTimeout, WithMaxRetries); the Client's other options
// apply to every call. An option given an unusable value makes the call
// fail with an error matching ErrInvalidOption before anything is sent.
type RequestOption func(*callConfig)

// callConfig is the settings of one call: the Client's defaults with the
// call's RequestOptions applied.
type callConfig struct {
	timeout    time.Duration // deadline of each attempt; for PDFs, of the headers and of each read
	retries    int           // how many times the request may be repeated after the first try
	repeatable bool          // WithIdempotentRetry
	header     http.Header   // extra request headers; nil when none
	query      url.Values    // extra query parameters; nil when none
	into       *Response     // WithResponseInto
	prefetch   int           // pages List keeps in flight; 0 = one page at a time
	// auth returns the Authorization header of a WithAPIKey; nil: the
	// Client's. The key lives only in this closure, as the Client's does.
	auth   func() []string
	tenant string      // the WithAPIKey key, to find its pause; "" for the Client's
	pause  *pauseState // the pause after a 429 of the call's key
	err    error       // the first invalid option
}

func (cfg *callConfig) fail(format string, args ...any) {
	if cfg.err == nil {
		cfg.err = invalidOption(format, args...)
	}
}

// invalidOption returns an error matching ErrInvalidOption.
func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
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
		case !validHeaderName(key):
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

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 || c == 0x7f {
			return false
		}
	}
	return true
}

// WithRequestTimeout sets the deadline of each attempt of this call,
// overriding the Client's WithTimeout. It covers connecting, the response
// headers and, for JSON responses, the whole body; for a PDF it bounds the
// wait for the headers and then each wait for more of the body. The
// context's deadline, if sooner, still applies. d must be positive.
func WithRequestTimeout(d time.Duration) RequestOption {
	return func(cfg *callConfig) {
		if d <= 0 {
			cfg.fail("request timeout %v is not positive", d)
			return
		}
		cfg.timeout = d
	}
}

// WithRetries sets how many times this call may be repeated after its
// first try, overriding the Client's WithMaxRetries; 0 means no retries.
// Which failures are retried does not change (see WithIdempotentRetry).
func WithRetries(n int) RequestOption {
	return func(cfg *callConfig) {
		if n < 0 {
			cfg.fail("retries %d is negative", n)
			return
		}
		cfg.retries = n
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
// others. (Were the service's limit shared, each key would meet its own 429
// once and pause too.) WithRateLimit, the Client's own budget, counts the
// calls of every key.
func WithAPIKey(key string) RequestOption {
	key, err := checkKey(key)
	return func(cfg *callConfig) {
		if err != nil {
			cfg.fail("WithAPIKey: %s", strings.TrimPrefix(err.Error(), "invoicing: "))
			return
		}
		cfg.auth = bearer("Bearer " + key)
		cfg.tenant = key
	}
}

// WithPrefetch makes List fetch up to n pages ahead while the caller ranges
// over the current one (1 <= n <= MaxPrefetch). Any other method given it
// fails with ErrInvalidOption: it fetches one response.
// Records still come out once each and in the service's order, and at most
// n+1 pages are held in memory. See List in the package documentation for
// how the pages ahead are chosen. A Client made without WithHTTPClient keeps
// up to MaxPrefetch idle connections to the service, so the n connections
// are reused from one round of pages to the next; with your own
// http.Client, give its Transport a MaxIdleConnsPerHost of at least n
// (net/http's default of 2 dials most of them again for every round).
func WithPrefetch(n int) RequestOption {
	return func(cfg *callConfig) {
		if n < 1 || n > MaxPrefetch {
			cfg.fail("prefetch %d is outside 1..%d", n, MaxPrefetch)
			return
		}
		cfg.prefetch = n
	}
}

// config returns the settings of a call: the Client's defaults with opts
// applied, or the first invalid option's error.
// list is true for List, the one method WithPrefetch applies to.
func (c *Client) config(opts []RequestOption, list bool) (callConfig, error) {
	cfg := c.defaults
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.prefetch > 0 && !list && cfg.err == nil {
		cfg.fail("WithPrefetch applies to List only; this call fetches one response")
	}
	cfg.pause = &c.pause
	if cfg.tenant != "" {
		cfg.pause = c.tenantPause(cfg.tenant)
		cfg.tenant = "" // the closure in auth keeps the key; the call's state need not
	}
	return cfg, cfg.err
}
