package pginbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// insertSQL stores a delivery once: a copy of a delivery already stored
// for the same business changes nothing.
const insertSQL = `INSERT INTO ` + TableName + ` (business, delivery_id, event_type, signed_at, body)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (business, delivery_id) DO NOTHING`

// DefaultHandlerTimeout is how long the Handler waits for the database to
// store a delivery unless WithTimeout says otherwise: 10 seconds, a third
// of the 30 seconds the service waits for an answer, leaving the rest to
// the network and to a busy receiver.
const DefaultHandlerTimeout = 10 * time.Second

// A HandlerOption configures the http.Handler built by Handler.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	log          *slog.Logger
	onError      func(context.Context, error)
	timeout      time.Duration
	metrics      *Metrics
	backpressure *Backpressure
	body         func(context.Context, *webhooks.Delivery) ([]byte, error)
}

// WithStoredBody makes the Handler store, of each verified delivery, the
// body fn returns instead of the body as received: to keep less of a
// payload than arrived, such as the personal data a receiver must not
// hold. The Workers parse what is stored, so it must still parse as the
// delivery's event. An error of fn fails the delivery as a database error
// does (500: the service retries). Without this option the body is stored
// as received.
func WithStoredBody(fn func(ctx context.Context, d *webhooks.Delivery) ([]byte, error)) HandlerOption {
	return func(c *handlerConfig) { c.body = fn }
}

// WithLogger makes the Handler log each delivery it refuses (at level Warn),
// each one it fails to store (Error) and each one it stores (Debug), as
// webhooks.WithLogger does: with the status, the delivery id and event type
// read from the request's headers, and the error. It never logs the body or
// a secret. Without this option the Handler logs nothing.
func WithLogger(l *slog.Logger) HandlerOption {
	return func(c *handlerConfig) { c.log = l }
}

// WithErrorHandler makes the Handler give each delivery it fails to store
// (the database failed or did not answer in time; it answers 500) to fn,
// with the database's error, rather than log it at Error: for a program
// that reports the database's failures itself. Refusals are still logged
// by WithLogger. fn must not block.
func WithErrorHandler(fn func(ctx context.Context, err error)) HandlerOption {
	return func(c *handlerConfig) { c.onError = fn }
}

// WithTimeout bounds the Handler's database work on each delivery, the wait
// for a pool connection and the insert, to d (DefaultHandlerTimeout without
// this option), counted once the delivery is read and verified: when the
// database has not stored the delivery by then, because it hangs or every
// connection of the pool is busy, the Handler stops waiting and answers
// 500, so the service retries. An insert cut short may still commit once
// the database answers again; the retry is then a copy, acknowledged
// without being stored twice. Keep d well below the 30 seconds the service
// waits. Only d ends that work: a client that hangs up does not cut an
// insert short. Reading the request is not bounded by d: bound it with
// http.Server's ReadTimeout (verifying a body takes microseconds). Handler
// panics if d is not positive.
func WithTimeout(d time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.timeout = d }
}

// Handler returns an http.Handler that stores deliveries in the inbox table
// and acknowledges them; Workers process them afterwards. It is a
// webhooks.Handler whose function inserts the verified delivery in one
// statement that ignores a delivery id already stored. It answers:
//
//   - 200 once the insert has committed, or for a copy of a stored delivery;
//   - 500 when the database fails, or has not stored the delivery within
//     the limit of WithTimeout (DefaultHandlerTimeout), so the service
//     retries: a delivery is never acknowledged unless it is stored;
//   - 503 with a Retry-After header, with WithBackpressure, while the
//     Workers are behind, before reading the request; the service
//     retries;
//   - 405, 413, 401 and 400 for requests that are not verified deliveries,
//     as webhooks.Handler does: 405 for a method other than POST, 413 for a
//     body over v's limit, 401 when verification fails, 400 for a verified
//     delivery without an event or delivery header or with a body that does
//     not parse, or a body that could not be read.
//
// The response body is only the status text. Give the Handler a pool of
// its own, not the Workers' pool: a Worker holds a connection for as long
// as its callback runs, and the Handler's inserts must not wait for those
// (see the package documentation). Handler panics if pool or v is nil.
func Handler(pool *pgxpool.Pool, v *webhooks.Verifier, opts ...HandlerOption) http.Handler {
	if pool == nil || v == nil {
		panic("pginbox: Handler needs a non-nil pool and Verifier")
	}
	cfg := newHandlerConfig(opts)
	return cfg.throttle(pool, cfg.count(webhooks.Handler(v, cfg.store(pool), cfg.hopts()...)))
}

