// Package invoicing is a typed client for the Invoicing Service External API.
//
// Create a Client with NewClient, then call the services hanging off it:
//
//	c, err := invoicing.NewClient("https://example.invalid/api/v1/external", apiKey)
//	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(inv.InvoiceNumber, inv.AmountDue.StringFixed(2))
//	}
//
// Money and quantities are decimal.Decimal values, exact in both directions
// (format them with StringFixed(2): String drops trailing zeros); dates are
// civil Date values; ids are strings; statuses are string enums that keep
// values the SDK does not know yet.
//
// # Options
//
// There are three kinds of option, each with its own type, so that the
// compiler refuses an option where it means nothing:
//
//   - an Option configures the Client in NewClient: its http.Client, the
//     deadline of each attempt (WithTimeout), its retry policy
//     (WithMaxRetries, WithRetryWait), its rate limit, middleware, logger,
//     User-Agent and response cap;
//   - a RequestOption describes one call, and every method takes any
//     number of them last: WithHeader, WithQuery, WithAPIKey (another
//     business's key, for one Client serving many), WithIdempotentRetry and
//     WithResponseInto (status, headers, request id, attempts and duration);
//   - a ListOption changes a List: any RequestOption, or WithPrefetch.
//
// No setting has two names: the Client's policy is set once, on the Client
// (a second Client with other options is cheap, and shares nothing), and a
// call's own deadline is its context's. NewClient reads INVOICING_BASE_URL
// and INVOICING_API_KEY when given empty strings. Client.Do calls any
// endpoint the SDK has no method for, the way every method calls its own.
//
// Nothing waits forever: each attempt has a deadline (WithTimeout, default
// one minute) covering the connection, the headers and a JSON body in full;
// a PDF streams, with a deadline on each wait for more of it.
//
// # Lists
//
// List returns an iterator that fetches pages of 100 lazily as you range
// over it; break stops fetching. WithPrefetch(n) fetches up to n pages ahead
// while you consume the current one, still yielding each record once and in
// order. A list always ends: a service that ignores the page asked for,
// repeats a page, claims more records than its total or sends more records
// than the page size ends it with an error matching ErrInconsistentList.
// ListPage fetches one page for callers who want page control; Collect and
// First gather a List's records.
//
// # Errors and retries
//
// Every non-2xx response becomes an *Error that works with errors.Is against
// the sentinels (ErrNotFound, ErrConflict, ErrRateLimited, ...) and carries
// the service's detail and the Response. A request that cannot succeed is
// refused before sending with a *ParamError. A 429 is retried after the
// Retry-After the service asks for, and every other call made with the same
// API key waits that long before sending too (WithRateLimit keeps a bulk job
// under the limit in the first place); server errors and network failures
// are retried only where repeating is safe: GETs, invoice creates carrying
// their idempotency Reference, and calls given WithIdempotentRetry.
//
// WithMiddleware sees every attempt, for tracing and metrics; Route names a
// request's route template ("GET /invoices/{id}") without the raw ids.
// WithLogger logs through log/slog. The API key is never logged, printed or
// put in an error.
//
// # Resources documented in outline
//
// The service documents invoices, catalog items and quotes field by field.
// It documents clients, suppliers, bills, accounts, tax codes, reports and
// bank data only in outline: their endpoints, not their fields or
// parameters. For those resources the SDK's typed fields follow the names
// the service uses elsewhere (its webhook payloads and documented
// resources) and may change in a minor release. Nothing is out of reach
// meanwhile: their records decode leniently (a member whose value does not
// fit its typed field leaves the field zero, is named by MismatchedFields
// and is kept in Extra, and the decode goes on; Has tells an absent member
// from a zero one), every params type takes Extra body members or query
// values, WithQuery adds a query parameter to any call, and Client.Do
// reaches any endpoint.
//
// # JSON
//
// Every record (Invoice, Item, Quote and their lines, the outline records,
// the webhook events) keeps in its Extra field the members the SDK has no
// field for, so that a field the service adds is readable at once
// (inv.Extra.Get("purchase_order", &po)). A record marshals back, with
// encoding/json or encoding/json/v2, to exactly what it was decoded from:
// the same members (none added for an absent field), the same values, each
// written as it came (money sent as a JSON string stays a string, a null
// stays null), then Extra's members in name order. A record built in code
// writes all its fields, money as exact JSON numbers, leaving out only the
// empty optional fields of a request. A decoded record remembers what it
// needs for that in an unexported field; one decoded from the JSON it would
// write itself holds nothing there, and is reflect.DeepEqual to the
// same record built in code.
//
// Records decode as encoding/json (v1) does in what a response can hold: a
// name given twice in one object is accepted and the last member wins;
// invalid UTF-8 in a string becomes U+FFFD; datetimes parse as time.Time's
// UnmarshalJSON parses them; money decodes exactly from a JSON number or a
// string holding one. Names match exactly, as the API spells them: a member
// whose name differs from a field's only in case is kept in Extra. A
// decoded record starts afresh; JSON null leaves it unchanged.
//
// Your own types go through encoding/json's rules wherever the SDK reads or
// writes them (Client.Do, Extra.Get, Extra.Decode, the values of a params
// type's Extra), names matched case-insensitively; a decimal.Decimal in
// them is sent as an exact JSON number, as the SDK sends money everywhere.
//
// Package webhooks verifies and parses the service's webhook deliveries, and
// package invoicingtest is an in-memory server to try the SDK and to test
// code that uses it.
package invoicing

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"
