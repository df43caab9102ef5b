package webhooks

import "errors"

// Errors returned by this package. They are wrapped with context (such as the
// header's name); test for them with errors.Is.
var (
	// ErrEmptySecret is returned by NewVerifier when a signing secret is
	// empty or only white space, and by the zero Verifier.
	ErrEmptySecret = errors.New("webhooks: empty signing secret")

	// ErrInvalidOption is returned by NewVerifier for an option with an
	// unusable value, such as a non-positive tolerance or body limit.
	ErrInvalidOption = errors.New("webhooks: invalid option")

	// ErrMissingHeader means a delivery header is absent or empty. The
	// wrapping error names the header.
	ErrMissingHeader = errors.New("webhooks: missing header")

	// ErrMalformedSignature means no value of the signature header is
	// "sha256=" followed by 64 hexadecimal digits.
	ErrMalformedSignature = errors.New("webhooks: malformed signature header")

	// ErrMalformedTimestamp means the timestamp header is not a Unix time in
	// seconds written as decimal digits (up to the year 9999).
	ErrMalformedTimestamp = errors.New("webhooks: malformed timestamp header")

	// ErrSignatureMismatch means no well-formed signature matches the
	// timestamp and body under any of the Verifier's secrets: the body was
	// altered, the secret is wrong, or the delivery was not sent by the
	// service.
	ErrSignatureMismatch = errors.New("webhooks: signature mismatch")

	// ErrTimestampOutOfTolerance means the signature is valid but the
	// timestamp is further from the Verifier's clock than its tolerance, in
	// the past (a stale or replayed delivery) or in the future.
	ErrTimestampOutOfTolerance = errors.New("webhooks: timestamp outside tolerance")

	// ErrBodyTooLarge means the body is longer than the Verifier's limit
	// (WithMaxBodyBytes); it was not verified.
	ErrBodyTooLarge = errors.New("webhooks: body too large")

	// ErrNotVerified is matched, besides its own sentinel, by every error
	// of Verify, and by the errors of Read and ParseDelivery that come from
	// verification: the request is not shown to be an authentic, recent
	// delivery, and must not be acted on (RefusalStatus answers 401, or 413
	// for ErrBodyTooLarge). Their other errors concern a verified delivery
	// that cannot be used (400) or a body that could not be read.
	ErrNotVerified = errors.New("webhooks: delivery not verified")

	// ErrInvalidPayload means a verified body could not be used: it is not a
	// JSON object, a field has the wrong type or format, or it lacks the id
	// or time field its event type requires (see Parse).
	ErrInvalidPayload = errors.New("webhooks: invalid payload")

	// ErrNotConverted is returned by QuoteAccepted.FetchInvoice for a quote
	// the service did not convert into an invoice (its InvoiceID is nil).
	ErrNotConverted = errors.New("webhooks: the accepted quote was not converted into an invoice")
)
