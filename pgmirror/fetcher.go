package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// claimSQL leases up to $2 of the due records that no other fetcher holds,
// of the businesses $3 (those this replica serves, not paused, with fewer
// than $4 fetches in progress here), taking turns: each business's
// earliest due first, then each one's second, and so on, at most $4 of
// one business. A lease ($1) lets another fetcher take the record over
// once expired. It also takes each fetch's sequence number, before the
// request is sent.
const claimSQL = `UPDATE mirror_pending_fetch AS p
SET lease_until = now() + $1::interval, attempts = p.attempts + 1
FROM (SELECT business, resource, id FROM (
        SELECT d.business, d.resource, d.id, d.due_at, row_number() OVER (PARTITION BY d.business ORDER BY d.due_at) AS turn
        FROM (SELECT DISTINCT business FROM mirror_pending_fetch WHERE business = ANY($3::text[]) AND due_at <= now()) AS b
        CROSS JOIN LATERAL (
            SELECT f.business, f.resource, f.id, f.due_at FROM mirror_pending_fetch AS f
            WHERE f.business = b.business AND f.due_at <= now() AND (f.lease_until IS NULL OR f.lease_until <= now())
              AND NOT EXISTS (SELECT 1 FROM mirror_budgets AS g WHERE g.business = b.business AND g.paused_until > now())
            ORDER BY f.due_at
            LIMIT $4
            FOR UPDATE SKIP LOCKED) AS d) AS ranked
      ORDER BY turn, due_at
      LIMIT $2) AS due
WHERE p.business = due.business AND p.resource = due.resource AND p.id = due.id
RETURNING p.business, p.resource, p.id, p.request_seq, p.attempts, p.not_found, nextval('mirror_fetch_seq'),
	extract(epoch FROM now() - p.requested_at)::float8`

// doneSQL removes a fetched record's request ($1 resource, $2 id, $4
// business), unless another request came in while it was fetched ($3, the
// request_seq it was claimed with).
const doneSQL = `DELETE FROM mirror_pending_fetch WHERE business = $4 AND resource = $1 AND id = $2 AND request_seq = $3`

// againSQL makes a record ($1 resource, $2 id, $4 business) asked for
// again during its fetch due after the coalescing window ($3).
const againSQL = `UPDATE mirror_pending_fetch
SET lease_until = NULL, attempts = 0, not_found = 0, last_error = NULL, requested_at = now(), due_at = now() + $3::interval
WHERE business = $4 AND resource = $1 AND id = $2`

// retrySQL records a failed fetch of a record ($1 resource, $2 id, $6
// business): $3 the error, $4 1 for a 404, $5 the wait.
const retrySQL = `UPDATE mirror_pending_fetch
SET lease_until = NULL, last_error = $3, not_found = not_found + $4, due_at = now() + $5::interval
WHERE business = $6 AND resource = $1 AND id = $2`

// releaseSQL gives a record ($1 resource, $2 id, $3 business) back untried,
// as a fetcher stops.
const releaseSQL = `UPDATE mirror_pending_fetch SET lease_until = NULL, attempts = greatest(attempts - 1, 0)
WHERE business = $3 AND resource = $1 AND id = $2`

// maxNotFound is how many 404s in a row drop a request: the API deletes
// nothing, so a record an event named but the service does not show is
// given a few chances (it may not be readable yet) and then logged.
const maxNotFound = 3

// maxFetchBackoff caps the wait between attempts to fetch one record.
const maxFetchBackoff = 5 * time.Minute

// writeTimeout bounds writing what a fetch or a page returned, after the
// caller's context ended: the work done is not thrown away.
const writeTimeout = 30 * time.Second

// claim is a leased request to fetch a record.
type claim struct {
	business     string
	resource, id string
	requestSeq   int64
	attempts     int
	notFound     int
	seq          int64 // the fetch's sequence number
	// waited is how long ago, by the database's clock, the record was first
	// asked for (the delivery naming it was received) when it was claimed,
	// at claimed by the replica's clock: the two give the event's lag
	// without comparing the clocks.
	waited  float64
	claimed time.Time
}

