package invoicing

import (
	"net/http"
	"time"
)

// Response describes how a call went: pass WithResponseInto to a call to
// get it, and find it in every *Error.
type Response struct {
	// StatusCode is the HTTP status of the final response, or 0 when no
	// response was received (a network error, a timeout, a cancelled
	// context).
	StatusCode int
	// Header is the final response's header; nil when there was none.
	Header http.Header
	// RequestID is the id the service gave the final response in its
	// X-Request-Id header, for support requests and log correlation; "" when
	// the response had none.
	RequestID string
	// Attempts is how many times the request was sent: 1 plus the retries.
	// It is 0 when the call failed before sending anything.
	Attempts int
	// Duration is the time the call took, waits between attempts included.
	Duration time.Duration
}

// requestIDHeader is the header the service's request id is read from. The
// API documentation names none; X-Request-Id is the common convention.
const requestIDHeader = "X-Request-Id"
