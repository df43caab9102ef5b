package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_pending_fetch: the records events named, waiting to be fetched;
// mirror_fetch_numbers numbers each business's fetches; mirror_event_lag
// keeps the event lag of the records written in the last hour.

// dueWhere is the condition of a request f that a fetcher may claim: due,
// not leased (or its lease expired), its business not paused.
const dueWhere = `f.due_at <= now() AND (f.lease_until IS NULL OR f.lease_until <= now())
  AND NOT EXISTS (SELECT 1 FROM @.mirror_budgets AS g WHERE g.business = f.business AND g.paused_until > now())`

const (
	// nextSeqSQL takes business $1's next fetch number.
	nextSeqSQL = `INSERT INTO @.mirror_fetch_numbers AS n (business) VALUES ($1)
ON CONFLICT (business) DO UPDATE SET last = n.last + 1
RETURNING last`

	// dueSQL reads which of the businesses $1 have requests to claim, how
	// many (at most $3 each), earliest due first, at most $2 businesses. It
	// only reads: the claims are per business (claimSQL).
	dueSQL = `SELECT b.business, (SELECT count(*) FROM (SELECT 1 FROM @.mirror_pending_fetch AS f
                            WHERE f.business = b.business AND ` + dueWhere + ` LIMIT $3) AS n)
FROM (SELECT f.business, min(f.due_at) AS first FROM @.mirror_pending_fetch AS f
      WHERE f.business = ANY($1::text[]) AND ` + dueWhere + `
      GROUP BY f.business) AS b
ORDER BY b.first
LIMIT $2`

	// claimSQL leases up to $2 of business $1's requests that a fetcher
	// may claim, earliest due first, skipping those another fetcher is
	// claiming, for $3: a lease lets another fetcher take the record over
	// once expired. The claimed records share one fetch number of the
	// business, taken before their requests are sent.
	claimSQL = `WITH due AS (
	SELECT f.resource, f.id FROM @.mirror_pending_fetch AS f
	WHERE f.business = $1 AND ` + dueWhere + `
	ORDER BY f.due_at
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), number AS (
	INSERT INTO @.mirror_fetch_numbers AS n (business) SELECT $1 WHERE EXISTS (SELECT 1 FROM due)
	ON CONFLICT (business) DO UPDATE SET last = n.last + 1
	RETURNING last
)
UPDATE @.mirror_pending_fetch AS p
SET lease_until = now() + $3::interval, attempts = p.attempts + 1
FROM due
WHERE p.business = $1 AND p.resource = due.resource AND p.id = due.id
RETURNING p.resource, p.id, p.request_seq, p.attempts, p.not_found, (SELECT last FROM number),
	extract(epoch FROM now() - p.requested_at)::float8`

	// settleSQL settles the fetches of the records $3 of resource $2 of
	// business $1, claimed with the request_seqs $4 (in the order of $3):
	// it records their event lags ($6, none for a record not written),
	// removes each one's request unless another came in while it was
	// fetched, and makes those asked for again due after the coalescing
	// window ($5). The ids are found through the key (id = ANY), the
	// request_seqs matched in a filter, so no plan joins the table; the
	// update sees the rows as they were before the delete, and leaves out
	// those it removed.
	settleSQL = `WITH lag AS (
	INSERT INTO @.mirror_event_lag (business, resource, lag_seconds) SELECT $1, $2, unnest($6::float8[])
), done AS (
	DELETE FROM @.mirror_pending_fetch WHERE business = $1 AND resource = $2 AND id = ANY($3::text[])
		AND request_seq = ($4::bigint[])[array_position($3::text[], id)]
	RETURNING id
)
UPDATE @.mirror_pending_fetch
SET lease_until = NULL, attempts = 0, not_found = 0, last_error = NULL, requested_at = now(), due_at = now() + $5::interval
WHERE business = $1 AND resource = $2 AND id = ANY($3::text[]) AND id NOT IN (SELECT id FROM done)`

	// retrySQL records a failed fetch: $4 the error, $5 1 for a 404, $6 the
	// wait.
	retrySQL = `UPDATE @.mirror_pending_fetch
SET lease_until = NULL, last_error = $4, not_found = not_found + $5, due_at = now() + $6::interval
WHERE business = $1 AND resource = $2 AND id = $3`

	// releaseSQL gives a record back untried, as a fetcher stops.
	releaseSQL = `UPDATE @.mirror_pending_fetch SET lease_until = NULL, attempts = greatest(attempts - 1, 0)
WHERE business = $1 AND resource = $2 AND id = $3`

	dropSQL = `DELETE FROM @.mirror_pending_fetch WHERE business = $1 AND resource = $2 AND id = $3`

	// requestSQL asks for records ($2 resources, $3 ids) of business $1 to
	// be fetched after the coalescing window ($4), for the delivery $5
	// stored for the business $6 (the inbox's key, whose index the lookup
	// uses; "" for a Handler's deliveries): the request is dated when the
	// Handler received the delivery (the start of the event's lag), and due
	// a window later. A record already waiting keeps its earliest request
	// and due time and counts one more request, so that a fetcher working
	// on it sees that it must fetch it again.
	requestSQL = `INSERT INTO @.mirror_pending_fetch AS p (business, resource, id, due_at, requested_at)
SELECT $1, u.resource, u.id, r.at + $4::interval, r.at
FROM unnest($2::text[], $3::text[]) AS u(resource, id),
     (SELECT coalesce(min(received_at), now()) AS at FROM @.` + pginbox.TableName + ` WHERE business = $6 AND delivery_id = $5) AS r
ORDER BY 2, 3
ON CONFLICT (business, resource, id) DO UPDATE
SET request_seq = p.request_seq + 1, due_at = least(p.due_at, EXCLUDED.due_at),
    requested_at = least(p.requested_at, EXCLUDED.requested_at)`

	pruneLagSQL = `DELETE FROM @.mirror_event_lag WHERE written_at < now() - $1::interval`
)

