package invoicing

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"
)

// Default settings of a Client; each has an Option to change it.
const (
	DefaultMaxRetries       = 3
	DefaultRetryWaitMin     = 500 * time.Millisecond
	DefaultRetryWaitMax     = 30 * time.Second
	DefaultMaxResponseBytes = 32 << 20
	// DefaultTimeout is the deadline of each attempt (see WithTimeout).
	DefaultTimeout = 60 * time.Second
)

// Client talks to the Invoicing Service External API. It is safe for
// concurrent use; create one and reuse it.
type Client struct {
	Invoices *InvoiceService
	Items    *ItemService
	Quotes   *QuoteService

	// The services below cover resources the service documents only in
	// outline: their records decode leniently and keep every member the
	// SDK has no field for in Extra, and their params accept Extra fields.
	Clients          *ClientService
	Suppliers        *SupplierService
	Bills            *BillService
	Accounts         *AccountService
	TaxCodes         *TaxCodeService
	Reports          *ReportService
	BankAccounts     *BankAccountService
	BankTransactions *BankTransactionService

	base string // base URL without a trailing slash, e.g. https://host/api/v1/external
	// authorization returns the Authorization header value. The key lives
	// only in this closure: fmt prints a func as its address under every
	// verb, so no print of a Client, a service or a Client value shows it.
	authorization func() []string
	ua            []string
	rc            *retryablehttp.Client
	// hc is the caller's http.Client (or a default one) as the SDK uses
	// it: the SDK's redirect rule before the caller's, and attemptTransport
	// in front of the caller's transport, next.
	hc   *http.Client
	next http.RoundTripper
	// first sends a request through the middleware to exchange.
	first            func(*http.Request) (*http.Response, error)
	log              *slog.Logger
	maxBody          int
	waitMin, waitMax time.Duration
	defaults         callConfig // per-call settings unless a RequestOption says otherwise
	limiter          *rate.Limiter
	// pause is the Client's key's pause after a 429; tenants holds the
	// pause of each key given with WithAPIKey, by the key's SHA-256 (so the
	// Client keeps no tenant's key beyond its call).
	pause    pauseState
	tenants  sync.Map // [sha256.Size]byte → *pauseState
	clk      clock
	bufs     sync.Pool // *[]byte response buffers
	services service
}

type service struct{ c *Client }

type options struct {
	hc           *http.Client
	maxRetries   int
	waitMin      time.Duration
	waitMax      time.Duration
	timeout      time.Duration
	userAgent    string
	log          *slog.Logger
	insecureHTTP bool
	maxBody      int
	middleware   []Middleware
	limiter      *rate.Limiter
	clk          clock // tests only (see export_test.go)
	err          error
}

// Option configures a Client in NewClient.
type Option func(*options)

// WithHTTPClient makes the Client send requests through hc: its Transport,
// Jar, Timeout and redirect policy. The SDK's own rule still applies on top
// of hc's CheckRedirect (which runs after it): no redirect to plain http on
// a non-loopback host, where the API key would travel in clear text (see
// WithInsecureHTTP). hc itself is not modified. By default each Client has
// its own http.Client with a clone of http.DefaultTransport that keeps up to
// MaxPrefetch idle connections to the service (instead of 2).
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.hc = hc } }

// WithMaxRetries sets how many times a request may be repeated after the
// first try (0 disables retries). Default DefaultMaxRetries; WithRetries
// overrides it for one call.
func WithMaxRetries(n int) Option { return func(o *options) { o.maxRetries = n } }

// WithTimeout sets the deadline of each attempt of every call (default
// DefaultTimeout), so that no call waits forever on a server that stops
// answering, even with a context that has no deadline. It covers
// connecting, the response headers and, for JSON responses, the whole body;
// for PDFs, which stream, it bounds the wait for the headers and then each
// wait for more of the body. An attempt that runs out is a network error:
// retried where retrying is safe. WithRequestTimeout overrides it for one
// call; the context's deadline, if sooner, still applies. d must be positive.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithMiddleware adds middleware that sees every attempt of every call, in
// the order given (the first is the outermost). See Middleware.
func WithMiddleware(mw ...Middleware) Option {
	return func(o *options) { o.middleware = append(o.middleware, mw...) }
}

