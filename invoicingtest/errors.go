package invoicingtest

import "errors"

// Errors of the helpers (AcceptQuote, RecordPayment, WebhookEndpoint.Test,
// ...), wrapped with details; test them with errors.Is. The HTTP API answers
// with status codes and {"detail": ...} bodies instead.
var (
	// ErrNotFound: the id given to a helper does not exist.
	ErrNotFound = errors.New("invoicingtest: not found")
	// ErrInvalidState: the record's status does not allow the action
	// (accepting an accepted quote, paying a voided invoice, ...).
	ErrInvalidState = errors.New("invoicingtest: action not allowed in this status")
	// ErrPaused: WebhookEndpoint.Test on a paused endpoint.
	ErrPaused = errors.New("invoicingtest: webhook endpoint is paused")
	// ErrDeleted: a delivering method of a deleted endpoint.
	ErrDeleted = errors.New("invoicingtest: webhook endpoint is deleted")
)
