// Package invoicing is a typed client for the Invoicing Service External API.
//
// Create a Client with NewClient, then call the services hanging off it:
//
//	c, err := invoicing.NewClient("https://example.invalid/api/v1/external", apiKey)
//	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(inv.InvoiceNumber, inv.AmountDue)
//	}
//
// Money and quantities are decimal.Decimal values, exact in both directions;
// dates are civil Date values; statuses are string enums that keep values the
// SDK does not know yet. Every non-2xx response becomes an *Error that works
// with errors.Is against the sentinels (ErrNotFound, ErrConflict, ...).
// Rate-limited requests (429) are retried after the Retry-After the service
// asks for; server errors are retried only where repeating is safe.
//
// The services of clients, suppliers, bills, accounts, tax codes, reports and
// bank data cover endpoints whose fields the API document does not show:
// their typed fields are documented guesses, each record keeps the complete
// JSON object the service sent (see RawObject), and their params take Extra
// query values or body fields.
//
// Package webhooks verifies and parses the service's webhook deliveries, and
// package invoicingtest is an in-memory server to try the SDK and to test
// code that uses it.
package invoicing

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"