// WithRateLimit keeps the Client under perSecond requests a second on
// average, with bursts of up to burst requests, by making requests wait
// before they are sent (each attempt counts), so that a bulk job stays
// under the service's limit instead of bouncing off it. Waits end with the
// call's context. perSecond must be positive and burst at least 1. Without
// it the Client sends as fast as it is asked to, pausing only after a 429.
func WithRateLimit(perSecond float64, burst int) Option {
	return func(o *options) {
		if !(perSecond > 0) || burst < 1 {
			o.fail("rate limit %v/s with burst %d: want a positive rate and a burst of at least 1", perSecond, burst)
			return
		}
		o.limiter = rate.NewLimiter(rate.Limit(perSecond), burst)
	}
}

func (o *options) fail(format string, args ...any) {
	if o.err == nil {
		o.err = invalidOption(format, args...)
	}
}

// WithRetryWait sets the bounds of the wait between tries. Backoff grows from
// min towards max with jitter. A 429 or 503 whose Retry-After asks for more than
// max is not retried: the caller gets the *Error at once, with RetryAfter set.
// Defaults DefaultRetryWaitMin and DefaultRetryWaitMax.
func WithRetryWait(min, max time.Duration) Option {
	return func(o *options) { o.waitMin, o.waitMax = min, max }
}

// WithUserAgent appends part (e.g. "myapp/1.2") to the SDK's User-Agent.
func WithUserAgent(part string) Option { return func(o *options) { o.userAgent = part } }

// WithLogger logs each attempt (route template such as "GET
// /invoices/{id}", attempt number, status or error, duration) and each
// call's outcome at Debug level, and retries at Info level. Headers and
// bodies are never logged, so the API key cannot leak. By default nothing
// is logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithInsecureHTTP allows a plain http:// base URL on a host that is not
// loopback, which sends the API key in clear text. Loopback hosts (localhost,
// 127.0.0.0/8, ::1) are always allowed.
func WithInsecureHTTP() Option { return func(o *options) { o.insecureHTTP = true } }

// WithMaxResponseBytes caps how many bytes of a JSON response are read; a
// larger body fails with ErrResponseTooLarge. PDFs are streamed and not
// capped. Default DefaultMaxResponseBytes (32 MiB).
func WithMaxResponseBytes(n int) Option { return func(o *options) { o.maxBody = n } }

// Environment variables NewClient reads when given an empty base URL or API
// key. The command-line tool and the examples follow the same rule.
const (
	EnvBaseURL = "INVOICING_BASE_URL"
	EnvAPIKey  = "INVOICING_API_KEY"
)

