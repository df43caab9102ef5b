package pgmirror

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// maxNotFound is how many 404s in a row drop a request: the API deletes
// nothing, so a record an event named but the service does not show is
// given a few chances (it may not be readable yet) and then logged.
const maxNotFound = 3

// writeTimeout bounds writing what a fetch or a page returned, after the
// caller's context ended: the work done is not thrown away.
const writeTimeout = 30 * time.Second

// pingTimeout bounds one look at the database that may hang: a hang is
// noticed, and logged, as an outage is.
const pingTimeout = 10 * time.Second

// The event lag of a record is the time from the delivery of an event
// naming it (when the Handler received it) to the commit of the row a
// fetch wrote for it: the coalescing window, the queues, the fetch and the
// write. Each fetcher write records it in mirror_event_lag, for the status
// command's percentiles, and in Metrics' histogram.

// lagWindow is how long mirror_event_lag keeps a write's lag.
const lagWindow = time.Hour

// fetchers are the state of the fetch loop: Config.Fetchers fetches at once,
// each business's share of them.
type fetchers struct {
	busy     chan struct{} // a token per fetch in progress
	freed    chan struct{} // a fetch ended
	mu       sync.Mutex
	inFlight map[string]int // fetches in progress by business
}

// fetchStep is the step of the loop that fetches the records events asked
// for, once their coalescing window has passed (see RunFetchers): it
// waits for an idle fetcher if none is, claims due requests, as many as
// there are idle fetchers, and starts their fetches; the loop looks again
// at once when the claim filled every idle fetcher, else after
// PollInterval. Alone, a business has every fetcher; among others, a half,
// a third, and at most a quarter, so that its backlog leaves fetchers to
// the others. Every step claims (a step that did not reach the database
// would tell the supervisor that it answers).
func (m *Mirror) fetchStep(sup *supervisor) step {
	f := &fetchers{busy: make(chan struct{}, m.cfg.Fetchers), freed: make(chan struct{}, 1), inFlight: map[string]int{}}
	return func(ctx context.Context) (time.Duration, error) {
		for len(f.busy) == cap(f.busy) {
			select {
			case <-f.freed:
			case <-ctx.Done():
				return 0, nil
			}
		}
		idle := cap(f.busy) - len(f.busy)
		ts := m.tenants.all()
		perBusiness := max(1, m.cfg.Fetchers/min(max(len(ts), 1), 4))
		var eligible []string
		var room []int
		f.mu.Lock()
		for _, t := range ts {
			if r := perBusiness - f.inFlight[t.name]; r > 0 {
				eligible, room = append(eligible, t.name), append(room, r)
			}
		}
		f.mu.Unlock()
		cctx, cancel := context.WithTimeout(ctx, pingTimeout)
		claims, err := m.store.Claim(cctx, m.cfg.FetchLease, idle, eligible, room)
		cancel()
		if err != nil {
			return 0, err
		}
		for _, g := range groups(claims) {
			business := g[0].Business
			f.mu.Lock()
			f.inFlight[business] += len(g)
			f.mu.Unlock()
			for range g {
				f.busy <- struct{}{}
			}
			sup.do(func(ctx context.Context) error {
				defer func() {
					f.mu.Lock()
					if f.inFlight[business] -= len(g); f.inFlight[business] == 0 {
						delete(f.inFlight, business)
					}
					f.mu.Unlock()
					for range g {
						<-f.busy
					}
					select {
					case f.freed <- struct{}{}:
					default:
					}
				}()
				return m.fetch(ctx, g)
			})
		}
		if len(claims) < idle { // nothing more is due: wait a while
			return jitter(m.cfg.PollInterval), nil
		}
		return 0, nil
	}
}

// groups splits claims into the groups fetched together and written in
// one transaction: the claims of one business and resource with one fetch
// number (a business's claims in one Claim share it), at most
// store.MaxGrouped a group, in the order claimed. A transaction, its locks
// and its statements then serve up to MaxGrouped events instead of one.
func groups(claims []store.Claim) [][]store.Claim {
	type key struct {
		business, resource string
		seq                int64
	}
	var out [][]store.Claim
	open := map[key]int{} // the index in out of each key's group being filled
	for _, c := range claims {
		k := key{c.Business, c.Resource, c.Seq}
		i, ok := open[k]
		if !ok || len(out[i]) == store.MaxGrouped {
			i = len(out)
			out = append(out, nil)
			open[k] = i
		}
		out[i] = append(out[i], c)
	}
	return out
}

// fetch fetches a group of claimed records (see groups) and writes them
// with the never-older rule, in one transaction that also settles their
// requests; a failed fetch is recorded for a later attempt, and decided
// (see failed). It returns the error that must stop the mirror, if any.
func (m *Mirror) fetch(ctx context.Context, cs []store.Claim) error {
	t := m.tenants.named(cs[0].Business)
	if t == nil { // removed meanwhile: its requests wait for it to come back
		for _, c := range cs {
			m.release(ctx, c)
		}
		return nil
	}
	err := t.fetch(ctx, cs)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	_, stop := m.failed(ctx, t, "fetching a requested record", err, 1)
	return stop
}

