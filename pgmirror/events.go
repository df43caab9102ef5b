package pgmirror

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// target is a record an event names: it is to be fetched.
type target struct {
	resource, id string
}

// targets returns the records an event concerns: the invoice for invoice
// and payment events; the quote, and the invoice it was converted into, for
// quote events; the bill for bill events; the client or the supplier for
// contact.created (both, for a contact type the API does not document).
// The event's body is never stored as the record: the record is fetched.
// Test deliveries and event types this package does not know name nothing.
func targets(e webhooks.Event) []target {
	switch e := e.(type) {
	case *webhooks.InvoiceCreated:
		return []target{{Invoices, e.InvoiceID}}
	case *webhooks.InvoiceSent:
		return []target{{Invoices, e.InvoiceID}}
	case *webhooks.InvoiceUpdated:
		return []target{{Invoices, e.InvoiceID}}
	case *webhooks.InvoicePaid:
		return []target{{Invoices, e.InvoiceID}}
	case *webhooks.PaymentReceived:
		return []target{{Invoices, e.InvoiceID}}
	case *webhooks.BillCreated:
		return []target{{Bills, e.BillID}}
	case *webhooks.BillApproved:
		return []target{{Bills, e.BillID}}
	case *webhooks.ContactCreated:
		switch e.ContactType {
		case webhooks.ContactTypeClient:
			return []target{{Clients, e.ContactID}}
		case webhooks.ContactTypeSupplier:
			return []target{{Suppliers, e.ContactID}}
		}
		return []target{{Clients, e.ContactID}, {Suppliers, e.ContactID}}
	case *webhooks.QuoteCreated:
		return []target{{Quotes, e.QuoteID}}
	case *webhooks.QuoteSent:
		return []target{{Quotes, e.QuoteID}}
	case *webhooks.QuoteViewed:
		return []target{{Quotes, e.QuoteID}}
	case *webhooks.QuoteAccepted:
		out := []target{{Quotes, e.QuoteID}}
		if e.InvoiceID != nil && *e.InvoiceID != "" {
			out = append(out, target{Invoices, *e.InvoiceID})
		}
		return out
	case *webhooks.QuoteUnaccepted:
		return []target{{Quotes, e.QuoteID}}
	}
	return nil
}

// requestFetchSQL asks for records ($1 resources, $2 ids) to be fetched
// after the coalescing window ($3) for the business $6, for the delivery
// $4 stored for the business $5 (the inbox's key, whose index the lookup
// uses; "" for Handler's deliveries): the request is dated
// when the Handler received the delivery (the start of the event's lag),
// and due a window later. A record already waiting keeps its
// earliest request and due time and counts one more request, so that a
// fetcher working on it sees that it must fetch it again.
const requestFetchSQL = `INSERT INTO mirror_pending_fetch AS p (business, resource, id, due_at, requested_at)
SELECT $6, u.resource, u.id, r.at + $3::interval, r.at
FROM unnest($1::text[], $2::text[]) AS u(resource, id),
     (SELECT coalesce(min(received_at), now()) AS at FROM ` + pginbox.TableName + ` WHERE business = $5 AND delivery_id = $4) AS r
ORDER BY 1, 2
ON CONFLICT (business, resource, id) DO UPDATE
SET request_seq = p.request_seq + 1, due_at = least(p.due_at, EXCLUDED.due_at),
    requested_at = least(p.requested_at, EXCLUDED.requested_at)`

// enqueue is the pginbox Worker's ProcessTx: it records the fetches the
// delivery's event calls for in the delivery's own transaction, so that the
// delivery is marked processed exactly when its fetches are requested.
func (m *Mirror) enqueue(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
	business := d.Business
	if business == "" { // stored by Handler: the business of Config.Client
		business = m.cfg.Business
	}
	ts := targets(d.Event)
	if len(ts) == 0 {
		if _, ok := d.Event.(*webhooks.RawEvent); ok {
			m.log.WarnContext(ctx, "pgmirror: event type unknown to this version; the reconciler will catch its changes",
				"event", string(d.Type), "delivery_id", d.ID)
		}
		return nil
	}
	var resources, ids []string
	for _, t := range ts {
		if t.id == "" {
			m.log.WarnContext(ctx, "pgmirror: event without the id of its record", "event", string(d.Type), "delivery_id", d.ID)
			continue
		}
		resources, ids = append(resources, t.resource), append(ids, t.id)
	}
	if _, err := tx.Exec(ctx, requestFetchSQL, resources, ids, m.cfg.CoalesceWindow, d.ID, d.Business, business); err != nil {
		return fmt.Errorf("pgmirror: requesting fetches for delivery %s: %w", d.ID, err)
	}
	return nil
}
