// Package webhooks receives the Invoicing Service's webhook deliveries: it
// verifies their signature, parses their bodies into typed events and offers
// an http.Handler that does both.
//
// A delivery is an HTTP POST whose JSON body carries the event's fields and
// whose headers carry the rest: the event type (X-Service-Event), a delivery
// id for de-duplication (X-Service-Delivery), the Unix time of signing
// (X-Service-Timestamp) and an HMAC-SHA256 signature (X-Service-Signature).
//
// The usual receiver is a Handler around a Router, which calls a function of
// its own for each event type, with the event typed:
//
//	v, err := webhooks.NewVerifier(os.Getenv("INVOICING_WEBHOOK_SECRET"))
//	if err != nil {
//		return err
//	}
//	r := webhooks.NewRouter(nil) // nil: other event types are acknowledged and ignored
//	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.QuoteAccepted) error {
//		fmt.Println(e.QuoteNumber, e.Total)
//		return nil
//	})
//	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.PaymentReceived) error {
//		inv, err := e.FetchInvoice(ctx, client) // the invoice as it stands now
//		if err != nil {
//			return err // answered 500: the service retries
//		}
//		fmt.Println(inv.InvoiceNumber, inv.AmountDue)
//		return nil
//	})
//	h := webhooks.Handler(v, r.Handle, webhooks.WithDeduper(webhooks.NewMemoryDeduper(27*time.Hour)))
//	http.Handle("/webhooks", h)
//
// Router.Handle is a func(context.Context, *Delivery) error, the function
// Handler, BusinessHandler and the stores' workers take; any such function
// will do, a type switch on Delivery.Event among them.
//
// Receivers that do not use net/http's handlers call Verifier.Read for an
// *http.Request, or Verifier.ParseDelivery for headers and a body they have
// read themselves; Verifier.Verify checks a signature alone and Parse decodes
// a body alone. TestDelivery builds signed requests for a receiver's tests,
// and SampleBody gives a realistic body of every event type to sign.
//
// # Verification
//
// The signature is HMAC-SHA256 keyed with the signing secret's UTF-8 bytes
// (the 64 hexadecimal characters as text, never hex-decoded) over
// "<X-Service-Timestamp>.<raw body>". The body is used exactly as received and
// never re-serialised; it is verified before it is parsed. Timestamps more
// than five minutes away from the clock, in either direction, are refused by
// default. Several secrets can be accepted at once (WithSecrets) so that a
// receiver can be given the new secret before the old one is rotated out, and
// a delivery may carry several signatures (see Verifier.Verify).
//
// # Replays
//
// The signature covers only the timestamp and the body: not the delivery id
// (X-Service-Delivery) nor the event type (X-Service-Event). Within the
// tolerance, whoever captures a delivery can send its body again under a new
// delivery id, which de-duplication on Delivery.ID does not catch, or under
// another event type. A receiver should therefore:
//
//   - act on what the body says, checking that its fields fit the event type
//     (Parse refuses a body that lacks the id and time fields of its type,
//     so an invoice body cannot pass as a bill event, nor an invoice.created
//     body as invoice.paid);
//   - de-duplicate on the body's own id and event time where it has them, as
//     Delivery.EventKey does, besides or instead of the delivery id;
//   - prefer re-reading the record through the API (see Fetching the
//     record) to trusting the body for anything that moves money.
//
// Every failure is one of the package's sentinel errors, wrapped with
// context; test for it with errors.Is.
//
// # Events
//
// Parse returns one pointer type per event kind (*InvoiceCreated,
// *QuoteAccepted, *Test, ...), all implementing Event. An event type the
// package does not know comes back as a *RawEvent carrying the type and the
// body, not as an error, so a receiver keeps working when the service adds
// events. Money is decimal.Decimal (exact), dates are invoicing.Date,
// datetimes are time.Time. A field the API documents as optional is a
// pointer, nil when the field is absent or null.
//
// # Fetching the record
//
// An event names a record and carries only some of its fields, as they were
// when it was raised. Each event that names one has a method that reads the
// record through an invoicing.Client, as it stands now: FetchInvoice for the
// invoice events and PaymentReceived (the invoice the payment went to),
// FetchBill for the bill events, FetchContact for ContactCreated (the client
// or the supplier), FetchQuote for every quote event, and QuoteAccepted's
// FetchInvoice for the invoice the quote was converted into (ErrNotConverted
// when the conversion failed). Their errors are the Client's
// (invoicing.ErrNotFound for a record deleted since). The Client's key needs
// the record's read scope.
//
// # JSON
//
// Events are records of the SDK and follow its JSON rules (see the
// invoicing package documentation, JSON). Names match exactly: a member
// whose name differs from a field's only in case is not that field. A name
// given twice in one object is accepted and its last member wins, whole: a
// later object or array replaces the earlier one, and a later null empties
// the field, whatever its type. Invalid UTF-8 in a string, or an escaped
// lone surrogate (\ud800), becomes U+FFFD in the event's fields and in the
// names of Extra's members.
//
// Members an event has no field for are kept in its Extra (an
// invoicing.Extra), and those of a nested object (a line item, a recipient,
// the client address, ...) in that object's Extra, each exactly as sent, so
// a field the service adds can be read at once with Extra.Get.
//
// An event marshals, with encoding/json or encoding/json/v2 alike, back to
// the members it was parsed from, unknown ones included, each value written
// as it was sent: money sent as a JSON string ("4500.00", as the service
// sends it) stays that string, money sent as a JSON number stays that
// number, with its digits; a null stays null; a member the body lacked is
// left out; a datetime keeps its text (its offset, the digits of its
// fraction). A field set since is written with its new value. A member whose
// name the body gave twice is written once, as its last member was sent; a
// name given twice inside a value kept as sent (a member of Extra,
// InteractiveSelections, PreviousAcceptance) stays twice, which
// encoding/json/v2 writes only when given
// jsontext.AllowDuplicateNames(true). An event built in code writes every
// field, money as JSON strings. The bytes differ from the body's (spacing,
// order), so keep Delivery.Body to store or re-verify a delivery: the
// signature covers only those bytes.
//
// An event remembers, in an unexported field, how its body differs from
// what its fields would write. Two events with the same field values are
// therefore equal (reflect.DeepEqual, testify's assert.Equal) only when
// their bodies differed from their fields' JSON in the same way: an event
// parsed from its own canonical JSON equals the event built in code, but
// one parsed from a body that lacks a field, or has null for a string, does
// not. Compare such events field by field, or compare their JSON.
//
// # Header names
//
// The service's headers carry a neutral word ("Service") in place of the
// product's name. The constants in this package use the documented X-Service-
// prefix; WithHeaderPrefix configures another one.
package webhooks

//go:generate go run ../internal/cmd/recordgen