// fetch fetches claimed records of the business, all of one resource with
// one fetch number, at once, and writes those it got (see Mirror.fetch).
func (t *tenant) fetch(ctx context.Context, cs []store.Claim) error {
	m := t.m
	res := resourceNamed(cs[0].Resource)
	if res == nil || res.get == nil {
		var errs []error
		for _, c := range cs {
			t.log.ErrorContext(ctx, "pgmirror: dropping a request for a record this version cannot fetch",
				"resource", c.Resource, "id", c.ID)
			errs = append(errs, m.store.Forget(ctx, c))
		}
		return errors.Join(errs...)
	}
	rows, errs := make([]store.Row, len(cs)), make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { rows[i], errs[i] = t.fetchOne(ctx, res, c) })
	}
	wg.Wait()
	var got []store.Row
	var fetched []store.Claim
	var failures []error
	for i, c := range cs {
		switch err := errs[i]; {
		case err == nil:
			got, fetched = append(got, rows[i]), append(fetched, c)
		case errors.Is(err, errNoToken):
			m.release(ctx, c)
		default:
			failures = append(failures, t.fetchFailed(ctx, c, err))
		}
	}
	if len(fetched) == 0 {
		return errors.Join(failures...)
	}
	t.answered(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	var written []string
	lags := make([]time.Duration, len(fetched))
	for i, c := range fetched {
		lags[i] = c.Waited + time.Since(c.Claimed)
	}
	err := t.writeIn(wctx, CauseEvent, res, rowIDs(got), func(w *writeTx) error {
		var err error
		if written, err = apply(wctx, w, res, got, fetched[0].Seq); err != nil {
			return err
		}
		return w.Fetched(wctx, fetched, lags, m.cfg.CoalesceWindow)
	})
	switch {
	case errors.Is(err, errStaleSelection): // fetched again at once, under the Selection recorded
		for _, c := range fetched {
			m.release(ctx, c)
		}
		return errors.Join(failures...)
	case err != nil:
		return errors.Join(append(failures, err)...) // their leases expire: they are fetched again
	}
	for i, c := range fetched {
		m.metrics.observeLag(c.Resource, lags[i].Seconds())
		_, changed := slices.BinarySearch(written, c.ID)
		t.log.DebugContext(ctx, "pgmirror: fetched", "resource", c.Resource, "id", c.ID, "changed", changed)
	}
	return errors.Join(failures...)
}

// errNoToken is fetchOne's when the business's budget had no token for a
// record within half the lease: it is given back untried, the wait not
// counted against the service.
var errNoToken = errors.New("pgmirror: no token of the budget within half the lease")

// fetchOne takes a token of the business's budget, within half the lease,
// and gets claimed record c of res, within the other half.
func (t *tenant) fetchOne(ctx context.Context, res *resource, c store.Claim) (store.Row, error) {
	m := t.m
	readyCtx, cancel := context.WithTimeout(ctx, m.cfg.FetchLease/2)
	err := t.budget.events.ready(readyCtx)
	cancel()
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return store.Row{}, errNoToken
	case err != nil:
		return store.Row{}, classify(ctx, err)
	}
	fetchCtx, cancel := context.WithTimeout(ctx, m.cfg.FetchLease/2)
	defer cancel()
	return t.get(fetchCtx, res, c.ID, t.fetchOpts)
}

// fetchFailed records a failed fetch: the record is tried again after its
// backoff (at most maxRecordBackoff, or what a Retry-After asks), and not
// before the business's pause ends, except after maxNotFound 404s in a row
// or a request the service rejects, which are logged and dropped. A failure
// of the service rather than of the record (a network error, a 5xx, a 429)
// or of the business's key (401, 403) is the business's (see failed). A
// fetch cut short because the fetcher stops, or whose budget's statement
// failed, gives the record back untried. Its error is the database's, or
// the one that must stop the mirror.
func (t *tenant) fetchFailed(ctx context.Context, c store.Claim, err error) error {
	m := t.m
	var dbErr *store.Error
	var apiErr *apiError
	switch {
	case ctx.Err() != nil:
		m.release(ctx, c)
		return nil
	case errors.As(err, &dbErr):
		m.release(ctx, c)
		return err
	case errors.Is(err, errStaleSelection): // this replica takes the business's new Selection meanwhile
		return m.store.Retry(ctx, c, err.Error(), false, time.Second)
	case errors.As(err, new(*stopError)): // the mirror stops (another replica changed the Selection): given back untried
		m.release(ctx, c)
		return err
	case !errors.As(err, &apiErr):
		apiErr = &apiError{kind: apiRejected, err: err} // the record cannot be written (not the service's failure)
	}
	switch {
	case apiErr.kind == apiPaused:
		return m.store.Retry(ctx, c, err.Error(), false, time.Until(apiErr.until))
	case apiErr.kind == apiRejected || (apiErr.kind == apiNotFound && c.NotFound+1 >= maxNotFound):
		t.log.WarnContext(ctx, "pgmirror: the service does not show a record an event named; dropping the request",
			"resource", c.Resource, "id", c.ID, "attempts", c.Attempts, "error", err.Error())
		return m.store.Drop(ctx, c, m.cfg.CoalesceWindow)
	}
	wait := backoff(c.Attempts, maxRecordBackoff, err)
	logAt := t.log.WarnContext
	switch {
	case apiErr.kind == apiTransient || apiErr.kind == apiRefused:
		pause, stop := m.failed(ctx, t, "fetching a requested record", err, c.Attempts)
		if stop != nil {
			m.release(ctx, c)
			return stop
		}
		wait = max(wait, pause)
		if apiErr.kind == apiTransient {
			logAt = t.log.DebugContext // the API's dependency logs it
		}
	case c.Attempts >= 5:
		logAt = t.log.ErrorContext // long enough to need a look
	}
	logAt(ctx, "pgmirror: fetch failed; trying again later", "resource", c.Resource, "id", c.ID,
		"attempts", c.Attempts, "retry_in", wait.String(), "error", err.Error())
	return m.store.Retry(ctx, c, err.Error(), apiErr.kind == apiNotFound, wait)
}

// release gives a claimed record back so that any fetcher takes it at once.
func (m *Mirror) release(ctx context.Context, c store.Claim) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := m.store.Release(ctx, c); err != nil {
		m.failed(ctx, nil, "giving back a record to fetch; its lease will expire", err, 1)
	}
}
