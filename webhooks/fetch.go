package webhooks

import (
	"context"
	"fmt"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// FetchInvoice reads the invoice the event names (GET /invoices/{id}).
func (e *InvoiceCreated) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	return c.Invoices.Get(ctx, e.InvoiceID, opts...)
}

// FetchInvoice reads the invoice the event names (GET /invoices/{id}).
func (e *InvoiceSent) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	return c.Invoices.Get(ctx, e.InvoiceID, opts...)
}

// FetchInvoice reads the invoice the event names (GET /invoices/{id}).
func (e *InvoiceUpdated) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	return c.Invoices.Get(ctx, e.InvoiceID, opts...)
}

// FetchInvoice reads the invoice the event names (GET /invoices/{id}).
func (e *InvoicePaid) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	return c.Invoices.Get(ctx, e.InvoiceID, opts...)
}

// FetchInvoice reads the invoice the payment was allocated to (GET
// /invoices/{id}). The API has no endpoint for payments themselves.
func (e *PaymentReceived) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	return c.Invoices.Get(ctx, e.InvoiceID, opts...)
}

// FetchBill reads the bill the event names (GET /bills/{id}).
func (e *BillCreated) FetchBill(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Bill, error) {
	return c.Bills.Get(ctx, e.BillID, opts...)
}

// FetchBill reads the bill the event names (GET /bills/{id}).
func (e *BillApproved) FetchBill(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Bill, error) {
	return c.Bills.Get(ctx, e.BillID, opts...)
}

// FetchContact reads the client (GET /clients/{id}) or the supplier (GET
// /suppliers/{id}) the event names, as its ContactType says. It fails
// without a request for another contact type.
func (e *ContactCreated) FetchContact(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Contact, error) {
	switch e.ContactType {
	case ContactTypeClient:
		return c.Clients.Get(ctx, e.ContactID, opts...)
	case ContactTypeSupplier:
		return c.Suppliers.Get(ctx, e.ContactID, opts...)
	}
	return nil, fmt.Errorf("webhooks: contact %s has contact_type %q, neither %s nor %s", e.ContactID, e.ContactType, ContactTypeClient, ContactTypeSupplier)
}

// FetchQuote reads the quote the event names (GET /quotes/{id}). Every
// quote event has it: QuoteCreated, QuoteSent, QuoteViewed, QuoteAccepted
// and QuoteUnaccepted.
func (q *Quote) FetchQuote(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Quote, error) {
	return c.Quotes.Get(ctx, q.QuoteID, opts...)
}

// FetchInvoice reads the invoice the accepted quote was converted into (GET
// /invoices/{id}). It returns an error wrapping ErrNotConverted, without a
// request, when the conversion failed (InvoiceID is nil).
func (e *QuoteAccepted) FetchInvoice(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (*invoicing.Invoice, error) {
	if e.InvoiceID == nil {
		return nil, fmt.Errorf("%w: quote %s", ErrNotConverted, e.QuoteNumber)
	}
	return c.Invoices.Get(ctx, *e.InvoiceID, opts...)
}
