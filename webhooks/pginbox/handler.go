package pginbox

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// insertSQL stores a delivery once: a copy of a delivery already stored
// changes nothing.
const insertSQL = `INSERT INTO ` + TableName + ` (delivery_id, event_type, signed_at, body)
VALUES ($1, $2, $3, $4)
ON CONFLICT (delivery_id) DO NOTHING`

// A HandlerOption configures the http.Handler built by Handler.
type HandlerOption func(*handler)

// WithLogger makes the Handler log each delivery it refuses (at level Warn),
// each one it fails to store (Error) and each one it stores (Debug), with
// the status and the delivery id and event type read from the X-Service-
// headers. It never logs the body or a secret. Without this option the
// Handler logs nothing.
func WithLogger(l *slog.Logger) HandlerOption {
	return func(h *handler) { h.log = l }
}

// Handler returns an http.Handler that stores deliveries in the inbox table
// and acknowledges them; Workers process them afterwards. For each request
// it reads, verifies and parses the delivery with v (Verifier.Read), then
// inserts it in one statement that ignores a delivery id already stored. It
// answers:
//
//   - 200 once the insert has committed, or for a copy of a stored delivery;
//   - 500 when the database fails, so the service retries: a delivery is
//     never acknowledged unless it is stored;
//   - 405, 413, 401 and 400 for requests that are not verified deliveries,
//     as webhooks.Handler does: 405 for a method other than POST, 413 for a
//     body over v's limit, 401 when verification fails, 400 for a verified
//     delivery without an event or delivery header or with a body that does
//     not parse, or a body that could not be read.
//
// The response body is only the status text. The pool should have a
// connection free for each request served at once, besides those the
// Workers hold. Handler panics if pool or v is nil.
func Handler(pool *pgxpool.Pool, v *webhooks.Verifier, opts ...HandlerOption) http.Handler {
	if pool == nil || v == nil {
		panic("pginbox: Handler needs a non-nil pool and Verifier")
	}
	h := &handler{pool: pool, v: v}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

type handler struct {
	pool *pgxpool.Pool
	v    *webhooks.Verifier
	log  *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	status, err := h.store(r)
	h.logResult(r, status, err)
	if status == http.StatusOK {
		w.WriteHeader(status)
		return
	}
	http.Error(w, http.StatusText(status), status)
}

// store verifies and stores the delivery in r. It returns the status to
// answer and the error behind any other status than 200.
func (h *handler) store(r *http.Request) (int, error) {
	d, err := h.v.Read(r)
	if err != nil {
		return webhooks.RefusalStatus(err), err
	}
	if _, err := h.pool.Exec(r.Context(), insertSQL, d.ID, string(d.Type), d.Timestamp, d.Body); err != nil {
		return http.StatusInternalServerError, fmt.Errorf("pginbox: storing delivery: %w", err)
	}
	return http.StatusOK, nil
}

// logResult logs the outcome of a POST. The delivery id and event type are
// read from the default headers, as claimed, even when verification failed.
func (h *handler) logResult(r *http.Request, status int, err error) {
	if h.log == nil {
		return
	}
	attrs := []any{
		"status", status,
		"delivery_id", r.Header.Get(webhooks.HeaderDelivery),
		"event", r.Header.Get(webhooks.HeaderEvent),
	}
	ctx := r.Context()
	switch {
	case err == nil:
		h.log.DebugContext(ctx, "pginbox: delivery stored", attrs...)
	case status >= 500:
		h.log.ErrorContext(ctx, "pginbox: delivery not stored", append(attrs, "error", err.Error())...)
	default:
		h.log.WarnContext(ctx, "pginbox: delivery refused", append(attrs, "error", err.Error())...)
	}
}