// RunFetchers fetches the records that events asked for, once their
// coalescing window has passed, until ctx ends, Config.Fetchers at a time,
// and returns once the fetches in progress are written. Any number of
// replicas may run it: each request is leased by one fetcher (SKIP LOCKED),
// and a lease whose fetcher died expires after FetchLease. A request that
// comes in while its record is being fetched makes the record be fetched
// again. Run runs it.
//
// One loop claims due requests, as many as there are idle fetchers, and
// looks again every PollInterval, or as soon as a fetch ends while the
// last claim filled every fetcher; while the database fails, it waits
// longer after each failure (a second, doubling, at most 30 seconds). The
// database's failures, and the service's (a network error, a 5xx, a 429),
// are logged once when they start and once when they end, not per fetch.
func (m *Mirror) RunFetchers(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	busy := make(chan struct{}, m.cfg.Fetchers) // one token per fetch in progress
	freed := make(chan struct{}, 1)
	var mu sync.Mutex
	inFlight := map[string]int{} // fetches in progress by business
	perBusiness := 0             // the fetches of one business at once: a share, so that its backlog leaves fetchers to the others
	failures := 0                // claims failed in a row
	pruned := time.Time{}
	for ctx.Err() == nil {
		idle := cap(busy) - len(busy)
		if idle == 0 {
			select {
			case <-freed:
			case <-ctx.Done():
			}
			continue
		}
		mu.Lock()
		var eligible []string
		ts := m.tenantList()
		// Alone, a business has every fetcher; among others, a half, a
		// third, and at most a quarter.
		perBusiness = max(1, m.cfg.Fetchers/min(max(len(ts), 1), 4))
		for _, t := range ts {
			if inFlight[t.name] < perBusiness {
				eligible = append(eligible, t.name)
			}
		}
		mu.Unlock()
		claims, err := m.claim(ctx, idle, eligible, perBusiness)
		if err != nil && ctx.Err() == nil {
			failures++
			wait := retryWait(failures)
			m.databaseFailed(ctx, err, "pgmirror: claiming records to fetch", "failures", failures, "retry_in", wait.String())
			m.db.sleep(ctx, wait)
			continue
		}
		failures = 0
		m.db.ok(ctx)
		if time.Since(pruned) >= lagPruneInterval {
			pruned = time.Now()
			m.pruneLag(ctx)
		}
		for _, c := range claims {
			busy <- struct{}{}
			mu.Lock()
			inFlight[c.business]++
			mu.Unlock()
			wg.Go(func() {
				if err := m.fetch(ctx, c); err != nil && ctx.Err() == nil {
					m.databaseFailed(ctx, err, "pgmirror: fetching a requested record", "business", c.business, "resource", c.resource, "id", c.id)
				}
				mu.Lock()
				if inFlight[c.business]--; inFlight[c.business] == 0 {
					delete(inFlight, c.business)
				}
				mu.Unlock()
				<-busy
				select {
				case freed <- struct{}{}:
				default:
				}
			})
		}
		if len(claims) < idle { // nothing more is due: wait a while
			sleep(ctx, jitter(m.cfg.PollInterval))
		}
	}
}

// claim leases up to n due requests of the businesses, at most
// perBusiness of each (see claimSQL). A database that does not answer
// within pingTimeout counts as away: a hang is noticed, and logged, as an
// outage is.
func (m *Mirror) claim(ctx context.Context, n int, businesses []string, perBusiness int) ([]claim, error) {
	if len(businesses) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	rows, err := m.pool.Query(ctx, claimSQL, m.cfg.FetchLease, n, businesses, perBusiness)
	if err != nil {
		return nil, err
	}
	var out []claim
	for rows.Next() {
		var c claim
		if err := rows.Scan(&c.business, &c.resource, &c.id, &c.requestSeq, &c.attempts, &c.notFound, &c.seq, &c.waited); err != nil {
			rows.Close()
			return out, err
		}
		c.claimed = time.Now()
		out = append(out, c)
	}
	return out, rows.Err()
}

// fetch fetches a claimed record and writes it with the never-older rule in
// a transaction that also settles the request. Its error is a database
// failure (a failed fetch is recorded for a later attempt, not returned).
func (m *Mirror) fetch(ctx context.Context, c claim) error {
	t := m.tenant(c.business)
	if t == nil { // removed meanwhile: its requests wait for it to come back
		m.release(c)
		return nil
	}
	return t.fetch(ctx, c)
}

