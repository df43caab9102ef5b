package invoicing

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"
)

// Client talks to the Invoicing Service External API. It is safe for
// concurrent use; create one and reuse it.
type Client struct {
	Invoices *InvoiceService
	Items    *ItemService
	Quotes   *QuoteService

	// The services below cover resources the service documents only in
	// outline (see the package documentation).
	Clients          *ClientService
	Suppliers        *SupplierService
	Bills            *BillService
	Accounts         *AccountService
	TaxCodes         *TaxCodeService
	Reports          *ReportService
	BankAccounts     *BankAccountService
	BankTransactions *BankTransactionService

	base string // without a trailing slash, e.g. https://host/api/v1/external
	// auth returns the Authorization header. The key lives only in this
	// closure: fmt prints a func as its address under every verb, so no
	// print of a Client (%#v included) shows it.
	auth func() []string
	ua   []string
	// hc is the caller's http.Client (or a default one) with the SDK's
	// redirect rule; next is the transport under it, which send reaches
	// through the middleware.
	hc   *http.Client
	next http.RoundTripper
	send func(*http.Request) (*http.Response, error)
	settings
	pauses pauses
	bufs   sync.Pool // *[]byte response buffers
	common service
}

// settings are the Client's policy, set by Options.
type settings struct {
	timeout          time.Duration
	maxRetries       int
	waitMin, waitMax time.Duration
	maxBody          int
	limiter          *rate.Limiter
	log              *slog.Logger
	userAgent        string
	insecure         bool
	hc               *http.Client
	middleware       []Middleware
	err              error
}

type service struct{ c *Client }

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
	s := settings{timeout: time.Minute, maxRetries: 3, waitMin: 500 * time.Millisecond, waitMax: 30 * time.Second, maxBody: 32 << 20}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	baseURL, apiKey, err := fromEnvironment(baseURL, apiKey)
	if err != nil {
		return nil, err
	}
	if apiKey, err = checkKey(apiKey); err != nil {
		return nil, err
	}
	base, err := checkBaseURL(baseURL, s.insecure)
	if err != nil {
		return nil, err
	}
	ua := "invoicing-go/" + Version + " (" + runtime.Version() + ")"
	if s.userAgent != "" {
		ua += " " + s.userAgent
	}
	c := &Client{base: base, auth: bearer(apiKey), ua: []string{ua}, settings: s}
	c.hc, c.next = httpClient(s.hc, s.insecure)
	c.send = c.next.RoundTrip
	for i := len(s.middleware) - 1; i >= 0; i-- {
		mw, next := s.middleware[i], c.send
		c.send = func(req *http.Request) (*http.Response, error) { return mw(req, next) }
	}
	c.common.c = c
	c.Invoices = (*InvoiceService)(&c.common)
	c.Items = (*ItemService)(&c.common)
	c.Quotes = (*QuoteService)(&c.common)
	c.Clients = (*ClientService)(&c.common)
	c.Suppliers = (*SupplierService)(&c.common)
	c.Bills = (*BillService)(&c.common)
	c.Accounts = (*AccountService)(&c.common)
	c.TaxCodes = (*TaxCodeService)(&c.common)
	c.Reports = (*ReportService)(&c.common)
	c.BankAccounts = (*BankAccountService)(&c.common)
	c.BankTransactions = (*BankTransactionService)(&c.common)
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

// String describes the client without its API key: fmt prints a Client so
// under %v and %s.
func (c *Client) String() string { return "invoicing.Client{" + c.base + "}" }

// bearer returns the Authorization header for key, in a closure.
func bearer(key string) func() []string {
	h := []string{"Bearer " + key}
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
	for _, r := range key {
		if r <= ' ' || unicode.IsSpace(r) || unicode.IsControl(r) { // C0, C1, DEL, and non-ASCII spaces too
			return "", errors.New("invoicing: the API key contains whitespace or control characters")
		}
	}
	return key, nil
}

func checkBaseURL(raw string, insecure bool) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("invoicing: base URL %q %s (want https://host/api/v1/external, or http:// for a server on this machine)", raw, why)
	}
	if !strings.Contains(raw, "://") {
		return "", bad("has no scheme")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", bad("is not a valid URL")
	case !u.IsAbs() || u.Host == "":
		return "", bad("is not absolute")
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

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
