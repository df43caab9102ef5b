package invoicing_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/invoicing-api/invoicing-go"
)

// *rate.Limiter is the Limiter most callers will give.
var _ invoicing.Limiter = (*rate.Limiter)(nil)

// limEvents is what happened, in order, across limiters and the server:
// "wait <name>" for each Wait, "request <path>" for each request served.
type limEvents struct {
	mu  sync.Mutex
	log []string
}

func (e *limEvents) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func (e *limEvents) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}

// limRecorder is a Limiter that records each Wait in events and answers
// the n-th (from 1) with errs(n).
type limRecorder struct {
	name   string
	events *limEvents
	waits  atomic.Int32
	errs   func(n int) error // nil: every Wait succeeds
}

func (l *limRecorder) Wait(ctx context.Context) error {
	n := l.waits.Add(1)
	if l.events != nil {
		l.events.add("wait " + l.name)
	}
	if l.errs != nil {
		return l.errs(int(n))
	}
	return nil
}

// limServer returns a Client for h served by an httptest server, each
// request recorded in events (when not nil) before h answers it.
func limServer(t *testing.T, events *limEvents, h http.HandlerFunc, opts ...invoicing.Option) (*invoicing.Client, *mockAPI) {
	t.Helper()
	return newShapedClient(t, "default", func(w http.ResponseWriter, r *http.Request) {
		if events != nil {
			events.add("request " + strings.TrimPrefix(r.URL.Path, prefix))
		}
		h(w, r)
	}, opts...)
}

// limGet GETs /things through c with opts.
func limGet(c *invoicing.Client, ctx context.Context, opts ...invoicing.RequestOption) error {
	var out json.RawMessage
	return c.Do(ctx, http.MethodGet, "/things", nil, &out, opts...)
}

func TestLimiterWaitsBeforeEveryAttempt(t *testing.T) {
	for name, tc := range map[string]struct {
		h        http.HandlerFunc
		attempts int
	}{
		"one 200":        {always(200, `{}`), 1},
		"429 then 200":   {sequence(always(429, `{"detail": "slow down"}`), always(200, `{}`)), 2},
		"503 twice, 200": {sequence(always(503, `{}`), always(503, `{}`), always(200, `{}`)), 3},
	} {
		t.Run(name, func(t *testing.T) {
			events := &limEvents{}
			c, api := limServer(t, events, tc.h)
			l := &limRecorder{name: "l", events: events}
			var resp invoicing.Response
			require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l), invoicing.WithResponseInto(&resp)))
			var want []string
			for range tc.attempts {
				want = append(want, "wait l", "request /things")
			}
			assert.Equal(t, want, events.all(), "one Wait before each attempt")
			assert.Len(t, api.requests(), tc.attempts)
			assert.Equal(t, tc.attempts, resp.Attempts)
		})
	}
}

func TestLimiterNotBeforeARedirect(t *testing.T) {
	events := &limEvents{}
	c, api := limServer(t, events, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/things") {
			http.Redirect(w, r, prefix+"/moved", http.StatusFound)
			return
		}
		reply(w, 200, `{}`)
	})
	l := &limRecorder{name: "l", events: events}
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l)))
	assert.Equal(t, []string{"wait l", "request /things", "request /moved"}, events.all())
	assert.Len(t, api.requests(), 2)
}

func TestLimiterGivenMoreThanOnceWaitsOnEachInOrder(t *testing.T) {
	events := &limEvents{}
	c, _ := limServer(t, events, sequence(always(503, `{}`), always(200, `{}`)))
	a := &limRecorder{name: "a", events: events}
	b := &limRecorder{name: "b", events: events}
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(a), invoicing.WithLimiter(b)))
	assert.Equal(t, []string{"wait a", "wait b", "request /things", "wait a", "wait b", "request /things"}, events.all())

	events = &limEvents{}
	c, _ = limServer(t, events, always(200, `{}`))
	var opts []invoicing.RequestOption
	for _, name := range []string{"a", "b", "c", "d"} {
		opts = append(opts, invoicing.WithLimiter(&limRecorder{name: name, events: events}))
	}
	require.NoError(t, limGet(c, context.Background(), opts...))
	assert.Equal(t, []string{"wait a", "wait b", "wait c", "wait d", "request /things"}, events.all())
}

var errBudget = errors.New("business budget spent")

func TestLimiterErrorEndsTheCallBeforeSending(t *testing.T) {
	c, api := limServer(t, nil, always(200, `{}`))
	l := &limRecorder{errs: func(int) error { return errBudget }}
	var resp invoicing.Response
	err := limGet(c, context.Background(), invoicing.WithLimiter(l), invoicing.WithResponseInto(&resp))
	require.Error(t, err)
	assert.ErrorIs(t, err, errBudget)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "GET /things")
	assert.Empty(t, api.requests(), "no request reaches the server")
	assert.EqualValues(t, 1, l.waits.Load(), "not retried")
	assert.Zero(t, resp.Attempts)

	// The first Limiter's error: the second is not waited on.
	second := &limRecorder{}
	err = limGet(c, context.Background(), invoicing.WithLimiter(l), invoicing.WithLimiter(second))
	assert.ErrorIs(t, err, errBudget)
	assert.Zero(t, second.waits.Load())
	assert.Empty(t, api.requests())
}

