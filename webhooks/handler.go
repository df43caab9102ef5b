package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// A HandlerOption configures the http.Handler built by Handler.
type HandlerOption func(*handler)

// WithDeduper makes the Handler skip deliveries whose id d has already seen
// processed: they are acknowledged with 200 without calling the function. A
// delivery whose id is being processed by another request gets 409 Conflict,
// so the service retries it later. Without this option every delivery is
// processed, duplicates included.
func WithDeduper(d Deduper) HandlerOption {
	return func(h *handler) { h.dedupe = d }
}

// WithLogger makes the Handler log each delivery it refuses or fails to
// process (at level Warn or Error, with the status, delivery id, event type
// and error; for a panic, its value and stack trace) and each one it
// processes (at level Debug). It never logs the body or a secret. Without
// this option the Handler logs nothing.
func WithLogger(l *slog.Logger) HandlerOption {
	return func(h *handler) { h.log = l }
}

// WithErrorHandler makes the Handler give each failure of its function, or
// of the Deduper (the deliveries it answers 500, a panic included), to fn
// rather than log it at Error: for a receiver that counts or reports them
// itself (a store that tells its database is away, say). Refusals are
// still logged at Warn by WithLogger. fn must not block.
func WithErrorHandler(fn func(ctx context.Context, err error)) HandlerOption {
	return func(h *handler) { h.onError = fn }
}

// Handler returns an http.Handler that reads, verifies and parses each
// delivery with v, then calls fn with it. It answers:
//
//   - 200 when fn returns nil, or for a duplicate (see WithDeduper);
//   - 405 for a method other than POST;
//   - 413 for a body over v's limit (ErrBodyTooLarge);
//   - 401 when verification fails (ErrMissingHeader for the signature or
//     timestamp, ErrMalformedSignature, ErrMalformedTimestamp,
//     ErrSignatureMismatch, ErrTimestampOutOfTolerance);
//   - 400 for a verified delivery that cannot be used (no event or delivery
//     header, or ErrInvalidPayload), or a body that could not be read;
//   - 409 while another request processes the same delivery id;
//   - 500 when fn, or the Deduper, returns an error, or fn panics, so the
//     service retries.
//
// Any non-2xx answer makes the service retry the delivery later. The response
// body is only the status text; error details go to the logger, if any.
// fn runs with the request's context and should return within the 30 seconds
// the service waits; it should return nil for deliveries it chooses to ignore.
// A panic in fn is recovered: the delivery is answered 500 and released from
// the Deduper as not processed, and the Handler goes on serving. The
// exception is http.ErrAbortHandler, which is panicked again for net/http to
// abort the response. Handler panics if v or fn is nil.
func Handler(v *Verifier, fn func(ctx context.Context, d *Delivery) error, opts ...HandlerOption) http.Handler {
	if v == nil || fn == nil {
		panic("webhooks: Handler needs a non-nil Verifier and function")
	}
	return newHandler(func(*http.Request) (*Verifier, string, error) { return v, "", nil }, fn, opts)
}

// newHandler builds the Handler of Handler and BusinessHandler: verifier
// gives the Verifier of a request and its business ("" for a receiver of
// one business).
func newHandler(verifier func(*http.Request) (*Verifier, string, error), fn func(context.Context, *Delivery) error, opts []HandlerOption) *handler {
	h := &handler{verifier: verifier, fn: fn}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

type handler struct {
	verifier func(*http.Request) (*Verifier, string, error)
	fn       func(context.Context, *Delivery) error
	dedupe   Deduper
	log      *slog.Logger
	onError  func(context.Context, error)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	v, business, err := h.verifier(r)
	status := http.StatusNotFound
	if err == nil {
		status, err = h.serve(r, v, business)
	} else if !errors.Is(err, ErrUnknownBusiness) {
		status = http.StatusInternalServerError
	}
	h.logResult(r, v, business, status, err)
	if status == http.StatusOK {
		w.WriteHeader(status)
		return
	}
	http.Error(w, http.StatusText(status), status)
}

// serve handles a POST to business, verified with v, and returns the status
// to answer and the error behind a non-200 status.
func (h *handler) serve(r *http.Request, v *Verifier, business string) (int, error) {
	d, err := v.Read(r)
	if err != nil {
		return RefusalStatus(err), err
	}
	d.Business = business
	return h.process(r.Context(), d)
}

// RefusalStatus returns the status Handler answers a request with when
// Verifier.Read refused it with err, for receivers of their own that want
// to answer alike: 413 for a body over the limit (ErrBodyTooLarge), 401 for
// a request not verified (ErrNotVerified: no signature or timestamp, a bad
// one, a stale one), and 400 for a verified delivery that cannot be used (no
// event or delivery header, ErrInvalidPayload) or a body that could not be
// read.
func RefusalStatus(err error) int {
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrNotVerified):
		return http.StatusUnauthorized
	}
	return http.StatusBadRequest
}