// fetch fetches a claimed record of the business (see Mirror.fetch).
func (m *tenant) fetch(ctx context.Context, c claim) error {
	res := resourceNamed(c.resource)
	if res == nil || res.get == nil {
		m.log.ErrorContext(ctx, "pgmirror: dropping a request for a record this version cannot fetch",
			"resource", c.resource, "id", c.id)
		_, err := m.pool.Exec(ctx, `DELETE FROM mirror_pending_fetch WHERE business = $3 AND resource = $1 AND id = $2`,
			c.resource, c.id, c.business)
		return err
	}
	fetchCtx, cancel := context.WithTimeout(ctx, m.cfg.FetchLease/2)
	r, err := res.get(fetchCtx, m.cfg.Client, c.id, m.opts...)
	cancel()
	if err != nil {
		return m.fetchFailed(ctx, c, err)
	}
	m.answered(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	var written []string
	var lag float64
	err = m.inTx(wctx, func(tx pgx.Tx) error {
		var err error
		if written, err = apply(wctx, tx, res, []row{r}, c.seq); err != nil {
			return err
		}
		lag = c.waited + time.Since(c.claimed).Seconds()
		if _, err := tx.Exec(wctx, lagSQL, c.resource, lag, c.business); err != nil {
			return err
		}
		tag, err := tx.Exec(wctx, doneSQL, c.resource, c.id, c.requestSeq, c.business)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		_, err = tx.Exec(wctx, againSQL, c.resource, c.id, m.cfg.CoalesceWindow, c.business)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing: %w", err) // its lease expires: it is fetched again
	}
	m.metrics.observeLag(c.resource, lag)
	m.log.DebugContext(ctx, "pgmirror: fetched", "resource", c.resource, "id", c.id, "changed", len(written) > 0)
	return nil
}

// fetchFailed records a failed fetch: the record is tried again after a
// backoff (honouring a Retry-After), except after maxNotFound 404s in a row
// or for an id the API cannot take, which are logged and dropped. A fetch
// cut short because the fetcher stops gives the record back untried. A
// failure of the service rather than of the record (a network error, a
// 5xx, a 429) or of its key (401, 403) pauses the business (pauseFailed),
// whose API dependency logs the first; a paused business's record waits
// for the pause's end.
func (m *tenant) fetchFailed(ctx context.Context, c claim, err error) error {
	var p *errPaused
	switch {
	case ctx.Err() != nil:
		m.release(c)
		return nil
	case m.databaseAway(err):
		m.release(c)
		return err
	case errors.As(err, &p):
		_, dbErr := m.pool.Exec(ctx, retrySQL, c.resource, c.id, clip(err.Error()), 0, time.Until(p.until), c.business)
		return dbErr
	}
	var paramErr *invoicing.ParamError
	notFound := errors.Is(err, invoicing.ErrNotFound)
	if errors.As(err, &paramErr) || (notFound && c.notFound+1 >= maxNotFound) {
		m.log.WarnContext(ctx, "pgmirror: the service does not show a record an event named; dropping the request",
			"resource", c.resource, "id", c.id, "attempts", c.attempts, "error", err.Error())
		tag, err := m.pool.Exec(ctx, doneSQL, c.resource, c.id, c.requestSeq, c.business)
		if err == nil && tag.RowsAffected() == 0 { // another event named it meanwhile: try that one
			_, err = m.pool.Exec(ctx, againSQL, c.resource, c.id, m.cfg.CoalesceWindow, c.business)
		}
		return err
	}
	wait := backoff(c.attempts, err)
	logAt := m.log.WarnContext
	switch {
	case !notFound && !permanent(err):
		m.pauseFailed(ctx, err)
		logAt = m.log.DebugContext
	case refused(err):
		m.pauseFailed(ctx, err)
		wait = max(wait, refusedPause)
	case c.attempts >= 5:
		logAt = m.log.ErrorContext // long enough to need a look
	}
	logAt(ctx, "pgmirror: fetch failed; trying again later", "resource", c.resource, "id", c.id,
		"attempts", c.attempts, "retry_in", wait.String(), "error", err.Error())
	nf := 0
	if notFound {
		nf = 1
	}
	_, dbErr := m.pool.Exec(ctx, retrySQL, c.resource, c.id, clip(err.Error()), nf, wait, c.business)
	return dbErr
}

// release gives a leased record back so that any fetcher takes it at once.
func (m *Mirror) release(c claim) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if _, err := m.pool.Exec(ctx, releaseSQL, c.resource, c.id, c.business); err != nil {
		m.databaseFailed(ctx, err, "pgmirror: giving back a record to fetch; its lease will expire", "resource", c.resource, "id", c.id)
	}
}

// databaseFailed reports err, a failure of a statement: to the database's
// dependency when it means that the database is away (which logs the first
// such failure), and otherwise to the log at Error, with msg and args.
func (m *Mirror) databaseFailed(ctx context.Context, err error, msg string, args ...any) {
	if unreachable(err) {
		m.db.failed(ctx, err)
		return
	}
	m.log.ErrorContext(ctx, msg, append(args, "error", oneLine(err))...)
}

// backoff is the wait before attempt n+1 after a failure: a second,
// doubling, at most maxFetchBackoff, and at least what a 429 or 503 asked
// for in Retry-After.
func backoff(attempts int, err error) time.Duration {
	wait := time.Second << min(max(attempts-1, 0), 16)
	wait = min(wait, maxFetchBackoff)
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > wait {
		wait = apiErr.RetryAfter
	}
	return wait
}

// jitter returns d give or take a tenth.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - d/10 + rand.N(d/5+1)
}

// sleep waits for d or until ctx ends, and reports whether ctx is still
// alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// clip makes an error message storable as text: at most 2000 bytes of valid
// UTF-8 without NUL bytes.
func clip(s string) string {
	if len(s) > 2000 {
		s = s[:2000]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
