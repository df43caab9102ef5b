package pgmirror_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

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
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 640, quotes: 230, bills: 120, clients: 150, suppliers: 30, items: 40, bankTransactions: 260},
		rand.New(rand.NewPCG(1, 2)))
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))

	require.NoError(t, m.Backfill(context.Background()))

	n := requireMirrorEqual(t, srv, schema)
	assert.Greater(t, n, 1400)
	db := adminPool(t, schema)
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
	seed(t, srv, sizes{invoices: 1200, clients: 10}, rand.New(rand.NewPCG(5, 6)))
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
	seed(t, srv, sizes{invoices: 800, quotes: 300, clients: 150, bankTransactions: 250}, rand.New(rand.NewPCG(7, 8)))
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
	seed(t, srv, sizes{invoices: 300}, rand.New(rand.NewPCG(9, 10)))
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	srv.RateLimitNext(6, 0)
	srv.FailNext(5, http.StatusServiceUnavailable)

	require.NoError(t, m.Backfill(context.Background()))
	// The failures are the service's: reported as its outages, one line
	// when it fails and one when it answers again, not one per failure.
	away := strings.Count(logs.String(), `msg="pgmirror: the API is not answering; retrying with backoff until it does"`)
	assert.GreaterOrEqual(t, away, 1, "%s", logs.String())
	assert.Equal(t, away, strings.Count(logs.String(), `msg="pgmirror: the API answers again"`), "%s", logs.String())
	assert.NotContains(t, logs.String(), "backfill failed")
	requireMirrorEqual(t, srv, schema)
}
