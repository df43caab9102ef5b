// Package invoicingtest is an in-memory fake of the Invoicing Service
// External API, for trying the SDK without an account or a network and for
// testing an integration against a server that follows the API
// documentation.
//
// In a test, two lines give a server that is closed with the test, and an
// SDK client wired to it:
//
//	srv := invoicingtest.NewTestServer(t)
//	c := srv.Client()
//
// Outside tests (examples, demos) use NewServer and Close. The server
// listens on a loopback address (or on the listener given with
// WithListener); Server.URL is the base URL including /api/v1/external,
// under which the API is mounted (nothing answers at the root). SaveState
// and LoadState carry the business's data and API keys over to a later
// server, as a versioned JSON document. Server.FullKey has every scope, Server.ReadOnlyKey only the :read
// scopes, and NewAPIKey mints keys with chosen scopes. The business starts
// with seed data (clients, suppliers, accounts, tax codes, a catalog item,
// bank accounts and transactions) under the well-known Seed* ids.
//
// Helpers drive what the API cannot: SendQuote, ViewQuote, AcceptQuote,
// UnacceptQuote, DeclineQuote, ExpireQuote, ExpireQuotes, SendInvoice,
// UpdateInvoice, RecordPayment, ApproveBill, PayBill, and the Add* helpers
// for more data ("Statuses" below lists the changes each makes). Each fires
// the documented events (webhooks.EventType) to the endpoints added with
// AddWebhookEndpoint (or AddWebhookEndpointWithSecret, to sign with a secret
// of your choosing), signed with webhooks.Sign. NewReceiver starts a
// receiver running webhooks.Handler and adds it as an endpoint in one call,
// its function getting typed events; NewHandlerReceiver does the same for
// an http.Handler of your own, built with the secret given with WithSecret.
// Deliveries are synchronous: when an API call or a helper returns, every
// first attempt has been made. Failed deliveries are retried on the
// documented retry schedule (RetrySchedule) by the server's Clock; with a
// FakeClock (WithClock), Advance runs the retries that fall due, so tests
// never sleep. An OffsetClock is the wall clock with an Advance of its own,
// for a long-running fake (WithControl lets other programs advance it).
// InjectFault, RateLimitNext, FailNext and ProxyErrorNext make the next
// requests fail as a rate limiter or a proxy would. WithLatency and
// SetLatency give every request a network-like delay, waited in parallel by
// concurrent requests, to show what concurrency gains.
//
// A MultiServer (NewMultiServer, NewTestMultiServer) is several businesses
// behind one base URL, as the service serves them to an accounting
// practice or a platform: each business is a Server of its own (Business),
// with its own data, keys, webhook endpoints and webhook secret
// (SetWebhookSecret: the secret its endpoints sign with unless given
// another), and a request goes to the business whose API key it carries.
//
// Statuses and item types are the SDK's (invoicing.InvoiceStatus,
// invoicing.QuoteStatus, invoicing.BillStatus, invoicing.ItemType); event
// types are the webhooks package's.
//
// # Statuses
//
// Invoices are created draft or awaiting_payment (POST /invoices), or by
// accepting a quote (draft or awaiting_payment, see QuoteConversion). Then:
//   - SendInvoice: draft becomes awaiting_payment; invoice.sent fires.
//   - The Clock: an awaiting_payment invoice with an amount due reads
//     overdue once its due date is before today (the date on the server's
//     Clock, in UTC), in GET /invoices/{id}, in GET /invoices and its status
//     filter, in the PDF and in the status of later invoice events. It is
//     worked out at each read, not by a background task, so advancing a
//     FakeClock past the due date is enough. No event fires and updated_at
//     does not change: the service documents no event for becoming overdue,
//     and invoice.updated is for changes to the header, lines or contacts.
//     A later due date (UpdateInvoice) makes it awaiting_payment again.
//     SaveState records it as awaiting_payment, so after LoadState it is
//     overdue or not by the loading server's Clock.
//   - RecordPayment: a payment that leaves a balance keeps the status (an
//     overdue invoice stays overdue) and fires payment.received; one that
//     clears it makes the invoice paid and fires invoice.paid too.
//   - UpdateInvoice: staff set draft, awaiting_payment, overdue (which
//     stays until changed, due date or not) or voided; invoice.updated
//     fires. Paid comes only from payments.
//
// Quotes are created draft. SendQuote makes a draft or sent quote sent
// (quote.sent); ViewQuote keeps the status (quote.viewed); AcceptQuote
// makes a draft or sent quote accepted (quote.accepted, then
// invoice.created for the converted invoice); UnacceptQuote returns it to
// its status before acceptance (quote.unaccepted); DeclineQuote and
// ExpireQuote make a draft or sent quote declined or expired (no event is
// documented, none fires). A quote does not expire the moment its
// valid_until passes: draft and sent quotes whose valid_until is before
// today expire when ExpireQuotes runs (as the service's daily job would),
// which the control endpoint's clock advance does.
//
// Bills are created draft or awaiting_approval (POST /bills). ApproveBill
// makes them approved (bill.approved); PayBill makes an approved bill paid
// (no event).
//
// # Control endpoints (mock only)
//
// A server made with WithControl also answers control endpoints under
// BasePath + "/_mock" (srv.URL + "/_mock/..."), through which programs that
// cannot call the helpers (the CLI's `invoicing mock` and `invoicing
// trigger`, tests in other languages) make the same changes, so that the
// events they raise are real: signed by the fake and naming records that
// exist. The real service has no such path (it answers 404 there), and
// neither does a server made without WithControl. ControlClient calls them
// from Go, with typed answers (ControlInfo, ControlResult, ...): the types
// the server writes them with.
//
// They take the API's Authorization header, and a key with every scope of
// AllScopes (FullKey): 401 for a missing or unknown key, 403 for a key
// lacking one. On a MultiServer they act on the business of that key, and
// never reach another's records or endpoints. Bodies are JSON objects; a body whose fields are all
// optional may be left out, and members the endpoint does not know are
// ignored. Errors are {"detail": ...}: 400 for malformed JSON or a field of
// the wrong JSON type, 404 for an unknown record ("Invoice not found",
// "Quote not found", "Bill not found", "Webhook endpoint not found") or
// control path ("Not Found"), 405 with Allow for another method, 409 when
// the record's status does not allow the action (ErrInvalidState; the detail
// is the helper's error text without its "invoicingtest: " prefix) or the
// endpoint is paused, 422 for a value the action refuses.
//
// An action answers the ids of the records it touched and "events": each
// event it raised, in order, as {"type", "deliveries"}, and each delivery as
// {"delivery_id", "endpoint_id", "url", "status" (succeeded, pending or
// failed), "status_code" (0 when no response came), "error" (when no
// response came)}; the first attempts have been made when the answer is
// written. Paths are relative to srv.URL:
//   - GET /_mock: {"mock": true, "business_id", "business" (the business's
//     name on a MultiServer, left out alone), "now" (the server's clock),
//     "today", "webhooks": [{"id", "url", "events" (null: every event),
//     "paused"}], "last_event_seq"}. Secrets are never listed.
//   - GET /_mock/events?after=N: {"events": [...], "last_event_seq"}, the
//     events raised after the Nth (numbered from 1 in the order raised,
//     API calls included), each {"seq", "type", "at", "body" (the payload),
//     "deliveries" (as they stand now)}.
//   - POST /_mock/webhooks {"url", "events"?, "secret"?}: 201 {"id", "url",
//     "events", "paused", "secret"}, a new endpoint receiving the events
//     given (every event when left out) at an http or https URL, signing
//     with the secret given (64 hexadecimal characters), else the
//     business's webhook secret, else a new one.
//   - POST /_mock/webhooks/{id}/secret {"secret"?}: 200, the same object
//     with the secret given or a new one, and "previous_secret", the one
//     it replaced, which is invalid at once.
//   - DELETE /_mock/webhooks/{id}: 204.
//   - POST /_mock/webhooks/{id}/test: 200 {"events"}, a test delivery (409
//     while the endpoint is paused).
//   - POST /_mock/invoices/{id}/send: SendInvoice.
//   - PATCH /_mock/invoices/{id} {"notes"?, "due_date"?}: UpdateInvoice
//     (422 when neither is given).
//   - POST /_mock/invoices/{id}/void: UpdateInvoice to voided.
//   - POST /_mock/invoices/{id}/payments {"amount"?, "payment_method"?,
//     "received_at"?}: 201 {"payment_id", "invoice_id", "events"},
//     RecordPayment. amount is a JSON number or a string holding one, with
//     at most two decimal places (default: the whole amount due);
//     payment_method defaults to bank_transfer, received_at (RFC 3339) to
//     now.
//   - POST /_mock/quotes/{id}/send, /view, /unaccept: SendQuote (to the
//     client), ViewQuote (by the first recipient), UnacceptQuote.
//   - POST /_mock/quotes/{id}/accept {"accepted_by"?}: AcceptQuote, by the
//     first recipient through the share link once the quote was sent, else
//     by staff; the answer adds "invoice_id", "invoice_number" and
//     "invoice_status" when conversion made an invoice.
//   - POST /_mock/quotes/{id}/decline: DeclineQuote; "events" is empty.
//   - POST /_mock/bills/{id}/approve: ApproveBill.
//   - POST /_mock/clock/advance {"by"}: advances a clock with an Advance
//     method (FakeClock, OffsetClock; 409 "the server's clock cannot be
//     advanced" for SystemClock) by a Go duration ("36h") optionally
//     preceded by whole days ("15d", "1d12h"), more than zero and at most
//     3650 days; the webhook retries due on the way run; then ExpireQuotes
//     runs (in every business of a MultiServer, which share the clock). It
//     answers {"now", "today", "overdue_invoices" (the invoices that read
//     overdue now and did not before), "expired_quotes"}, of the key's
//     business only.
//
// # Choices where the API documentation is silent
//
// Status codes:
//   - 400: a body that is not a JSON object, or whose fields have the wrong
//     JSON types (a decimal sent as a string, a line that is not an object);
//     a bad query parameter (page below 1, page_size outside 1..100, an
//     unknown status or item_type filter, a malformed date, to_date before
//     from_date). page_size above 100 is refused, not clamped.
//   - 422: a well-formed body that breaks a rule: a missing or unknown
//     client_id or supplier_id (it does not belong to the business), no line
//     items, a line without unit_price, a negative quantity (0 is accepted,
//     see Money), a line with neither its own nor a default account_id or
//     tax_code_id, an unknown account, tax code or item_id, a malformed date
//     in the body, a due_date or valid_until before issue_date, a status
//     other than draft or awaiting_payment on create, a currency that is not
//     three capital letters, a quote line carrying its own "id". Item errors
//     use the documented detail texts verbatim.
//   - 404 {"detail": "Invoice not found"} (Quote, Item, ...) for an unknown
//     or malformed id; 404 {"detail": "Not Found"} for an unknown path,
//     before authentication; 405 with Allow for a known path and another
//     method.
//   - 409: an existing invoice_number, item_code, or a bill_number the
//     supplier already used. A repeated invoice reference is checked first
//     and answers 200 with the existing invoice, whatever the rest of a
//     well-formed body says.
//
// Money: line net = quantity × unit_price rounded to cents; line tax =
// quantity × unit_price × rate / 100 rounded to cents; amount = net + tax.
// A quantity of 0 is accepted: the line is kept and bills nothing (net, tax
// and amount 0); only a negative quantity is refused.
// Rounding is half away from zero (2.525 becomes 2.53), per line; subtotal,
// tax_total and total are sums of the rounded line values. API responses
// write decimals as JSON numbers with at least two places for money
// (110.00, 0.125, as FormatMoney writes them) and without trailing zeros for quantities and rates (2.5,
// 10); webhooks write them as strings. Request decimals must be JSON numbers
// below 10^12 in magnitude with at most six decimal places.
//
// Defaults: currency AUD; issue_date today in UTC on the server's clock;
// due_date = issue_date + payment_terms_days, else + 30 days (the business's
// default terms, also used for bills and converted invoices); valid_until =
// issue_date + valid_days, else + 30 days; quote title = the first line's
// description, else "Quote". A line linked to an item (item_id, itemId or Id)
// takes the catalog description, or name, when it has no description; its
// price, account and tax code still come from the request.
//
// Scopes of the resources whose scopes are not documented: clients:read,
// clients:write, suppliers:read, suppliers:write, bills:read, bills:write,
// accounts:read, tax_codes:read, reports:read, banking:read.
//
// Lists are in creation order; has_more is true when a later page has
// records; a page past the end, however large its number, is empty.
//
// Webhooks: retries wait 1 min, 5 min, 30 min, 2 h and 24 h after the
// previous attempt; a delivery whose fifth retry fails is marked failed
// (six attempts in all). Every attempt has the same X-Service-Delivery id
// and body, a fresh timestamp and a signature with the endpoint's current
// secret. Events raised while an endpoint is paused are not delivered to it;
// retries that fall due while paused wait for Resume. Test deliveries and
// manual retries are tried once. No item event is documented, so POST
// /items fires none; quote acceptance fires quote.accepted and then
// invoice.created for the converted invoice.
//
// The admin, share and payment links in webhook payloads point at the fake's
// host but are not served.
package invoicingtest
