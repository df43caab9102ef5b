package webhooks

import "github.com/go-json-experiment/json/jsontext"

// The JSON methods of the events (RawEvent included) and of the objects
// nested in them. Each type T has a plain twin, type plainT T, with T's
// fields and tags but none of its methods; the methods encode and decode the
// twin with the helpers of json.go. MarshalJSONTo writes the fields, then
// the members of Extra, with money as JSON strings; UnmarshalJSONFrom reads
// with jsonopt.Decode and keeps the members no field holds in Extra;
// MarshalJSON and UnmarshalJSON (encoding/json) do the same through them.

type plainInvoiceCreated InvoiceCreated

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e InvoiceCreated) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainInvoiceCreated)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *InvoiceCreated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainInvoiceCreated)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e InvoiceCreated) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *InvoiceCreated) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainInvoiceSent InvoiceSent

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e InvoiceSent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainInvoiceSent)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *InvoiceSent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainInvoiceSent)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e InvoiceSent) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *InvoiceSent) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainInvoiceUpdated InvoiceUpdated

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e InvoiceUpdated) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainInvoiceUpdated)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *InvoiceUpdated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainInvoiceUpdated)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e InvoiceUpdated) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *InvoiceUpdated) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainInvoicePaid InvoicePaid

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e InvoicePaid) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainInvoicePaid)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *InvoicePaid) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainInvoicePaid)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e InvoicePaid) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *InvoicePaid) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainBillCreated BillCreated

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e BillCreated) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainBillCreated)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *BillCreated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainBillCreated)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e BillCreated) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *BillCreated) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainBillApproved BillApproved

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e BillApproved) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainBillApproved)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *BillApproved) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainBillApproved)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e BillApproved) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *BillApproved) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainContactCreated ContactCreated

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e ContactCreated) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainContactCreated)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *ContactCreated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainContactCreated)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e ContactCreated) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *ContactCreated) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainPaymentReceived PaymentReceived

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e PaymentReceived) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainPaymentReceived)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *PaymentReceived) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainPaymentReceived)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e PaymentReceived) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *PaymentReceived) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainQuoteCreated QuoteCreated

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e QuoteCreated) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteCreated)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *QuoteCreated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteCreated)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e QuoteCreated) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *QuoteCreated) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainQuoteSent QuoteSent

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e QuoteSent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteSent)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *QuoteSent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteSent)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e QuoteSent) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *QuoteSent) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainQuoteViewed QuoteViewed

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e QuoteViewed) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteViewed)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *QuoteViewed) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteViewed)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e QuoteViewed) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *QuoteViewed) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainQuoteAccepted QuoteAccepted

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e QuoteAccepted) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteAccepted)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *QuoteAccepted) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteAccepted)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e QuoteAccepted) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *QuoteAccepted) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainQuoteUnaccepted QuoteUnaccepted

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e QuoteUnaccepted) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteUnaccepted)(&e))
}

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *QuoteUnaccepted) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteUnaccepted)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e QuoteUnaccepted) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *QuoteUnaccepted) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainTest Test

// MarshalJSONTo writes e as a JSON object: its fields, then the members of Extra.
func (e Test) MarshalJSONTo(enc *jsontext.Encoder) error { return encodeTo(enc, (*plainTest)(&e)) }

// UnmarshalJSONFrom reads a JSON object into e, keeping unknown members in Extra.
func (e *Test) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainTest)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e Test) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *Test) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }

type plainAddress Address

// MarshalJSONTo writes a as a JSON object: its fields, then the members of Extra.
func (a Address) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainAddress)(&a))
}

// UnmarshalJSONFrom reads a JSON object into a, keeping unknown members in Extra.
func (a *Address) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainAddress)(a))
}

// MarshalJSON encodes a as MarshalJSONTo does.
func (a Address) MarshalJSON() ([]byte, error) { return encodeV1(a) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves a unchanged.
func (a *Address) UnmarshalJSON(b []byte) error { return decodeV1(b, a) }

type plainQuoteLineItem QuoteLineItem

// MarshalJSONTo writes l as a JSON object: its fields, then the members of Extra.
func (l QuoteLineItem) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainQuoteLineItem)(&l))
}

// UnmarshalJSONFrom reads a JSON object into l, keeping unknown members in Extra.
func (l *QuoteLineItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainQuoteLineItem)(l))
}

// MarshalJSON encodes l as MarshalJSONTo does.
func (l QuoteLineItem) MarshalJSON() ([]byte, error) { return encodeV1(l) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves l unchanged.
func (l *QuoteLineItem) UnmarshalJSON(b []byte) error { return decodeV1(b, l) }

type plainViewer Viewer

// MarshalJSONTo writes v as a JSON object: its fields, then the members of Extra.
func (v Viewer) MarshalJSONTo(enc *jsontext.Encoder) error { return encodeTo(enc, (*plainViewer)(&v)) }

// UnmarshalJSONFrom reads a JSON object into v, keeping unknown members in Extra.
func (v *Viewer) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainViewer)(v))
}

// MarshalJSON encodes v as MarshalJSONTo does.
func (v Viewer) MarshalJSON() ([]byte, error) { return encodeV1(v) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves v unchanged.
func (v *Viewer) UnmarshalJSON(b []byte) error { return decodeV1(b, v) }

type plainRecipient Recipient

// MarshalJSONTo writes r as a JSON object: its fields, then the members of Extra.
func (r Recipient) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainRecipient)(&r))
}

// UnmarshalJSONFrom reads a JSON object into r, keeping unknown members in Extra.
func (r *Recipient) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainRecipient)(r))
}

// MarshalJSON encodes r as MarshalJSONTo does.
func (r Recipient) MarshalJSON() ([]byte, error) { return encodeV1(r) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves r unchanged.
func (r *Recipient) UnmarshalJSON(b []byte) error { return decodeV1(b, r) }

type plainAcceptingContact AcceptingContact

// MarshalJSONTo writes c as a JSON object: its fields, then the members of Extra.
func (c AcceptingContact) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainAcceptingContact)(&c))
}

// UnmarshalJSONFrom reads a JSON object into c, keeping unknown members in Extra.
func (c *AcceptingContact) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainAcceptingContact)(c))
}

// MarshalJSON encodes c as MarshalJSONTo does.
func (c AcceptingContact) MarshalJSON() ([]byte, error) { return encodeV1(c) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves c unchanged.
func (c *AcceptingContact) UnmarshalJSON(b []byte) error { return decodeV1(b, c) }

type plainRawEvent RawEvent

// MarshalJSONTo writes e as {"Type": ..., "Body": ...}, Body as received
// (a name given twice stays twice; invalid UTF-8 becomes U+FFFD).
func (e RawEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, (*plainRawEvent)(&e))
}

// UnmarshalJSONFrom reads what MarshalJSONTo writes into e.
func (e *RawEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeFrom(dec, (*plainRawEvent)(e))
}

// MarshalJSON encodes e as MarshalJSONTo does.
func (e RawEvent) MarshalJSON() ([]byte, error) { return encodeV1(e) }

// UnmarshalJSON decodes b as UnmarshalJSONFrom does; null leaves e unchanged.
func (e *RawEvent) UnmarshalJSON(b []byte) error { return decodeV1(b, e) }