// BusinessHandler returns an http.Handler for one webhook endpoint shared
// by many businesses, which stores deliveries in the inbox table as
// Handler does, each with its business: a webhooks.BusinessHandler, so the
// business comes from the URL's {business} wildcard and each delivery is
// verified only with its own business's Verifier, from verifier. Mount it
// on a pattern such as "POST /webhooks/{business}" and give each business
// its own URL in the service:
//
//	http.Handle("POST /webhooks/{business}", pginbox.BusinessHandler(inserts, verifiers))
//
// A delivery signed for one business is refused (401) on another's URL,
// and a delivery id is stored once per business: the inbox's primary key
// is (business, delivery_id), and the Workers give the callback the
// delivery's Business. It answers as Handler does, and as
// webhooks.BusinessHandler does for the business: 404 for a URL without
// one or one verifier does not know (webhooks.ErrUnknownBusiness), 500
// when verifier fails otherwise (503 before any of those while the
// Workers are behind, with WithBackpressure). Its options are Handler's.
// BusinessHandler panics if pool or verifier is nil.
func BusinessHandler(pool *pgxpool.Pool, verifier webhooks.VerifierFunc, opts ...HandlerOption) http.Handler {
	if pool == nil || verifier == nil {
		panic("pginbox: BusinessHandler needs a non-nil pool and VerifierFunc")
	}
	cfg := newHandlerConfig(opts)
	return cfg.throttle(pool, cfg.count(webhooks.BusinessHandler(verifier, cfg.store(pool), cfg.hopts()...)))
}

// newHandlerConfig applies opts to the defaults, and panics for a timeout
// that is not positive.
func newHandlerConfig(opts []HandlerOption) handlerConfig {
	cfg := handlerConfig{timeout: DefaultHandlerTimeout}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.timeout <= 0 {
		panic("pginbox: WithTimeout needs a positive duration")
	}
	return cfg
}

// hopts returns the webhooks options of the configuration.
func (cfg handlerConfig) hopts() []webhooks.HandlerOption {
	var out []webhooks.HandlerOption
	if cfg.log != nil {
		out = append(out, webhooks.WithLogger(cfg.log))
	}
	if cfg.onError != nil {
		out = append(out, webhooks.WithErrorHandler(cfg.onError))
	}
	return out
}

// store returns the function of the Handlers: it inserts the verified
// delivery, with its business ("" from Handler), within the timeout.
func (cfg handlerConfig) store(pool *pgxpool.Pool) func(context.Context, *webhooks.Delivery) error {
	return func(ctx context.Context, d *webhooks.Delivery) error {
		// Not canceled with the request, which net/http does when the
		// client hangs up: an insert under way completes (or meets the
		// deadline), and the service's retry finds the delivery stored. It
		// also spares registering a child with the request's context, a
		// measurable cost at thousands of requests a second.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.timeout)
		defer cancel()
		body := d.Body
		if cfg.body != nil {
			var err error
			if body, err = cfg.body(ctx, d); err != nil {
				return fmt.Errorf("pginbox: the body to store: %w", err)
			}
		}
		tag, err := pool.Exec(ctx, insertSQL, d.Business, d.ID, string(d.Type), d.Timestamp, body)
		switch {
		case err != nil:
			return fmt.Errorf("pginbox: storing delivery: %w", err)
		case tag.RowsAffected() == 0:
			cfg.metrics.add(outcomeDuplicate)
		default:
			cfg.metrics.add(outcomeStored)
		}
		return nil
	}
}
