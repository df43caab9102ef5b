package pgmirror

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
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

// enqueue is the pginbox Worker's ProcessTx: it records the fetches the
// delivery's event calls for in the delivery's own transaction, so that the
// delivery is marked processed exactly when its fetches are requested.
func (m *Mirror) enqueue(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
	business := d.Business
	if business == "" { // stored by Handler: the business of Config.Client
		business = m.cfg.Business
	}
	t := m.tenants.named(business)
	if t != nil {
		if err := m.reselected(ctx, m.store.Tx(tx), t, d); err != nil {
			return err
		}
	}
	ts := targets(d.Event)
	if len(ts) == 0 {
		if _, ok := d.Event.(*webhooks.RawEvent); ok {
			m.log.WarnContext(ctx, "pgmirror: event type unknown to this version; the reconciler will catch its changes",
				"event", string(d.Type), "delivery_id", d.ID)
		}
		return nil
	}
	var mirrored []*resource // the business's, when it is served
	if t != nil {
		mirrored = t.resources()
	}
	var resources, ids []string
	for _, t := range ts {
		if mirrored != nil && !slices.Contains(mirrored, resourceNamed(t.resource)) {
			continue // not mirrored for this business
		}
		if t.id == "" {
			m.log.WarnContext(ctx, "pgmirror: event without the id of its record", "event", string(d.Type), "delivery_id", d.ID)
			continue
		}
		resources, ids = append(resources, t.resource), append(ids, t.id)
	}
	if len(ids) == 0 {
		return nil
	}
	return m.store.Tx(tx).RequestFetches(ctx, business, resources, ids, m.cfg.CoalesceWindow, d.ID, d.Business)
}

// reselected checks, in tx (a delivery's), that the business's Selection
// as t applies it is the one recorded, and keeps of the delivery only what
// it keeps (inboxBody): a replica that had not yet seen a Selection
// applied by another may have stored more. Until tx ends, no Selection is
// applied to the business (store.Tx.SelectionApplied). A Selection
// applied since t read it, or being applied, fails the delivery
// (errStaleSelection), which is processed again after its backoff.
func (m *Mirror) reselected(ctx context.Context, tx *store.Tx, t *tenant, d *webhooks.Delivery) error {
	a, err := t.selection(ctx)
	if err != nil {
		return err
	}
	at, ok, err := tx.SelectionApplied(ctx, t.name)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: a delivery of business %s, while another is applied", errStaleSelection, t.name)
	case !at.Equal(a.at):
		t.outdated(at)
		return fmt.Errorf("%w: a delivery of business %s", errStaleSelection, t.name)
	case a.sel == nil:
		return nil
	}
	body, err := a.sel.inboxBody(d)
	if err != nil || bytes.Equal(body, d.Body) {
		return err
	}
	return tx.RewriteDelivery(ctx, d.Business, d.ID, body)
}

// Defaults of the inbox's backpressure, pginbox's: the webhook endpoint
// answers 503 with Retry-After (a minute) while 10,000 deliveries are
// due, or the oldest has waited 5 minutes for a Worker (the lag status
// calls degraded). The Workers turn a delivery into fetches with one
// insert, thousands a second: a backlog that large means they are stuck.
// The service retries a refused delivery for about a day; one it gives up
// on is not lost to the mirror, whose next reconciliation lists its
// record again.
const (
	// DefaultInboxMaxPending is Config.InboxMaxPending's default: 10,000.
	DefaultInboxMaxPending = pginbox.DefaultMaxPending
	// DefaultInboxMaxLag is Config.InboxMaxLag's default: 5 minutes.
	DefaultInboxMaxLag = pginbox.DefaultMaxPendingAge
)

// backpressure is the option of the Handlers' pginbox handler that
// answers 503 while the Workers are behind (Config.InboxMaxPending,
// Config.InboxMaxLag; zero takes pginbox's default, which is the mirror's).
func (m *Mirror) backpressure() pginbox.HandlerOption {
	return pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: m.cfg.InboxMaxPending, MaxPendingAge: m.cfg.InboxMaxLag})
}

// inboxWorker is the pginbox Worker whose ProcessNext the Workers' loops
// step: it turns each stored delivery into requests to fetch.
func (m *Mirror) inboxWorker() *pginbox.Worker {
	return &pginbox.Worker{
		Pool:         m.store.Pool(),
		Metrics:      m.inbox,
		ProcessTx:    m.enqueue,
		PollInterval: m.cfg.PollInterval,
		// Recording a delivery's fetches is one insert: a failure is the
		// database's, worth trying again soon.
		Backoff: func(failures int) time.Duration { return backoff(failures, maxBackoff, nil) },
		Logger:  m.log,
	}
}

// workStep is the step of one Workers' loop: it processes the delivery due
// first, and looks again at once when it found one, else after
// PollInterval. pginbox's errors are the database's: they enter the mirror
// here, as *store.Error.
func workStep(w *pginbox.Worker, poll time.Duration) step {
	return func(ctx context.Context) (time.Duration, error) {
		found, err := w.ProcessNext(ctx)
		switch {
		case err != nil:
			return 0, &store.Error{Op: "processing the webhook inbox", Err: err}
		case !found:
			return jitter(poll), nil
		}
		return 0, nil
	}
}
