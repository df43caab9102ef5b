package invoicing_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// noPrefetchWorkers reports whether, within ten seconds, no goroutine
// fetching pages ahead for List is left (one that has just finished its
// work may take a moment to exit, and longer on a loaded machine).
func noPrefetchWorkers() bool {
	for range 1000 {
		if prefetchWorkers() == 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// prefetchWorkers counts the goroutines fetching pages ahead for List.
func prefetchWorkers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "invoicing-go.(*lister[") && strings.Contains(g, "prefetched.func") {
			n++
		}
	}
	return n
}

// slowPages serves n invoices like pagedInvoices, each page after a random
// delay of up to maxDelay, so that pages fetched together finish out of
// order.
func slowPages(n int, maxDelay time.Duration) http.HandlerFunc {
	pages := pagedInvoices(n, "invoices")
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(rand.N(maxDelay + 1)):
		case <-r.Context().Done():
			return
		}
		pages(w, r)
	}
}

func TestPrefetchYieldsEveryRecordOnceInOrder(t *testing.T) {
	c, api := newTestAPI(t, slowPages(1000, 15*time.Millisecond))
	for _, n := range []int{1, 3, 8} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			got, err := collectNumbers(c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 20}}, invoicing.WithPrefetch(n)))
			require.NoError(t, err)
			require.Len(t, got, 1000)
			for i, num := range got {
				require.Equal(t, fmt.Sprintf("INV-%d", i+1), num)
			}
			assert.True(t, noPrefetchWorkers())
		})
	}
	pages := map[string]int{}
	for _, r := range api.requests() {
		pages[r.Query]++
	}
	assert.Equal(t, 3, pages["page=50&page_size=20"], "no page past the total was requested")
	assert.Zero(t, pages["page=51&page_size=20"])
}

func TestPrefetchStartsAtRequestedPageAndFillsResponse(t *testing.T) {
	c, _ := newTestAPI(t, pagedInvoices(95, "invoices"))
	var resp invoicing.Response
	got, err := collectNumbers(c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 3, PageSize: 10}},
		invoicing.WithPrefetch(4), invoicing.WithResponseInto(&resp)))
	require.NoError(t, err)
	require.Len(t, got, 75)
	assert.Equal(t, "INV-21", got[0])
	assert.Equal(t, 200, resp.StatusCode, "the last page's response")
}

func TestPrefetchErrorYieldedAfterEveryEarlierRecord(t *testing.T) {
	pages := slowPages(500, 10*time.Millisecond)
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "4" {
			reply(w, 403, `{"detail": "Missing scope invoices:read"}`)
			return
		}
		pages(w, r)
	})
	got, err := collectNumbers(c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 25}}, invoicing.WithPrefetch(6)))
	require.ErrorIs(t, err, invoicing.ErrForbidden)
	require.Len(t, got, 75, "pages 1-3, and nothing after the error")
	assert.Equal(t, "INV-75", got[74])
	assert.True(t, noPrefetchWorkers())
}

func TestPrefetchBreakAndCancelLeaveNoGoroutine(t *testing.T) {
	c, api := newTestAPI(t, slowPages(10_000, 30*time.Millisecond))
	n, during := 0, 0
	for _, err := range c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(8)) {
		require.NoError(t, err)
		if n++; n == 100 {
			during = prefetchWorkers()
		}
		if n == 150 {
			break
		}
	}
	assert.Positive(t, during, "pages were in flight while the caller ranged (the count sees them)")
	assert.True(t, noPrefetchWorkers(), "break cancels and waits for the pages in flight")
	assert.LessOrEqual(t, len(api.requests()), 1+8+1, "at most the pages in flight were requested")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n = 0
	var last error
	for _, err := range c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 250 {
			cancel()
		}
	}
	require.ErrorIs(t, last, context.Canceled)
	assert.True(t, noPrefetchWorkers())
}

