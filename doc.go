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
// the call), WithQuery and, for List, WithPrefetch. They win over the
// Client's defaults, set with Option values in NewClient. Client.Do calls
// any endpoint the SDK has no method for, through the same pipeline.
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
// meanwhile: every such record keeps the complete JSON the service sent
// (see RawObject: Raw, Get, Has, Decode, and MismatchedFields for a field
// that came with another JSON type and was left zero), every params type
// takes Extra body fields or query values, WithQuery adds a query parameter
// to any call, and Client.Do reaches any endpoint.
//
// Package webhooks verifies and parses the service's webhook deliveries, and
// package invoicingtest is an in-memory server to try the SDK and to test
// code that uses it.
package invoicing

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"