// process calls fn for d, through the Deduper when there is one.
func (h *handler) process(ctx context.Context, d *Delivery) (int, error) {
	if h.dedupe == nil {
		if err := h.call(ctx, d); err != nil {
			return http.StatusInternalServerError, err
		}
		return http.StatusOK, nil
	}
	// Each business's deliveries are de-duplicated on their own.
	key := d.ID
	if d.Business != "" {
		key = d.Business + "/" + d.ID
	}
	claim, err := h.dedupe.Claim(ctx, key)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	switch claim {
	case ClaimNew:
	case ClaimDuplicate:
		if h.log != nil {
			h.log.DebugContext(ctx, "webhooks: duplicate delivery skipped", "delivery_id", d.ID, "event", string(d.Type))
		}
		return http.StatusOK, nil
	case ClaimInFlight:
		return http.StatusConflict, errors.New("webhooks: delivery is being processed by another request")
	default:
		return http.StatusInternalServerError, fmt.Errorf("webhooks: Deduper.Claim returned invalid ClaimStatus %d", claim)
	}
	processed := false
	// Deferred so that a panic in fn releases the claim too; the release
	// must happen even when the request's context has ended.
	defer func() {
		if rerr := h.dedupe.Release(context.WithoutCancel(ctx), key, processed); rerr != nil && h.log != nil {
			h.log.ErrorContext(ctx, "webhooks: releasing delivery id", "delivery_id", d.ID, "processed", processed, "error", rerr)
		}
	}()
	if err := h.call(ctx, d); err != nil {
		return http.StatusInternalServerError, err
	}
	processed = true
	return http.StatusOK, nil
}

// call calls fn, turning a panic other than http.ErrAbortHandler into a
// *panicError.
func (h *handler) call(ctx context.Context, d *Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return h.fn(ctx, d)
}

// panicError is a panic recovered from the Handler's function.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("webhooks: delivery function panicked: %v", e.value)
}

// logResult logs the outcome of a POST to business, verified with v (nil
// when the business's Verifier could not be had). The delivery id and
// event type are taken from the headers, so they are logged (as claimed,
// unverified) even for a request that failed verification.
func (h *handler) logResult(r *http.Request, v *Verifier, business string, status int, err error) {
	if h.onError != nil && err != nil && status >= 500 {
		h.onError(r.Context(), err)
		return
	}
	if h.log == nil {
		return
	}
	names := defaultHeaders
	if v != nil {
		names = v.headers
	}
	attrs := []any{
		"status", status,
		"delivery_id", r.Header.Get(names.delivery),
		"event", r.Header.Get(names.event),
	}
	if business != "" {
		attrs = append(attrs, "business", business)
	}
	ctx := r.Context()
	var panicked *panicError
	switch {
	case errors.As(err, &panicked):
		h.log.ErrorContext(ctx, "webhooks: delivery function panicked",
			append(attrs, "panic", fmt.Sprint(panicked.value), "stack", string(panicked.stack))...)
	case err == nil:
		h.log.DebugContext(ctx, "webhooks: delivery handled", attrs...)
	case status >= 500:
		h.log.ErrorContext(ctx, "webhooks: delivery failed", append(attrs, "error", err.Error())...)
	default:
		h.log.WarnContext(ctx, "webhooks: delivery refused", append(attrs, "error", err.Error())...)
	}
}