// NextSeq takes the next fetch number of business: greater than every
// number the business took before.
func (s *Store) NextSeq(ctx context.Context, business string) (int64, error) {
	var seq int64
	err := scan(ctx, s.pool, "taking a fetch number", s.q(nextSeqSQL), []any{business}, &seq)
	return seq, err
}

// A Claim is a leased request to fetch a record.
type Claim struct {
	Business, Resource, ID string
	RequestSeq             int64
	Attempts, NotFound     int
	Seq                    int64 // the fetch's number, of its business
	// Waited is how long ago, by the database's clock, the record was first
	// asked for (the delivery naming it was received) when it was claimed,
	// at Claimed by the replica's clock: the two give the event's lag
	// without comparing the clocks.
	Waited  time.Duration
	Claimed time.Time
}

// Claim leases up to n requests that fetchers may claim, of businesses[i]
// at most room[i], for lease. The businesses take turns, earliest due
// first: each one's first request, then each one's second, and so on. It
// reads across the businesses once (dueSQL), then claims each business's
// share in a statement of its own (claimSQL): a business at a time, in
// name order, so that two fetchers' claims never wait on each other in
// opposite orders.
func (s *Store) Claim(ctx context.Context, lease time.Duration, n int, businesses []string, room []int) ([]Claim, error) {
	const op = "claiming records to fetch"
	most := 0
	for i := range room {
		most = max(most, room[i])
	}
	type due struct {
		business string
		n        int
	}
	// dueSQL is planned for its arguments each time (an unnamed statement),
	// not with the plan cached for any: a plan made for the array of
	// businesses as it is hashes it, where a cached one compares each
	// request with every business (1.6 ms a call at 1,000 businesses,
	// against 0.66 ms, planning included).
	dues, err := collect(ctx, s.pool, op, s.q(dueSQL), []any{pgx.QueryExecModeExec, businesses, n, most}, func(r pgx.CollectableRow) (due, error) {
		var d due
		return d, r.Scan(&d.business, &d.n)
	})
	if err != nil || len(dues) == 0 {
		return nil, err
	}
	rooms := make(map[string]int, len(businesses))
	for i, b := range businesses {
		rooms[b] = room[i]
	}
	// The turns: a share of one more request per business per round.
	share := make(map[string]int, len(dues))
	for left := n; left > 0; {
		given := 0
		for _, d := range dues {
			if left > 0 && share[d.business] < min(d.n, rooms[d.business]) {
				share[d.business]++
				left--
				given++
			}
		}
		if given == 0 {
			break
		}
	}
	names := make([]string, 0, len(share))
	for b := range share {
		names = append(names, b)
	}
	slices.Sort(names)
	b := &pgx.Batch{}
	var claims []Claim
	for _, name := range names {
		b.Queue(s.q(claimSQL), name, share[name], lease).Query(func(rows pgx.Rows) error {
			now := time.Now()
			for rows.Next() {
				c := Claim{Business: name, Claimed: now}
				var waited float64
				if err := rows.Scan(&c.Resource, &c.ID, &c.RequestSeq, &c.Attempts, &c.NotFound, &c.Seq, &waited); err != nil {
					return err
				}
				c.Waited = time.Duration(waited * float64(time.Second))
				claims = append(claims, c)
			}
			return rows.Err()
		})
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fail(op, err)
	}
	return claims, nil
}