// NewClient returns a Client for the API at baseURL, which must be absolute
// and include the path prefix (e.g. https://host/api/v1/external), using
// apiKey as the Bearer token.
//
// An empty baseURL or apiKey is read from the environment variable
// INVOICING_BASE_URL or INVOICING_API_KEY (EnvBaseURL, EnvAPIKey), so that
//
//	c, err := invoicing.NewClient("", "")
//
// configures a program from its environment; when a value is in neither
// place, the error names the variable. Whitespace around the key (a newline
// read from a file, say) is trimmed; give the key alone, without the
// "Bearer " prefix the SDK adds.
//
// It fails for a missing key or base URL, a key holding whitespace or
// control characters, a base URL that is not absolute http(s), plain http
// to a non-loopback host (see WithInsecureHTTP), and options out of range
// (ErrInvalidOption). Errors never show the key.
func NewClient(baseURL, apiKey string, opts ...Option) (*Client, error) {
	o := options{
		maxRetries: DefaultMaxRetries,
		waitMin:    DefaultRetryWaitMin,
		waitMax:    DefaultRetryWaitMax,
		timeout:    DefaultTimeout,
		maxBody:    DefaultMaxResponseBytes,
	}
	for _, opt := range opts {
		opt(&o)
	}
	baseURL, apiKey, err := fromEnvironment(baseURL, apiKey)
	if err != nil {
		return nil, err
	}
	apiKey, err = checkKey(apiKey)
	if err != nil {
		return nil, err
	}
	base, err := checkBaseURL(baseURL, o.insecureHTTP)
	if err != nil {
		return nil, err
	}
	switch {
	case o.err != nil:
		return nil, o.err
	case o.maxRetries < 0:
		return nil, invalidOption("max retries must not be negative")
	case o.waitMin < 0 || o.waitMax < o.waitMin:
		return nil, invalidOption("retry wait bounds must satisfy 0 <= min <= max")
	case o.timeout <= 0:
		return nil, invalidOption("timeout %v is not positive", o.timeout)
	case o.maxBody <= 0:
		return nil, invalidOption("max response bytes must be positive")
	case strings.ContainsAny(o.userAgent, "\r\n"):
		return nil, invalidOption("user agent must not contain line breaks")
	}
	for _, mw := range o.middleware {
		if mw == nil {
			return nil, invalidOption("nil middleware")
		}
	}
	ua := "invoicing-go/" + Version + " (" + runtime.Version() + ")"
	if o.userAgent != "" {
		ua += " " + o.userAgent
	}
	c := &Client{
		base:          base,
		authorization: bearer("Bearer " + apiKey),
		ua:            []string{ua},
		log:           o.log,
		maxBody:       o.maxBody,
		waitMin:       o.waitMin,
		waitMax:       o.waitMax,
		defaults:      callConfig{timeout: o.timeout, retries: o.maxRetries},
		limiter:       o.limiter,
		clk:           o.clk,
	}
	if c.clk == nil {
		c.clk = systemClock{}
	}
	c.hc, c.next = sdkHTTPClient(o.hc, o.insecureHTTP, c)
	c.first = c.exchange
	for i := len(o.middleware) - 1; i >= 0; i-- {
		mw, next := o.middleware[i], c.first
		c.first = func(req *http.Request) (*http.Response, error) { return mw(req, next) }
	}
	c.rc = &retryablehttp.Client{
		HTTPClient: c.hc,
		Logger:     nil, // retryablehttp would otherwise print to stderr
		// checkRetry enforces each call's retry budget and computes its
		// wait, which the gate of attemptTransport then waits (on the
		// Client's clock): retryablehttp itself never sleeps.
		RetryMax:     math.MaxInt32,
		CheckRetry:   c.checkRetry,
		Backoff:      func(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 },
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // keep the last response
	}
	c.services.c = c
	c.Invoices = (*InvoiceService)(&c.services)
	c.Items = (*ItemService)(&c.services)
	c.Quotes = (*QuoteService)(&c.services)
	c.Clients = (*ClientService)(&c.services)
	c.Suppliers = (*SupplierService)(&c.services)
	c.Bills = (*BillService)(&c.services)
	c.Accounts = (*AccountService)(&c.services)
	c.TaxCodes = (*TaxCodeService)(&c.services)
	c.Reports = (*ReportService)(&c.services)
	c.BankAccounts = (*BankAccountService)(&c.services)
	c.BankTransactions = (*BankTransactionService)(&c.services)
	return c, nil
}

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport (see http.Client.CloseIdleConnections), e.g. when the
// Client is no longer needed. The Client stays usable.
func (c *Client) CloseIdleConnections() {
	if ci, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// BaseURL returns the base URL requests are sent to, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// String describes the client without its API key.
func (c *Client) String() string { return "invoicing.Client{" + c.base + "}" }

// GoString describes the client without its API key, for %#v.
func (c *Client) GoString() string { return c.String() }

// Format prints the client as String does under every verb (%v, %+v, %s,
// %q, %d, ...), so that no format can print its API key.
func (c *Client) Format(f fmt.State, _ rune) { io.WriteString(f, c.String()) }

// bearer returns the authorization func for the header value v: a shared
// slice, never mutated.
func bearer(v string) func() []string {
	h := []string{v}
	return func() []string { return h }
}

// fromEnvironment fills an empty base URL or key from EnvBaseURL and
// EnvAPIKey, and names what is still missing.
func fromEnvironment(baseURL, apiKey string) (string, string, error) {
	if strings.TrimSpace(baseURL) == "" {
		baseURL = os.Getenv(EnvBaseURL)
	}
	if strings.TrimSpace(apiKey) == "" {
		apiKey = os.Getenv(EnvAPIKey)
	}
	var missing []string
	if strings.TrimSpace(baseURL) == "" {
		missing = append(missing, "a base URL (or "+EnvBaseURL+")")
	}
	if strings.TrimSpace(apiKey) == "" {
		missing = append(missing, "an API key (or "+EnvAPIKey+")")
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("invoicing: NewClient needs %s", strings.Join(missing, " and "))
	}
	return strings.TrimSpace(baseURL), apiKey, nil
}

// checkKey returns the key without surrounding whitespace, or an error that
// says what is wrong with it without showing it.
func checkKey(key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("invoicing: the API key is empty")
	}
	if len(key) > 7 && strings.EqualFold(key[:7], "bearer ") {
		return "", errors.New(`invoicing: the API key starts with "Bearer ": omit the Bearer prefix, the SDK adds it`)
	}
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x21 || b == 0x7f {
			return "", errors.New("invoicing: the API key contains whitespace or control characters")
		}
	}
	return key, nil
}

