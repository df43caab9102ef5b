package invoicing

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Default settings of a Client; each has an Option to change it.
const (
	DefaultMaxRetries       = 3
	DefaultRetryWaitMin     = 500 * time.Millisecond
	DefaultRetryWaitMax     = 30 * time.Second
	DefaultMaxResponseBytes = 32 << 20
)

// Client talks to the Invoicing Service External API. It is safe for
// concurrent use; create one and reuse it.
type Client struct {
	Invoices *InvoiceService
	Items    *ItemService
	Quotes   *QuoteService

	// The services below cover API.md section 4.5, whose fields and
	// parameters API.md does not show: their records keep the raw JSON and
	// their params accept Extra fields.
	Clients          *ClientService
	Suppliers        *SupplierService
	Bills            *BillService
	Accounts         *AccountService
	TaxCodes         *TaxCodeService
	Reports          *ReportService
	BankAccounts     *BankAccountService
	BankTransactions *BankTransactionService

	base     string   // base URL without a trailing slash, e.g. https://host/api/v1/external
	auth     []string // {"Bearer <key>"}: shared, never mutated
	ua       []string
	rc       *retryablehttp.Client
	hc       *http.Client
	log      *slog.Logger
	maxBody  int
	waitMax  time.Duration
	now      func() time.Time
	bufs     sync.Pool // *[]byte response buffers
	services service
}

type service struct{ c *Client }

type options struct {
	hc           *http.Client
	maxRetries   int
	waitMin      time.Duration
	waitMax      time.Duration
	userAgent    string
	log          *slog.Logger
	insecureHTTP bool
	maxBody      int
}

// Option configures a Client in NewClient.
type Option func(*options)

// WithHTTPClient makes the Client send requests through hc (its Transport,
// its redirect policy, its Timeout). The default client refuses redirects to
// plain http on a non-loopback host (see WithInsecureHTTP); hc's own
// CheckRedirect is used as it is. The Client closes hc's idle connections
// when a retry wait is cut short by the context or retries give up. By default
// each Client has its own http.Client with a clone of http.DefaultTransport.
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.hc = hc } }

// WithMaxRetries sets how many times a request may be repeated after the
// first try (0 disables retries). Default DefaultMaxRetries.
func WithMaxRetries(n int) Option { return func(o *options) { o.maxRetries = n } }

// WithRetryWait sets the bounds of the wait between tries. Backoff grows from
// min towards max with jitter. A 429 or 503 whose Retry-After asks for more than
// max is not retried: the caller gets the *Error at once, with RetryAfter set.
// Defaults DefaultRetryWaitMin and DefaultRetryWaitMax.
func WithRetryWait(min, max time.Duration) Option {
	return func(o *options) { o.waitMin, o.waitMax = min, max }
}

// WithUserAgent appends part (e.g. "myapp/1.2") to the SDK's User-Agent.
func WithUserAgent(part string) Option { return func(o *options) { o.userAgent = part } }

// WithLogger logs each attempt (method, path, attempt, status, duration) at
// Debug level and retries at Info level. Headers are never logged, so the API
// key cannot leak. By default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithInsecureHTTP allows a plain http:// base URL on a host that is not
// loopback, which sends the API key in clear text. Loopback hosts (localhost,
// 127.0.0.0/8, ::1) are always allowed.
func WithInsecureHTTP() Option { return func(o *options) { o.insecureHTTP = true } }

// WithMaxResponseBytes caps how many bytes of a JSON response are read; a
// larger body fails with ErrResponseTooLarge. PDFs are streamed and not
// capped. Default DefaultMaxResponseBytes (32 MiB).
func WithMaxResponseBytes(n int) Option { return func(o *options) { o.maxBody = n } }

// NewClient returns a Client for the API at baseURL, which must be absolute
// and include the path prefix (e.g. https://host/api/v1/external), using
// apiKey as the Bearer token. It fails for an empty key, a base URL that is
// not absolute http(s), plain http to a non-loopback host (see
// WithInsecureHTTP), and out-of-range options.
func NewClient(baseURL, apiKey string, opts ...Option) (*Client, error) {
	o := options{
		maxRetries: DefaultMaxRetries,
		waitMin:    DefaultRetryWaitMin,
		waitMax:    DefaultRetryWaitMax,
		maxBody:    DefaultMaxResponseBytes,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkKey(apiKey); err != nil {
		return nil, err
	}
	base, err := checkBaseURL(baseURL, o.insecureHTTP)
	if err != nil {
		return nil, err
	}
	switch {
	case o.maxRetries < 0:
		return nil, errors.New("invoicing: max retries must not be negative")
	case o.waitMin < 0 || o.waitMax < o.waitMin:
		return nil, errors.New("invoicing: retry wait bounds must satisfy 0 <= min <= max")
	case o.maxBody <= 0:
		return nil, errors.New("invoicing: max response bytes must be positive")
	case strings.ContainsAny(o.userAgent, "\r\n"):
		return nil, errors.New("invoicing: user agent must not contain line breaks")
	}
	hc := o.hc
	if hc == nil {
		hc = &http.Client{
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: redirectPolicy(o.insecureHTTP),
		}
	}
	ua := "invoicing-go/" + Version + " (" + runtime.Version() + ")"
	if o.userAgent != "" {
		ua += " " + o.userAgent
	}
	c := &Client{
		base:    base,
		auth:    []string{"Bearer " + apiKey},
		ua:      []string{ua},
		hc:      hc,
		log:     o.log,
		maxBody: o.maxBody,
		waitMax: o.waitMax,
		now:     time.Now,
	}
	c.rc = &retryablehttp.Client{
		HTTPClient:   hc,
		Logger:       nil, // retryablehttp would otherwise print to stderr
		RetryWaitMin: o.waitMin,
		RetryWaitMax: o.waitMax,
		RetryMax:     o.maxRetries,
		CheckRetry:   c.checkRetry,
		Backoff:      c.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // keep the last response
	}
	if c.log != nil {
		c.rc.RequestLogHook = c.logAttempt
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
// client's http.Client (see http.Client.CloseIdleConnections), e.g. when the
// Client is no longer needed. The Client stays usable.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// BaseURL returns the base URL requests are sent to, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// String describes the client without its API key.
func (c *Client) String() string { return "invoicing.Client{" + c.base + "}" }

// GoString describes the client without its API key, for %#v.
func (c *Client) GoString() string { return c.String() }

func checkKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return errors.New("invoicing: the API key is empty")
	}
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x21 || b == 0x7f {
			return errors.New("invoicing: the API key contains whitespace or control characters")
		}
	}
	return nil
}

func checkBaseURL(raw string, insecure bool) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("invoicing: invalid base URL: %w", err)
	}
	switch {
	case !u.IsAbs() || u.Host == "":
		return "", fmt.Errorf("invoicing: base URL %q is not absolute (want https://host/api/v1/external)", raw)
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

// redirectPolicy is the default client's CheckRedirect: at most 10
// redirects, and none to plain http on a non-loopback host unless insecure
// is set. (net/http already drops the Authorization header on a redirect to
// another host, but keeps it on an https-to-http redirect to the same one.)
func redirectPolicy(insecure bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("invoicing: stopped after 10 redirects")
		}
		if req.URL.Scheme != "https" && !insecure && !isLoopback(req.URL.Hostname()) {
			return errInsecureRedirect
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

func (c *Client) logAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	c.log.LogAttrs(req.Context(), slog.LevelDebug, "invoicing: request",
		slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.Int("attempt", attempt+1))
}