// MaxGrouped is how many records of a resource one transaction writes
// with their own locks (see WriteLocks): a write of more takes the
// resource's lock, and waits for every other writer of it.
const MaxGrouped = maxBuckets

// Fetched settles the requests of records fetched and written in tx,
// claims cs, all of one business and resource, with their event lags
// (lags[i] of cs[i]): each is removed, or, when another request came in
// during its fetch, made due again after window. Its statement is queued
// (Tx.queue).
func (tx *Tx) Fetched(ctx context.Context, cs []Claim, lags []time.Duration, window time.Duration) error {
	const op = "settling a fetch"
	if len(cs) == 0 {
		return nil
	}
	business, resource := cs[0].Business, cs[0].Resource
	ids, seqs, secs := make([]string, len(cs)), make([]int64, len(cs)), make([]float64, len(cs))
	for i, c := range cs {
		if c.Business != business || c.Resource != resource {
			return fail(op, fmt.Errorf("claims of %s/%s and %s/%s settled together", business, resource, c.Business, c.Resource))
		}
		ids[i], seqs[i], secs[i] = c.ID, c.RequestSeq, lags[i].Seconds()
	}
	return tx.queue(ctx, op, tx.s.q(settleSQL), business, resource, ids, seqs, window, secs)
}

// Drop removes the request of a record that cannot be fetched, or, when
// another request came in during the fetch, makes it due again after
// window.
func (s *Store) Drop(ctx context.Context, c Claim, window time.Duration) error {
	_, err := exec(ctx, s.pool, "settling a fetch", s.q(settleSQL), c.Business, c.Resource, []string{c.ID}, []int64{c.RequestSeq}, window, []float64{})
	return err
}

// Retry records a failed fetch (reason, a 404 or not) and makes the record
// due again after wait.
func (s *Store) Retry(ctx context.Context, c Claim, reason string, notFound bool, wait time.Duration) error {
	nf := 0
	if notFound {
		nf = 1
	}
	_, err := exec(ctx, s.pool, "recording a failed fetch", s.q(retrySQL), c.Business, c.Resource, c.ID, clip(reason), nf, wait)
	return err
}

// Release gives a claimed record back untried.
func (s *Store) Release(ctx context.Context, c Claim) error {
	_, err := exec(ctx, s.pool, "giving back a record to fetch", s.q(releaseSQL), c.Business, c.Resource, c.ID)
	return err
}

// Forget removes the request of a record this version cannot fetch.
func (s *Store) Forget(ctx context.Context, c Claim) error {
	_, err := exec(ctx, s.pool, "dropping a request to fetch", s.q(dropSQL), c.Business, c.Resource, c.ID)
	return err
}

// RequestFetches asks in tx for the records (resources[i], ids[i]) of
// business to be fetched after window, for the delivery deliveryID the
// inbox stored under inboxBusiness (see requestSQL).
func (tx *Tx) RequestFetches(ctx context.Context, business string, resources, ids []string, window time.Duration, deliveryID, inboxBusiness string) error {
	_, err := exec(ctx, tx.tx, "requesting fetches for delivery "+deliveryID, tx.s.q(requestSQL),
		business, resources, ids, window, deliveryID, inboxBusiness)
	return err
}

// PruneLag deletes the event lags older than window.
func (s *Store) PruneLag(ctx context.Context, window time.Duration) error {
	_, err := exec(ctx, s.pool, "deleting old event lags", s.q(pruneLagSQL), window)
	return err
}
