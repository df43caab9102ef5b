package pgmirror_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// A backfill copies every record of every resource, lines and raw JSON
// included, and records each resource's backfill as complete.
func TestBackfillCopiesEveryRecord(t *testing.T) {
	t.Parallel()
	srv, m, db := backfilled(t, sizes{invoices: 640, quotes: 230, bills: 120, clients: 150, suppliers: 30, items: 40, bankTransactions: 260}, 1, 2)
	n := requireMirrorEqual(t, srv, m.Schema())
	assert.Greater(t, n, 1400)
	assert.Equal(t, 10, count(t, db, `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL AND pass = 1`))
}

// listPages returns, in order, the page numbers of the list requests of
// path with page_size 100 (a walk's pages) among reqs, the fake's log.
func listPages(reqs []invoicingtest.Request, path string) []int {
	var pages []int
	for _, r := range reqs {
		q, _ := url.ParseQuery(r.RawQuery)
		if r.Method == http.MethodGet && r.Path == path && q.Get("page_size") == "100" && !r.Fault {
			p, _ := strconv.Atoi(q.Get("page"))
			pages = append(pages, p)
		}
	}
	return pages
}

// A backfill stopped in the middle of a walk (here its context ends while
// it asks for page 6 of the invoices) goes on from its checkpoint in a new
// Mirror: the pages written before are not asked for again.
func TestAStoppedBackfillGoesOnFromItsCheckpoint(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 1200, clients: 10}, 5, 6)
	schema := newSchemaName()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	stopAtPage6 := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/invoices") && req.URL.Query().Get("page") == "6" {
			stop()
		}
		return next(req)
	}
	cfg := testConfig(sdkClient(srv, invoicing.WithMiddleware(stopAtPage6)), schema)
	cfg.Prefetch, cfg.BatchSize = 2, 100
	first := openMirror(t, cfg)
	require.ErrorIs(t, first.Backfill(ctx), context.Canceled)

	db := adminPool(t, schema)
	var next, listed int
	var done bool
	require.NoError(t, db.QueryRow(context.Background(), `SELECT next_page, listed, completed_at IS NOT NULL FROM mirror_backfill
		WHERE resource = 'invoices'`).Scan(&next, &listed, &done))
	require.False(t, done)
	require.Greater(t, next, 1, "the pages received before the stop were written")
	require.Equal(t, (next-1)*100, listed)
	require.Equal(t, listed, count(t, db, `SELECT count(*) FROM invoices`))
	firstRun := len(listPages(srv.Requests(), "/invoices"))

	second := openMirror(t, testConfig(sdkClient(srv), schema))
	require.NoError(t, second.Backfill(context.Background()))
	pages := listPages(srv.Requests(), "/invoices")
	assert.Equal(t, next, pages[firstRun], "the second run starts at the checkpoint")
	for _, p := range pages[firstRun:] {
		assert.GreaterOrEqual(t, p, next)
	}
	requireMirrorEqual(t, srv, schema)
}

// Two replicas backfilling at once share the work: every page of every
// list is asked for once.
func TestTwoReplicasBackfillEachPageOnce(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 800, quotes: 300, clients: 150, bankTransactions: 250}, 7, 8)
	schema := newSchemaName()
	a := openMirror(t, testConfig(sdkClient(srv), schema))
	b := openMirror(t, testConfig(sdkClient(srv), schema))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, m := range []*pgmirror.Mirror{a, b} {
		wg.Go(func() { errs[i] = m.Backfill(context.Background()) })
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])

	for path, n := range map[string]int{"/invoices": 8, "/quotes": 3, "/clients": 2, "/bank-transactions": 3, "/accounts": 1} {
		pages := listPages(srv.Requests(), path)
		slices.Sort(pages)
		want := make([]int, n)
		for i := range want {
			want[i] = i + 1
		}
		assert.Equal(t, want, pages, "pages of %s", path)
	}
	requireMirrorEqual(t, srv, schema)
}

// 429s and 5xx beyond what the SDK's own retries absorb make the backfill
// wait and go on; they do not end it.
func TestBackfillGoesOnThroughRateLimitsAndServerErrors(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 300}, 9, 10)
	var logs syncBuffer
	m, _ := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.Logger = logs.logger() })
	srv.RateLimitNext(6, 0)
	srv.FailNext(5, http.StatusServiceUnavailable)

	require.NoError(t, m.Backfill(context.Background()))
	// The failures are the service's: reported as its outages, one line
	// when it fails and one when it answers again, not one per failure.
	away := strings.Count(logs.String(), `msg="pgmirror: the API is not answering; retrying with backoff until it does"`)
	assert.GreaterOrEqual(t, away, 1, "%s", logs.String())
	assert.Equal(t, away, strings.Count(logs.String(), `msg="pgmirror: the API answers again"`), "%s", logs.String())
	assert.NotContains(t, logs.String(), "backfill failed")
	requireMirrorEqual(t, srv, m.Schema())
}

// recentFirst is a proxy in front of the fake that serves GET /invoices
// sorted by last change, most recent first (as a service may), where the
// fake lists in creation order; every other request passes through. Before
// answering each of the first moves list pages after the first, it changes
// the invoice listed last, which moves it to the front, onto a page the walk
// has passed: the page drift that makes a naive walk miss records.
type recentFirst struct {
	srv    *invoicingtest.Server
	clock  *invoicingtest.FakeClock
	pass   http.Handler
	mu     sync.Mutex
	moves  int // pages still to answer with a move
	moved  []string
	listed []listed // the sorted list, until the next move
}

