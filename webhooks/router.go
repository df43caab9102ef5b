package webhooks

import (
	"context"
	"fmt"
	"sync"
)

// A Router calls, for each delivery, the function registered with On for its
// event type, with the event typed: one small function per event type
// instead of one function with a type switch. A delivery whose type has no
// function goes to the Router's fallback, whether the package knows the type
// (a test delivery, an event the receiver does not handle) or not (its Event
// is then a *RawEvent).
//
// Its Handle method is the function that Handler, BusinessHandler,
// invoicingtest's NewReceiver and the stores' workers (pginbox's
// Worker.Process) call with each delivery, so a Router serves over HTTP with
// their options (WithDeduper, WithLogger) unchanged:
//
//	r := webhooks.NewRouter(nil)
//	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error {
//		return orders.MarkPaid(ctx, e.InvoiceID, e.PaidAt)
//	})
//	http.Handle("POST /webhooks", webhooks.Handler(v, r.Handle, webhooks.WithDeduper(deduper)))
//
// Register the functions while setting the program up; a Router is
// nevertheless safe for concurrent use, registering included.
type Router struct {
	fallback func(context.Context, *Delivery) error

	mu       sync.RWMutex
	handlers map[EventType]func(context.Context, *Delivery) error
}

// NewRouter returns a Router without handlers. fallback receives each
// delivery whose event type has no handler; d.Type.Known() tells a type of
// the package (EventTest among them) from an unknown one, whose d.Event is a
// *RawEvent. A nil fallback acknowledges such deliveries without doing
// anything (it returns nil), as a receiver should for events it ignores: an
// error would make the service retry them for a day.
func NewRouter(fallback func(ctx context.Context, d *Delivery) error) *Router {
	if fallback == nil {
		fallback = func(context.Context, *Delivery) error { return nil }
	}
	return &Router{fallback: fallback, handlers: map[EventType]func(context.Context, *Delivery) error{}}
}

// TypedEvent is implemented by the typed events of this package, every
// Event but *RawEvent (*InvoiceCreated, ..., *QuoteUnaccepted, *Test), and
// by no type of another package: the events On can route.
type TypedEvent interface {
	Event
	record
}

// On registers fn as r's function for the event type of E, the one E's
// EventType returns: On[*webhooks.InvoicePaid] (Go infers it from fn) handles
// "invoice.paid", and fn receives each such delivery with its event as a
// *InvoicePaid. The type comes from E, so a function cannot be registered for
// another type than the one it reads.
//
// On panics if r or fn is nil, if E is an interface type (TypedEvent) rather
// than an event's, or when E's event type already has a function:
// registering is part of a program's setup, and, as with http.ServeMux, a
// mistake there is best found when the program starts.
func On[E TypedEvent](r *Router, fn func(ctx context.Context, d *Delivery, e E) error) {
	var zero E // a nil pointer: the EventType methods of typed events read no field
	switch {
	case any(zero) == nil: // E is an interface, such as TypedEvent itself
		panic("webhooks: On needs an event type, such as *webhooks.InvoicePaid, not an interface")
	case r == nil || fn == nil:
		panic(fmt.Sprintf("webhooks: On[%T] needs a Router and a function", zero))
	}
	t := zero.EventType()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.handlers[t]; taken {
		panic(fmt.Sprintf("webhooks: On[%T]: %s already has a function", zero, t))
	}
	r.handlers[t] = func(ctx context.Context, d *Delivery) error { return fn(ctx, d, d.Event.(E)) }
}

// Handle calls the function registered for d's event, or the fallback when
// there is none (or d.Event is a *RawEvent or nil), and returns its error.
// It routes on the type of d.Event, which Parse made from d.Type.
func (r *Router) Handle(ctx context.Context, d *Delivery) error {
	if _, raw := d.Event.(*RawEvent); raw || d.Event == nil {
		return r.fallback(ctx, d)
	}
	r.mu.RLock()
	fn := r.handlers[d.Event.EventType()]
	r.mu.RUnlock()
	if fn == nil {
		return r.fallback(ctx, d)
	}
	return fn(ctx, d)
}