// errBaseURL says what a base URL must look like.
func errBaseURL(raw, why string) error {
	return fmt.Errorf("invoicing: base URL %q %s (want https://host/api/v1/external, or http:// for a server on this machine)", raw, why)
}

func checkBaseURL(raw string, insecure bool) (string, error) {
	if !strings.Contains(raw, "://") {
		return "", errBaseURL(raw, "has no scheme")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", errBaseURL(raw, "is not a valid URL")
	}
	switch {
	case !u.IsAbs() || u.Host == "":
		return "", errBaseURL(raw, "is not absolute")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", fmt.Errorf("invoicing: base URL scheme %q is not http or https", u.Scheme)
	case u.User != nil:
		return "", errors.New("invoicing: base URL must not contain credentials")
	case u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("invoicing: base URL must not have a query or fragment")
	case u.Scheme == "http" && !insecure && !isLoopback(u.Hostname()):
		return "", fmt.Errorf("invoicing: refusing to send the API key over plain http to %s (use https, or WithInsecureHTTP)", u.Host)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// errInsecureRedirect stops a redirect that would downgrade to plain http.
var errInsecureRedirect = errors.New("invoicing: refusing to follow a redirect to plain http (the API key would travel in clear text)")

// sdkHTTPClient returns the http.Client the SDK sends through and the
// transport under it. With no hc, that is a new client over
// defaultTransport(); otherwise a copy of hc (sharing its Transport,
// Jar and Timeout; hc itself is not modified). Either way its redirect
// policy is the SDK's rule followed by hc's own, and its Transport is
// attemptTransport in front of the real one.
func sdkHTTPClient(hc *http.Client, insecure bool, c *Client) (*http.Client, http.RoundTripper) {
	var cp http.Client
	var next http.RoundTripper = defaultTransport()
	if hc != nil {
		cp = *hc
		if hc.Transport != nil {
			next = hc.Transport
		} else {
			next = http.DefaultTransport // what hc would use
		}
	}
	cp.CheckRedirect = redirectPolicy(insecure, cp.CheckRedirect)
	cp.Transport = attemptTransport{c}
	return &cp, next
}

// defaultTransport is the transport of a Client made without
// WithHTTPClient: a clone of http.DefaultTransport that keeps up to
// MaxPrefetch idle connections to the service instead of 2, so that a List
// with WithPrefetch, or as many goroutines sharing the Client, reuse their
// connections (and TLS sessions) from one round of requests to the next
// instead of dialling most of them again.
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxPrefetch
	return t
}

// redirectPolicy is the SDK's CheckRedirect: no redirect to plain http on a
// non-loopback host unless insecure is set, then next (the caller's
// policy), or net/http's default of at most 10 redirects when next is nil.
// (net/http already drops the Authorization header on a redirect to another
// host, but keeps it on an https-to-http redirect to the same one.)
func redirectPolicy(insecure bool, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" && !insecure && !isLoopback(req.URL.Hostname()) {
			return errInsecureRedirect
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("invoicing: stopped after 10 redirects")
		}
		return nil
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
