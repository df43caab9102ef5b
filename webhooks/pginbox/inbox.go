package pginbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Bounds of ListParams.Limit.
const (
	// DefaultListLimit is the page size of Inbox.ListPage, and of each
	// page Inbox.List reads, when ListParams.Limit is zero.
	DefaultListLimit = 100
	// MaxListLimit bounds ListParams.Limit: a page is held in memory.
	MaxListLimit = 1000
)

// requeueBatch is how many failed deliveries each statement of
// RequeueFailed requeues: a short transaction each, whatever the total.
const requeueBatch = 1000

// Errors of the Inbox.
var (
	// ErrNotFound is returned by Inbox.Get for a delivery the inbox does
	// not hold.
	ErrNotFound = errors.New("pginbox: no such delivery")
	// ErrInvalidParams is wrapped by the error of Inbox.ListPage and
	// Inbox.List for ListParams they cannot use: a Limit out of range, an
	// unknown Status, an After that is not a DeliveryPage.Next.
	ErrInvalidParams = errors.New("pginbox: invalid ListParams")
)

// DB runs the Inbox's statements: a *pgxpool.Pool, a *pgx.Conn or a
// pgx.Tx, working in the schema of the inbox table (the first of its
// search_path, as for Migrate).
type DB interface {
	Execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// An Inbox reads the inbox table and steers its deliveries, for an
// operator's tools: List and ListPage list them (failed, of one business,
// received since a time) with their attempts and last error, Get and Find
// show one, Requeue and RequeueFailed have the Workers process deliveries
// again. Every statement reads through an index and holds a page at most
// in memory, however large the table. An Inbox is safe for concurrent
// use.
type Inbox struct{ db DB }

// NewInbox returns the Inbox of the inbox table db works in. NewInbox
// panics if db is nil.
func NewInbox(db DB) *Inbox {
	if db == nil {
		panic("pginbox: NewInbox needs a non-nil DB")
	}
	return &Inbox{db: db}
}

// A StoredDelivery is a delivery's row in the inbox table: the delivery as
// the Handler stored it, and what the Workers did with it. Its times are
// the database's clock.
type StoredDelivery struct {
	// Business is the business BusinessHandler stored the delivery for; ""
	// when Handler stored it.
	Business string `json:"business" db:"business"`
	// ID is the delivery's id (X-Service-Delivery), unique within its
	// business.
	ID string `json:"id" db:"delivery_id"`
	// EventType is the event's type (X-Service-Event).
	EventType webhooks.EventType `json:"event_type" db:"event_type"`
	// SignedAt is when the service signed the stored copy.
	SignedAt time.Time `json:"signed_at" db:"signed_at"`
	// ReceivedAt is when the Handler stored the first copy.
	ReceivedAt time.Time `json:"received_at" db:"received_at"`
	// Status is StatusPending, StatusProcessed or StatusFailed.
	Status string `json:"status" db:"status"`
	// Attempts is how many runs of the callback had their outcome
	// recorded; Failures, how many of them failed.
	Attempts int `json:"attempts" db:"attempts"`
	// Failures is how many runs of the callback failed.
	Failures int `json:"failures" db:"failures"`
	// LastError is the error of the last failed run ("" when none failed).
	// A requeued delivery keeps it until it fails again.
	LastError string `json:"last_error" db:"last_error"`
	// NextAttemptAt is, for a pending delivery, when it is due (after a
	// failure, the end of its backoff); for a failed one, when it was
	// parked.
	NextAttemptAt time.Time `json:"next_attempt_at" db:"next_attempt_at"`
	// ProcessedAt is when the callback's success was recorded; nil unless
	// the delivery is processed.
	ProcessedAt *time.Time `json:"processed_at" db:"processed_at"`
	// Body is the request body exactly as verified (a JSON object). Get and
	// Find fill it; List and ListPage leave it nil, so that a page of them
	// stays small.
	Body json.RawMessage `json:"body,omitempty" db:"body"`
}

// Filter selects deliveries by business and time of receipt; its zero
// value selects every delivery.
type Filter struct {
	// Business, when not nil, keeps only the deliveries of that business;
	// a pointer to "" keeps those Handler stored.
	Business *string
	// Since, when not zero, keeps only the deliveries received at or after
	// it (StoredDelivery.ReceivedAt).
	Since time.Time
}

// ListParams selects and pages the deliveries of Inbox.List and
// Inbox.ListPage, which come newest first (by ReceivedAt).
type ListParams struct {
	Filter
	// Status, when set, keeps only the deliveries with that status
	// (StatusPending, StatusProcessed or StatusFailed).
	Status string
	// Limit is the number of deliveries a page holds at most
	// (DefaultListLimit when zero, at most MaxListLimit).
	Limit int
	// After is DeliveryPage.Next of the page before: the page starts after
	// its last delivery. "" starts with the newest.
	After string
}

// A DeliveryPage is one page of Inbox.ListPage.
type DeliveryPage struct {
	// Deliveries are the page's deliveries, newest first, without Body.
	Deliveries []StoredDelivery `json:"deliveries"`
	// Next is the ListParams.After of the following page; "" when this
	// page is the last.
	Next string `json:"next"`
}

// ListPage returns one page of the deliveries p selects, newest first. Its
// error wraps the database's, or says what in p is wrong.
func (in *Inbox) ListPage(ctx context.Context, p ListParams) (*DeliveryPage, error) {
	sql, args, limit, err := listSQL(p)
	if err != nil {
		return nil, err
	}
	list, err := in.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	page := &DeliveryPage{Deliveries: list}
	if len(list) > limit {
		page.Deliveries = list[:limit]
		page.Next = encodeCursor(list[limit-1])
	}
	return page, nil
}

// List returns the deliveries p selects, newest first, from p.After on,
// reading them a page of p.Limit at a time as the loop goes on: its memory
// stays one page however many there are. It stops at the first error,
// which it yields.
func (in *Inbox) List(ctx context.Context, p ListParams) iter.Seq2[*StoredDelivery, error] {
	return func(yield func(*StoredDelivery, error) bool) {
		for {
			page, err := in.ListPage(ctx, p)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Deliveries {
				if !yield(&page.Deliveries[i], nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			p.After = page.Next
		}
	}
}

// listSQL returns the statement of a page of p, its arguments and the
// page's size: the statement reads one more, which tells whether another
// page follows. The conditions and the order match an index:
// invoicing_webhook_inbox_business_received with a business,
// invoicing_webhook_inbox_failed for the failed deliveries,
// invoicing_webhook_inbox_received otherwise.
func listSQL(p ListParams) (string, arguments, int, error) {
	switch {
	case p.Limit < 0 || p.Limit > MaxListLimit:
		return "", nil, 0, fmt.Errorf("%w: Limit %d is not within 0 to %d", ErrInvalidParams, p.Limit, MaxListLimit)
	case p.Status != "" && p.Status != StatusPending && p.Status != StatusProcessed && p.Status != StatusFailed:
		return "", nil, 0, fmt.Errorf("%w: Status %q is not pending, processed or failed", ErrInvalidParams, p.Status)
	}
	var where []string
	var args arguments
	if p.Status != "" {
		// A literal, checked above, so that the partial index of the
		// failed deliveries matches whatever plan the statement gets.
		where = append(where, "status = '"+p.Status+"'")
	}
	where = append(where, p.Filter.conditions(&args)...)
	if p.After != "" {
		c, err := decodeCursor(p.After)
		if err != nil {
			return "", nil, 0, err
		}
		if p.Business != nil { // the business is fixed: the rest of the key
			where = append(where, fmt.Sprintf("(received_at, delivery_id) < (%s, %s)", args.add(c.ReceivedAt), args.add(c.ID)))
		} else {
			where = append(where, fmt.Sprintf("(received_at, business, delivery_id) < (%s, %s, %s)", args.add(c.ReceivedAt), args.add(c.Business), args.add(c.ID)))
		}
	}
	limit := p.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	sql := `SELECT ` + listColumns + ` FROM ` + TableName + whereSQL(where) +
		` ORDER BY received_at DESC, business DESC, delivery_id DESC LIMIT ` + args.add(limit+1)
	return sql, args, limit, nil
}

// arguments are a statement's arguments.
type arguments []any

// add appends v to the arguments and returns its placeholder, such as $3.
func (a *arguments) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// listColumns are the columns of a StoredDelivery but its Body.
const listColumns = `business, delivery_id, event_type, signed_at, received_at, status, attempts, failures,
       coalesce(last_error, '') AS last_error, next_attempt_at, processed_at`

// conditions returns f's conditions on the table, adding their values to
// args.
func (f Filter) conditions(args *arguments) []string {
	var where []string
	if f.Business != nil {
		where = append(where, "business = "+args.add(*f.Business))
	}
	if !f.Since.IsZero() {
		where = append(where, "received_at >= "+args.add(f.Since))
	}
	return where
}

// whereSQL is the WHERE clause of conditions, "" for none.
func whereSQL(conditions []string) string {
	if len(conditions) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conditions, " AND ")
}

// normalize gives d's times in UTC.
func (d *StoredDelivery) normalize() {
	d.SignedAt, d.ReceivedAt, d.NextAttemptAt = d.SignedAt.UTC(), d.ReceivedAt.UTC(), d.NextAttemptAt.UTC()
	if d.ProcessedAt != nil {
		t := d.ProcessedAt.UTC()
		d.ProcessedAt = &t
	}
}

// cursor is the position of a page's last delivery: its key in the order
// of the listings.
type cursor struct {
	ReceivedAt time.Time
	Business   string
	ID         string
}

// encodeCursor returns the ListParams.After that starts after d.
func encodeCursor(d StoredDelivery) string {
	b, _ := json.Marshal([]any{d.ReceivedAt.UnixMicro(), d.Business, d.ID}) // strings and a number: never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a ListParams.After.
func decodeCursor(s string) (cursor, error) {
	var c cursor
	var micros int64
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		fields := []any{&micros, &c.Business, &c.ID}
		if err = json.Unmarshal(b, &fields); err == nil && len(fields) != 3 {
			err = errors.New("not three fields")
		}
	}
	if err != nil {
		return c, fmt.Errorf("%w: After %q is not a DeliveryPage.Next (%v)", ErrInvalidParams, s, err)
	}
	c.ReceivedAt = time.UnixMicro(micros)
	return c, nil
}

// getSQL reads one delivery, by its primary key.
const getSQL = `SELECT ` + listColumns + `, body FROM ` + TableName + ` WHERE business = $1 AND delivery_id = $2`

// findSQL reads the deliveries of id in every business, by the primary
// key: a descent to each business in turn (the recursive part finds the
// next business after the one before, through the index), then one to its
// delivery id, so that it costs a few index reads per business whatever
// the number of deliveries.
const findSQL = `WITH RECURSIVE businesses(business) AS (
    (SELECT business FROM ` + TableName + ` ORDER BY business LIMIT 1)
    UNION ALL
    SELECT (SELECT i.business FROM ` + TableName + ` i WHERE i.business > b.business ORDER BY i.business LIMIT 1)
    FROM businesses b WHERE b.business IS NOT NULL
)
SELECT ` + listColumns + `, body FROM ` + TableName + `
WHERE business IN (SELECT business FROM businesses WHERE business IS NOT NULL) AND delivery_id = $1
ORDER BY business`

// Get returns the delivery id of business ("" for one Handler stored),
// with its Body, or an error wrapping ErrNotFound when the inbox holds
// none.
func (in *Inbox) Get(ctx context.Context, business, id string) (*StoredDelivery, error) {
	list, err := in.query(ctx, getSQL, business, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: %q of business %q", ErrNotFound, id, business)
	}
	return &list[0], nil
}

// Find returns the deliveries whose id is id, in whichever business (the
// id of a delivery is unique within its business only), with their Body,
// by business; none when the inbox holds none. It reads the primary key a
// few times per business the inbox holds.
func (in *Inbox) Find(ctx context.Context, id string) ([]StoredDelivery, error) {
	return in.query(ctx, findSQL, id)
}

// query returns the deliveries sql reads (with their Body when it reads
// the column), never nil.
func (in *Inbox) query(ctx context.Context, sql string, args ...any) ([]StoredDelivery, error) {
	rows, err := in.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("pginbox: reading deliveries: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[StoredDelivery])
	if err != nil {
		return nil, fmt.Errorf("pginbox: reading deliveries: %w", err)
	}
	for i := range list {
		list[i].normalize()
	}
	return list, nil
}

// requeueSQL makes the deliveries $2 of business $1 pending and due now,
// but those a Worker is processing at this moment, and says for each id
// whether it was requeued and whether the table holds it.
const requeueSQL = `WITH target AS (
    SELECT business, delivery_id FROM ` + TableName + `
    WHERE business = $1 AND delivery_id = ANY($2)
    FOR UPDATE SKIP LOCKED
), requeued AS (
    UPDATE ` + TableName + ` i SET status = 'pending', next_attempt_at = now(), processed_at = NULL
    FROM target t WHERE i.business = t.business AND i.delivery_id = t.delivery_id
    RETURNING i.delivery_id
)
SELECT given.id, given.id IN (SELECT delivery_id FROM requeued),
       EXISTS (SELECT 1 FROM ` + TableName + ` WHERE business = $1 AND delivery_id = given.id)
FROM unnest($2::text[]) WITH ORDINALITY AS given(id, n)
ORDER BY given.n`

// Requeued says what Inbox.Requeue did with each id it was given.
type Requeued struct {
	// Requeued are the ids made pending and due now.
	Requeued []string
	// InProgress are the ids a Worker is processing at this moment: left
	// as they are (they are pending already).
	InProgress []string
	// NotFound are the ids the inbox does not hold for the business.
	NotFound []string
}

// Requeue has the Workers process the deliveries ids of business ("" for
// those Handler stored) again, whatever their status: each becomes
// pending and due now, as soon as a Worker is free. It is for a failed
// delivery whose cause is mended, a processed one to process again (the
// callback should then be idempotent), or a pending one to try at once
// rather than after its backoff. A requeued delivery keeps its attempts,
// failures and last error (a processed one loses its ProcessedAt until it
// is processed again); a failed one that fails again is parked again
// at once (its failures have reached Worker.MaxAttempts), so that a cause
// not mended costs one run. A delivery a Worker is processing at that
// moment is left alone (Requeued.InProgress). Requeue reports each id
// once, in one of the Requeued lists, in the order given.
func (in *Inbox) Requeue(ctx context.Context, business string, ids ...string) (*Requeued, error) {
	out := &Requeued{}
	var unique []string
	for _, id := range ids {
		if !slices.Contains(unique, id) {
			unique = append(unique, id)
		}
	}
	if len(unique) == 0 {
		return out, nil
	}
	rows, err := in.db.Query(ctx, requeueSQL, business, unique)
	if err != nil {
		return nil, fmt.Errorf("pginbox: requeueing deliveries: %w", err)
	}
	var id string
	var requeued, held bool
	_, err = pgx.ForEachRow(rows, []any{&id, &requeued, &held}, func() error {
		switch {
		case requeued:
			out.Requeued = append(out.Requeued, id)
		case held:
			out.InProgress = append(out.InProgress, id)
		default:
			out.NotFound = append(out.NotFound, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pginbox: requeueing deliveries: %w", err)
	}
	return out, nil
}

// RequeueFailed has the Workers process again every delivery parked as
// failed that f selects (a business, received since a time), as Requeue
// does for each, and returns how many it requeued. It walks the failed
// deliveries oldest first through their index, requeueing a thousand per
// statement, each a short transaction of its own (with a pgx.Tx, all in
// that one): memory and locks stay small however many there are, and a
// delivery that fails again meanwhile is not requeued twice. When ctx ends
// midway, the deliveries requeued so far stay requeued.
func (in *Inbox) RequeueFailed(ctx context.Context, f Filter) (int64, error) {
	var total int64
	var after *cursor
	for {
		var args arguments
		where := append([]string{"status = 'failed'"}, f.conditions(&args)...)
		if after != nil {
			where = append(where, fmt.Sprintf("(received_at, business, delivery_id) > (%s, %s, %s)",
				args.add(after.ReceivedAt), args.add(after.Business), args.add(after.ID)))
		}
		sql := `WITH batch AS (
    SELECT business, delivery_id FROM ` + TableName + whereSQL(where) + `
    ORDER BY received_at, business, delivery_id LIMIT ` + strconv.Itoa(requeueBatch) + `
    FOR UPDATE
), requeued AS (
    UPDATE ` + TableName + ` i SET status = 'pending', next_attempt_at = now()
    FROM batch b WHERE i.business = b.business AND i.delivery_id = b.delivery_id
    RETURNING i.received_at, i.business, i.delivery_id
)
SELECT received_at, business, delivery_id, count(*) OVER () FROM requeued
ORDER BY received_at DESC, business DESC, delivery_id DESC LIMIT 1`
		var last cursor
		var n int64
		err := in.db.QueryRow(ctx, sql, args...).Scan(&last.ReceivedAt, &last.Business, &last.ID, &n)
		if errors.Is(err, pgx.ErrNoRows) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("pginbox: requeueing failed deliveries (%d requeued): %w", total, err)
		}
		total += n
		if n < requeueBatch {
			return total, nil
		}
		after = &last
	}
}
