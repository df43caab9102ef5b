package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// However many loops fail, and however often, an outage is two lines: one
// when it starts, with the first error, and one when it ends.
func TestADependencyLogsItsTransitionsOnly(t *testing.T) {
	t.Parallel()
	var out testkit.Buffer
	d := newDependency("PostgreSQL", slog.New(slog.NewTextHandler(&out, nil)))
	ctx := context.Background()
	d.ok(ctx, time.Now()) // up from the start: nothing to say
	assert.True(t, d.up())

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for j := range 50 {
				d.failed(ctx, fmt.Errorf("failure %d of loop %d", j, i))
			}
		})
	}
	wg.Wait()
	assert.False(t, d.up())
	d.ok(ctx, time.Now())
	d.ok(ctx, time.Now())
	assert.True(t, d.up())

	lines := out.Lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], `level=WARN msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does" error="failure 0 of loop`)
	assert.Contains(t, lines[1], `level=INFO msg="pgmirror: PostgreSQL answers again"`)
	assert.Contains(t, lines[1], "failures=1000")

	d.failed(ctx, errors.New("again"))
	assert.Len(t, out.Lines(), 3, "a second outage is logged too")
}

// The success of an attempt that began before the dependency went away (a
// statement answered as PostgreSQL was killed) says nothing of it now: no
// "answers again" until an attempt begun since succeeds.
func TestASuccessBegunBeforeTheFailureIsIgnored(t *testing.T) {
	t.Parallel()
	var out testkit.Buffer
	d := newDependency("PostgreSQL", slog.New(slog.NewTextHandler(&out, nil)))
	ctx := context.Background()
	began := time.Now()
	d.failed(ctx, errors.New("killed"))
	d.ok(ctx, began)
	assert.False(t, d.up())
	d.ok(ctx, time.Now())
	assert.True(t, d.up())
	lines := out.Lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[1], `msg="pgmirror: PostgreSQL answers again"`)
}

// A loop waiting after a failure wakes up when another finds the
// dependency back, and not before.
func TestASleepEndsWhenTheDependencyIsBack(t *testing.T) {
	t.Parallel()
	d := newDependency("PostgreSQL", slog.New(slog.DiscardHandler))
	ctx := context.Background()
	start := time.Now()
	assert.True(t, d.sleep(ctx, 10*time.Millisecond, nil))
	assert.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond, "up: the whole wait")

	d.failed(ctx, errors.New("refused"))
	woke := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		d.sleep(ctx, time.Minute, nil)
		woke <- time.Since(start)
	}()
	select {
	case <-woke:
		t.Fatal("woke while the dependency is away")
	case <-time.After(50 * time.Millisecond):
	}
	d.ok(ctx, time.Now())
	assert.Less(t, <-woke, 30*time.Second)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	d.failed(ctx, errors.New("refused again"))
	assert.False(t, d.sleep(cancelled, time.Minute, nil), "ctx ended")
}

// The wait doubles from about a second to its cap, never in step across
// loops, and is at least what a Retry-After asks.
func TestBackoffGrowsToItsCapAndHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		for range 20 {
			got := backoff(n, maxBackoff, nil)
			assert.InDelta(t, float64(want), float64(got), float64(want)/10+1, "after %d failures", n)
		}
	}
	assert.InDelta(t, float64(maxRecordBackoff), float64(backoff(100, maxRecordBackoff, nil)), float64(maxRecordBackoff)/10+1)
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[backoff(6, maxBackoff, nil)] = true
	}
	assert.Greater(t, len(seen), 1, "jittered")
	asked := &apiError{kind: apiTransient, retryAfter: time.Minute, err: errors.New("429")}
	assert.Equal(t, time.Minute, backoff(1, maxBackoff, fmt.Errorf("listing: %w", asked)), "Retry-After raises the wait")
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	err := errors.New("failed to connect to `user=u database=d`:\n\t127.0.0.1:1 (localhost): refused\n\t[::1]:1 (localhost): refused")
	assert.Equal(t, "failed to connect to `user=u database=d`: 127.0.0.1:1 (localhost): refused [::1]:1 (localhost): refused", oneLine(err))
}