func TestPrefetchKeepsEveryTerminationRule(t *testing.T) {
	a := `{"id": "00000000-0000-4000-8000-000000000001", "invoice_number": "A"}, {"id": "00000000-0000-4000-8000-000000000002", "invoice_number": "B"}`
	for _, tc := range []struct{ name, page1, later, message string }{
		{"total reached", `{"invoices": [` + a + `], "total": 2, "page": 1, "has_more": true}`, ``, "all 2 were listed"},
		{"page not echoed", `{"invoices": [` + a + `], "total": 900, "page": 1, "has_more": true}`, `{"invoices": [` + a + `], "total": 900, "page": 1, "has_more": true}`, "asked for page 2, the service answered page 1"},
		{"repeated page", `{"invoices": [` + a + `], "has_more": true}`, `{"invoices": [` + a + `], "has_more": true}`, "page 2 repeats the records of page 1"},
		{"empty page", `{"invoices": [` + a + `], "total": 900, "page": 1, "has_more": true}`, `{"invoices": [], "total": 900, "has_more": true}`, "page 2 is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("page") == "1" {
					reply(w, 200, tc.page1)
					return
				}
				reply(w, 200, tc.later)
			})
			got, err := collectNumbers(c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(4)))
			require.ErrorIs(t, err, invoicing.ErrInconsistentList)
			assert.Contains(t, err.Error(), tc.message)
			assert.Equal(t, []string{"A", "B"}, got)
			assert.LessOrEqual(t, len(api.requests()), 1+4)
			assert.True(t, noPrefetchWorkers())
		})
	}
}

func TestPrefetchWorkerMeetingA429PausesTheOthers(t *testing.T) {
	clk := newFakeClock()
	// Pages 2-9 go out together once page 1 has come back. The server
	// answers page 3 with a 429 only once all of them have arrived, and
	// holds the others until the test lets them go: so every request sent
	// after the 429 is one the client made knowing of it.
	var arrived, sent atomic.Int32
	allArrived, answer := make(chan struct{}), make(chan struct{})
	var page3 atomic.Int32
	pages := pagedInvoices(2000, "invoices")
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		page := r.URL.Query().Get("page")
		if n, _ := strconv.Atoi(page); n >= 2 && n <= 9 && page3.Load() == 0 {
			if arrived.Add(1) == 8 {
				close(allArrived)
			}
			if page == "3" {
				<-allArrived
				page3.Add(1)
				reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "2")
				return
			}
			<-answer
		}
		pages(w, r)
	}, invoicing.WithClock(clk), invoicing.WithRetryWait(time.Millisecond, 10*time.Second))
	release := clk.holdSleeps()
	var wg sync.WaitGroup
	wg.Add(1)
	var got []string
	var err error
	go func() {
		defer wg.Done()
		got, err = collectNumbers(c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(8)))
	}()
	d := <-clk.sleeping // page 3 waits for its retry
	assert.GreaterOrEqual(t, d, 2*time.Second)
	close(answer)
	d = <-clk.sleeping // page 10, launched once page 2 was yielded, waits too
	assert.GreaterOrEqual(t, d, time.Second)
	assert.EqualValues(t, 9, sent.Load(), "pages 1-9 only: nothing was sent inside the Retry-After window")
	release()
	wg.Wait()
	require.NoError(t, err)
	assert.Len(t, got, 2000)
	assert.EqualValues(t, 21, sent.Load(), "20 pages and page 3's retry")
}

func TestPrefetchMemoryDoesNotGrowWithRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 20,000 records")
	}
	small := peakLiveHeap(t, 2_000, invoicing.WithPrefetch(8))
	large := peakLiveHeap(t, 20_000, invoicing.WithPrefetch(8))
	t.Logf("peak live heap with WithPrefetch(8): 2,000 invoices %d KiB, 20,000 invoices %d KiB", small>>10, large>>10)
	assert.Less(t, large, small+1<<20, "bounded by n+1 pages, not by the total (20,000 decoded invoices take some 30 MiB)")
}

func TestPrefetchReusesItsConnections(t *testing.T) {
	// Every page takes 10 ms, so that 8 requests are in flight together; a
	// transport keeping only 2 idle connections (net/http's default) would
	// dial 6 of them again for each round of pages.
	pages := pagedInvoices(400, "invoices")
	var mu sync.Mutex
	conns := map[string]bool{}
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		pages(w, r)
	})
	params := &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 10}}
	for range 2 {
		got, err := collectNumbers(c.Invoices.List(context.Background(), params, invoicing.WithPrefetch(8)))
		require.NoError(t, err)
		require.Len(t, got, 400)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, len(conns), 9, "80 requests, at most 8 at a time plus the first page: no connection dialled twice")
}
