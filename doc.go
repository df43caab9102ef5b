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
// # Calls
//
// Every method takes a context and, last, any number of RequestOption
// values: WithHeader, WithRequestTimeout, WithRetries, WithIdempotentRetry,
// WithResponseInto (status, headers, request id, attempts and duration of
// the call), WithQuery, WithAPIKey (another business's key, for one Client
// serving many) and, for List only, WithPrefetch. They win over the
// Client's defaults, set with Option values in NewClient (which reads
// INVOICING_BASE_URL and INVOICING_API_KEY when given empty strings).
// Client.Do calls any endpoint the SDK has no method for, through the same
// pipeline.
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
// ListPage fetches one page for callers who want page control.
//
// # Errors and retries
//
// Every non-2xx response becomes an *Error that works with errors.Is against
// the sentinels (ErrNotFound, ErrConflict, ErrRateLimited, ...) and carries
// the service's detail and the Response. A request that cannot succeed is
// refused before sending with a *ParamError. A 429 is retried after the
// Retry-After the service asks for, and every other request of the Client
// waits that long before sending too (WithRateLimit keeps a bulk job under
// the limit in the first place); server errors and network failures are
// retried only where repeating is safe: GETs, invoice creates carrying
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
// Every record, core and outline alike, keeps in its Extra field the
// members the SDK has no field for, so a field the service adds is readable
// at once (inv.Extra.Get("purchase_order", &po)), and a record marshals
// back, with encoding/json or encoding/json/v2, to every member it was
// decoded from, money as exact JSON numbers. Params types send their Extra
// members after the typed fields.
//
// The SDK reads and writes JSON with the encoding/json/v2 API (through
// github.com/go-json-experiment/json, which on Go 1.27 is the standard
// library's implementation); Go 1.26 and 1.27 are supported. Where v2's
// defaults differ from encoding/json (v1), the SDK chooses as follows, and
// accepts every response body it accepted before:
//
//   - Names match exactly, as the API spells them. v1 also matched a member
//     whose name differed only in case ("Invoice_Number"); the SDK keeps
//     such a member in Extra instead, so nothing is lost either way.
//   - A name given twice in one object is accepted, as v1 does (v2 rejects
//     it), and the last member wins. Where v1 merged a later object or
//     array into the earlier value, or ignored a later null, the SDK may
//     not. The service sends no such object, and webhook bodies are
//     verified byte for byte before parsing.
//   - Invalid UTF-8 in a string is accepted and replaced by U+FFFD, as v1
//     does (v2 rejects it): one bad byte in a client's name should not fail
//     a whole page.
//   - Datetimes decode as time.Time's own UnmarshalJSON parses them, as v1
//     does (v2's parser refuses some that v1 accepted).
//   - Money decodes from a JSON number or from a string holding one, as
//     decimal.Decimal always has, exactly; the SDK encodes it as an exact
//     JSON number (decimal.Decimal alone would write a string).
//   - Request bodies omit an optional field when it is unset: an empty
//     string or a nil pointer (omitempty: v2's omitzero would also drop a
//     pointer to a zero decimal, which has an IsZero method), the zero Date
//     (omitzero). A pointer to zero, such as a quantity of 0, is sent.
//   - A nil slice or map in a record encodes as null, as v1 writes it, so a
//     record decoded from null encodes back to null; [] decodes to an empty
//     slice and encodes back to [].
//   - Extra members are encoded in name order (v2 leaves map order
//     unspecified).
//
// Package webhooks verifies and parses the service's webhook deliveries, and
// package invoicingtest is an in-memory server to try the SDK and to test
// code that uses it.
package invoicing

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"