func TestLimiterErrorOnARetryEndsTheCall(t *testing.T) {
	c, api := limServer(t, nil, always(503, `{"detail": "down"}`), invoicing.WithMaxRetries(5))
	l := &limRecorder{errs: func(n int) error {
		if n == 2 {
			return errBudget
		}
		return nil
	}}
	err := limGet(c, context.Background(), invoicing.WithLimiter(l))
	assert.ErrorIs(t, err, errBudget)
	assert.Len(t, api.requests(), 1, "the retry was not sent")
	assert.EqualValues(t, 2, l.waits.Load(), "the Limiter's error is not retried")
}

// blockingLimiter waits until ctx ends, then returns an error of its own
// (not ctx's), as a database-backed limiter might.
type blockingLimiter struct{ waiting chan struct{} }

func (l blockingLimiter) Wait(ctx context.Context) error {
	close(l.waiting)
	<-ctx.Done()
	return errors.New("budget store: query interrupted")
}

func TestLimiterEndedContextIsTheCallsError(t *testing.T) {
	c, api := limServer(t, nil, always(200, `{}`))

	ctx, cancel := context.WithCancel(context.Background())
	l := blockingLimiter{waiting: make(chan struct{})}
	go func() { <-l.waiting; cancel() }()
	err := limGet(c, ctx, invoicing.WithLimiter(l))
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "budget store", "the context's error, not the Limiter's")

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = limGet(c, ctx, invoicing.WithLimiter(blockingLimiter{waiting: make(chan struct{})}))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, api.requests())
}

func TestLimiterNil(t *testing.T) {
	c, api := limServer(t, nil, always(200, `{}`))
	err := limGet(c, context.Background(), invoicing.WithLimiter(nil))
	assert.ErrorIs(t, err, invoicing.ErrInvalidOption)
	_, err = pgNumbers(t, c.Invoices.List(context.Background(), nil, invoicing.WithLimiter(nil)))
	assert.ErrorIs(t, err, invoicing.ErrInvalidOption)
	assert.Empty(t, api.requests())
}

func TestLimiterListWithPrefetchWaitsOncePerPage(t *testing.T) {
	c, api := limServer(t, nil, pgPages(95, "invoices", true))
	l := &limRecorder{}
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), pgSize(10), invoicing.WithPrefetch(4), invoicing.WithLimiter(l)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 95), got)
	assert.Len(t, api.requests(), 10)
	assert.EqualValues(t, 10, l.waits.Load(), "one Wait per page request")
}

func TestLimiterAfterTheClientsRateLimit(t *testing.T) {
	// The Client's budget lets one request go every 50 ms; the call's
	// Limiter is waited on after it, so the second call's Wait comes late.
	c, _ := limServer(t, nil, always(200, `{}`), invoicing.WithRateLimit(20, 1))
	var mu sync.Mutex
	var at []time.Time
	l := limiterFunc(func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
		return nil
	})
	start := time.Now()
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l)))
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l)))
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(start), 40*time.Millisecond, "the Limiter was waited on before the rate limit")
}

type limiterFunc func(context.Context) error

func (f limiterFunc) Wait(ctx context.Context) error { return f(ctx) }

func TestLimiterRateLimiter(t *testing.T) {
	c, api := limServer(t, nil, always(200, `{}`))

	// One request every 25 ms, no burst beyond the first.
	l := rate.NewLimiter(rate.Every(25*time.Millisecond), 1)
	start := time.Now()
	for range 4 {
		require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l)))
	}
	assert.GreaterOrEqual(t, time.Since(start), 70*time.Millisecond, "the last three calls waited on the limiter")
	assert.Len(t, api.requests(), 4)

	// A limiter that can never allow a request refuses the call.
	err := limGet(c, context.Background(), invoicing.WithLimiter(rate.NewLimiter(1, 0)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rate: Wait")
	assert.Len(t, api.requests(), 4)

	// A context that ends first cancels the wait.
	l = rate.NewLimiter(rate.Every(time.Hour), 1)
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(l)))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err = limGet(c, ctx, invoicing.WithLimiter(l))
	assert.ErrorIs(t, err, context.Canceled)

	// A wait that would outlast the deadline is refused at once by
	// *rate.Limiter, before the context ends: the call fails with its error.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = limGet(c, ctx, invoicing.WithLimiter(l))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would exceed context deadline")
	assert.Len(t, api.requests(), 5)
}

// limAdaptive is an AdaptiveLimiter recording each outcome it hears.
type limAdaptive struct {
	limRecorder
	mu      sync.Mutex
	answers []string
}

func (l *limAdaptive) Answered(status int, header http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answers = append(l.answers, strings.TrimSpace(http.StatusText(status)+" "+header.Get("Retry-After")))
}

// An AdaptiveLimiter hears each attempt's outcome, its header included (a
// 429's Retry-After), and nothing when it was not waited on; in a chain,
// each one hears it.
func TestAnAdaptiveLimiterHearsEachAttempt(t *testing.T) {
	c, _ := limServer(t, nil, sequence(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}, always(503, `{}`), always(200, `{}`)))
	a, b := &limAdaptive{}, &limAdaptive{}
	plain := &limRecorder{}
	require.NoError(t, limGet(c, context.Background(), invoicing.WithLimiter(a), invoicing.WithLimiter(plain), invoicing.WithLimiter(b)))
	want := []string{"Too Many Requests 0", "Service Unavailable", "OK"}
	assert.Equal(t, want, a.answers)
	assert.Equal(t, want, b.answers)

	refused := &limAdaptive{limRecorder: limRecorder{errs: func(int) error { return errors.New("no budget") }}}
	require.Error(t, limGet(c, context.Background(), invoicing.WithLimiter(refused)))
	assert.Empty(t, refused.answers, "no attempt was let go")
}