// failed decides every failure in one place: the database away is its
// dependency's (one line), the service failing a business's calls its
// API's, with the backoff raised to a Retry-After; a refusal stops the
// mirror for Config.Client's business and pauses another (logged at Error);
// a failure of no dependency is logged at Error each time.
func TestFailedDecidesEachFailure(t *testing.T) {
	var out testkit.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	m := &Mirror{log: log, db: newDependency("PostgreSQL", log), tenants: newTenants()} // not migrated: a pause is not recorded
	alone, other := m.newTenant("default", 10, Selection{}), m.newTenant("acme", 10, Selection{})
	alone.stops = true
	ctx := context.Background()
	away := &store.Error{Op: "claiming records to fetch", Err: &pgconn.PgError{Code: "57P01"}}
	statement := &store.Error{Op: "writing invoices", Err: &pgconn.PgError{Code: "23505"}}
	transient := &apiError{kind: apiTransient, retryAfter: 45 * time.Second, err: errors.New("429 Too Many Requests")}
	refused := &apiError{kind: apiRefused, err: errors.New("401 Unauthorized")}
	paused := &apiError{kind: apiPaused, until: time.Now().Add(time.Hour), err: errors.New("paused")}

	wait, stop := m.failed(ctx, nil, "claiming", fmt.Errorf("wrapped: %w", away), 1)
	assert.NoError(t, stop)
	assert.InDelta(t, float64(time.Second), float64(wait), float64(time.Second)/10+1)
	m.failed(ctx, nil, "claiming", away, 2)
	assert.False(t, m.db.up())

	wait, stop = m.failed(ctx, other, "fetching", transient, 1)
	assert.NoError(t, stop)
	assert.Equal(t, 45*time.Second, wait, "the Retry-After")
	assert.False(t, other.api.up())
	wait, _ = m.failed(ctx, other, "fetching", paused, 1)
	assert.InDelta(t, float64(time.Hour), float64(wait), float64(time.Second), "until the pause ends")

	_, stop = m.failed(ctx, alone, "backfill", refused, 1)
	assert.ErrorIs(t, stop, refused, "Config.Client's business stops the mirror")
	_, stop = m.failed(ctx, alone, "reconciliation", fmt.Errorf("%w: 30 of 40 invoices", ErrMassDeletion), 1)
	assert.ErrorIs(t, stop, ErrMassDeletion)
	wait, stop = m.failed(ctx, other, "backfill", refused, 1)
	assert.NoError(t, stop, "another business is paused instead")
	assert.Equal(t, refusedPause, wait)

	_, stop = m.failed(ctx, nil, "starting", stopWith(errors.New("wrong password")), 1)
	assert.ErrorContains(t, stop, "wrong password")
	m.failed(ctx, nil, "writing", statement, 3)
	m.failed(ctx, nil, "writing", statement, 4)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	wait, stop = m.failed(cancelled, other, "fetching", refused, 1)
	assert.Zero(t, wait)
	assert.NoError(t, stop, "nothing to decide once ctx ended")

	lines := out.Lines()
	assert.Equal(t, 1, testkit.Count(lines, `level=WARN msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`))
	assert.Equal(t, 1, testkit.Count(lines, `level=WARN msg="pgmirror: the API is not answering; retrying with backoff until it does" business=acme`))
	assert.Equal(t, 1, testkit.Count(lines, `level=ERROR msg="pgmirror: the service refused a business's requests; the business is paused" business=acme for=15m0s`))
	assert.Equal(t, 2, testkit.Count(lines, `level=ERROR msg="pgmirror: writing failed; trying again"`), "each time")
	assert.Len(t, lines, 5, "%q", lines)
}

// The claims of one business, resource and fetch number are fetched
// together and written in one transaction, at most store.MaxGrouped a
// group (so that the write takes only its records' locks), in the order
// claimed; claims of another business, resource or number never share a
// group.
func TestGroupsOfClaimsShareABusinessAResourceAndAFetchNumber(t *testing.T) {
	var claims []store.Claim
	for i := range 2*store.MaxGrouped + 1 {
		claims = append(claims, store.Claim{Business: "a", Resource: Invoices, ID: fmt.Sprint("inv", i), Seq: 7})
	}
	claims = append(claims,
		store.Claim{Business: "a", Resource: Quotes, ID: "q1", Seq: 7},
		store.Claim{Business: "b", Resource: Invoices, ID: "inv0", Seq: 7},
		store.Claim{Business: "a", Resource: Invoices, ID: "late", Seq: 8})
	var got [][]string
	for _, g := range groups(claims) {
		var ids []string
		for _, c := range g {
			assert.Equal(t, []any{g[0].Business, g[0].Resource, g[0].Seq}, []any{c.Business, c.Resource, c.Seq})
			ids = append(ids, c.Business+"/"+c.ID)
		}
		got = append(got, ids)
	}
	want := [][]string{{}, {}, {fmt.Sprint("a/inv", 2*store.MaxGrouped)}, {"a/q1"}, {"b/inv0"}, {"a/late"}}
	for i := range store.MaxGrouped {
		want[0] = append(want[0], fmt.Sprint("a/inv", i))
		want[1] = append(want[1], fmt.Sprint("a/inv", store.MaxGrouped+i))
	}
	assert.Equal(t, want, got)
	assert.Empty(t, groups(nil))
}