func (p *recentFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != invoicingtest.BasePath+"/invoices" {
		p.pass.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	size, _ := strconv.Atoi(q.Get("page_size"))
	if p.listed == nil {
		p.listed = p.sorted()
	}
	all := p.listed
	if size == 100 && page >= 2 && p.moves > 0 {
		p.moves--
		last := all[len(all)-1]
		p.clock.Advance(time.Second) // a later updated_at than every other invoice
		notes := "moved to the front"
		if err := p.srv.UpdateInvoice(last.ID, invoicingtest.InvoiceUpdate{Notes: &notes}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.moved = append(p.moved, last.ID)
		p.listed = p.sorted()
		all = p.listed
	}
	lo, hi := min((page-1)*size, len(all)), min(page*size, len(all))
	var records []json.RawMessage
	for _, rec := range all[lo:hi] {
		records = append(records, rec.raw)
	}
	body, _ := json.Marshal(map[string]any{"invoices": records, "total": len(all), "page": page, "page_size": size, "has_more": hi < len(all)})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

type listed struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	raw       json.RawMessage
}

// sorted returns the fake's invoices, most recently changed first.
func (p *recentFirst) sorted() []listed {
	var out []listed
	recs, _ := serviceRecordsRaw(serverScope(p.srv), "/invoices", "invoices")
	for _, rec := range recs {
		var l listed
		_ = json.Unmarshal(rec, &l)
		l.raw = rec
		out = append(out, l)
	}
	changed := func(l listed) time.Time {
		if l.UpdatedAt != nil {
			return *l.UpdatedAt
		}
		return l.CreatedAt
	}
	slices.SortStableFunc(out, func(a, b listed) int { return changed(b).Compare(changed(a)) })
	return out
}

// A list whose order changes during the walk (records changed meanwhile
// move to pages the walk has passed) makes the first pass miss records; the
// backfill sees that the ids it saw fall short of the total and closes the
// gap with closing passes: from its last page first (nothing new there for
// this list), then a whole walk. No webhook is involved: the walk alone is
// complete.
func TestABackfillSeesPageDriftAndClosesTheGap(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 400}, 11, 12)
	proxy := &recentFirst{srv: srv, clock: clock, moves: 2, pass: proxyTo(t, srv.URL)}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)

	c, err := newClientAt(front.URL+invoicingtest.BasePath, srv.FullKey)
	require.NoError(t, err)
	var logs syncBuffer
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.Client, cfg.Prefetch, cfg.Logger = c, 1, logs.logger() })
	require.NoError(t, m.Backfill(context.Background()))

	assert.Len(t, proxy.moved, 2)
	assert.Equal(t, 3, count(t, db, `SELECT pass FROM mirror_backfill WHERE resource = 'invoices'`))
	assert.Contains(t, logs.String(), `closing pass" business=default resource=invoices rows=398 total=400 pass=2 from_page=4`,
		"the first pass missed the two invoices that moved; the second looks at the last page")
	assert.Contains(t, logs.String(), `closing pass" business=default resource=invoices rows=398 total=400 pass=3 from_page=1`,
		"which found nothing: the third walks the whole list")
	requireMirrorEqual(t, srv, m.Schema())
}

// A backfill misses no record created or changed while it runs, even with
// no webhook to bring them: invoices are created (through the API and by
// quote acceptances that convert) and changed (sent, paid, updated, voided)
// from the start of the backfill until the invoices' walk is half done,
// and 20 invoices are created once the walk has passed the last page, just
// before the backfill counts its rows against the total. The walk reaches
// the first (a list in creation order puts them after the pages it has
// walked), a closing pass from the last page finds the others; afterwards
// the mirror holds every record of the service. (The content of a record
// changed without an event after the walk passed it is the events' and the
// reconciler's to bring.)
func TestABackfillMissesNoRecordCreatedOrChangedDuringIt(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: 1000, quotes: 200, bills: 50}, 23, 24)
	mut := newMutator(srv, ids)

	// Created after the walk passed the last page: before the second count
	// of the invoices (the first opens the walk).
	var counts atomic.Int64
	late := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/invoices") && req.URL.Query().Get("page_size") == "1" && counts.Add(1) == 2 {
			rng := rand.New(rand.NewPCG(26, 27))
			for range 20 {
				if err := mut.mutate("create invoice", rng); err != nil {
					return nil, err
				}
			}
		}
		return next(req)
	}
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv, invoicing.WithMiddleware(late)), schema)
	stop := make(chan struct{})
	var stopOnce sync.Once
	var changers sync.WaitGroup
	cfg.OnProgress = func(p pgmirror.Progress) {
		if p.Resource == pgmirror.Invoices && p.Listed >= 500 {
			stopOnce.Do(func() { // called in the walk: it goes on once the changes stopped
				close(stop)
				changers.Wait()
			})
		}
	}
	m := openMirror(t, cfg)

	var changed atomic.Int64
	for w := range 2 {
		changers.Go(func() {
			rng := rand.New(rand.NewPCG(25, uint64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				kind := []string{"create invoice", "accept quote", "send invoice", "payment", "update invoice", "void"}[rng.IntN(6)]
				if mut.mutate(kind, rng) == nil {
					changed.Add(1)
				}
			}
		})
	}
	require.NoError(t, m.Backfill(context.Background()))
	require.Positive(t, changed.Load())

	diffs, _ := compareMirror(t, srv, schema)
	var missing []string
	for _, d := range diffs {
		if strings.HasSuffix(d, "missing from the mirror") || strings.HasSuffix(d, "not on the service") {
			missing = append(missing, d)
		}
	}
	assert.Empty(t, missing[:min(len(missing), 20)])
	db := adminPool(t, schema)
	assert.Equal(t, 2, count(t, db, `SELECT pass FROM mirror_backfill WHERE resource = 'invoices'`),
		"a closing pass found the invoices created after the walk")
	t.Logf("%d changes during the backfill", changed.Load())
}
