package invoicing_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
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

// pgRecord is invoice i of a paged list: id ...000000000i, number INV-i.
func pgRecord(i int) string {
	return fmt.Sprintf(`{"id": "00000000-0000-4000-8000-%012d", "invoice_number": "INV-%d", "total": %d.10}`, i, i, i)
}

// pgPages serves n invoices INV-1..INV-n under key, honouring page and
// page_size (default 50) like the API, with total, page, page_size and
// has_more; without total when withTotal is false. Each response carries
// an X-Request-Id naming its page.
func pgPages(n int, key string, withTotal bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
		page, size = max(page, 1), cmp0(size, 50)
		var items []string
		for i := (page-1)*size + 1; i <= min(page*size, n); i++ {
			items = append(items, pgRecord(i))
		}
		total := ""
		if withTotal {
			total = fmt.Sprintf(`"total": %d, `, n)
		}
		reply(w, 200, fmt.Sprintf(`{%q: [%s], %s"page": %d, "page_size": %d, "has_more": %t}`,
			key, strings.Join(items, ","), total, page, size, page*size < n), "X-Request-Id", "page-"+strconv.Itoa(page))
	}
}

func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// pgFailAt answers page n with status, body and header pairs, and the
// other pages with pages.
func pgFailAt(pages http.HandlerFunc, n, status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pgPageOf(r) == n {
			reply(w, status, body, header...)
			return
		}
		pages(w, r)
	}
}

// pgPageOf returns the page number a request asked for.
func pgPageOf(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return n
}

// pgNumbers ranges over seq to its end and returns the invoice numbers
// yielded and the error yielded. It fails the test when anything is yielded
// after an error, when more than one error is yielded, or when a record
// comes with an error.
func pgNumbers(t *testing.T, seq iter.Seq2[*invoicing.Invoice, error]) ([]string, error) {
	t.Helper()
	var got []string
	var last error
	for inv, err := range seq {
		if last != nil {
			t.Errorf("a value was yielded after the error %v", last)
		}
		if err != nil {
			assert.Nil(t, inv, "an error comes without a record")
			last = err
			continue // keep ranging: the iterator must end by itself
		}
		got = append(got, inv.InvoiceNumber)
	}
	return got, last
}

// pgWant returns INV-from..INV-to.
func pgWant(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, "INV-"+strconv.Itoa(i))
	}
	return out
}

// pgQueries returns the query of each request the mock received, in order.
func pgQueries(api *mockAPI) []string {
	var out []string
	for _, r := range api.requests() {
		out = append(out, r.Query)
	}
	return out
}

// pgGoroutineID returns the id of the calling goroutine.
func pgGoroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)] // "goroutine 123 [running]:..."
	id, _ := strconv.Atoi(strings.Fields(string(buf))[1])
	return id
}

// pgChildren returns the stacks of the live goroutines that goroutine
// parent started (goleak's view, restricted to one goroutine's children, so
// that tests running in parallel do not disturb it).
func pgChildren(parent int) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	suffix := " in goroutine " + strconv.Itoa(parent) + "\n"
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if i := strings.Index(g, "\ncreated by "); i >= 0 && strings.Contains(g[i:]+"\n", suffix) {
			out = append(out, g)
		}
	}
	return out
}

// pgRange runs loop (a range over a List) on a goroutine of its own, as a
// caller would, and checks that no goroutine outlives it: when loop returns,
// no goroutine it started is still running SDK code (the pages in flight
// were cancelled and waited for), and soon none is left at all (the mock's
// own goroutines end with their requests). A loop that does not return
// within 10 s fails the test: pages in flight were not cancelled.
func pgRange(t *testing.T, loop func()) {
	t.Helper()
	var id atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		id.Store(int64(pgGoroutineID()))
		loop()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the range loop did not return: the pages in flight were not cancelled")
	}
	g := int(id.Load())
	for _, s := range pgChildren(g) {
		assert.NotContains(t, s, "github.com/invoicing-api/invoicing-go.", "an SDK goroutine outlived the range loop:\n%s", s)
	}
	assert.Eventually(t, func() bool { return len(pgChildren(g)) == 0 }, 5*time.Second, time.Millisecond,
		"goroutines started by the range loop are left")
}

// pgRangeNumbers ranges over seq with pgRange and returns what pgNumbers
// returns: the invoice numbers yielded, and the error that ended the list.
func pgRangeNumbers(t *testing.T, seq iter.Seq2[*invoicing.Invoice, error]) (got []string, err error) {
	t.Helper()
	pgRange(t, func() { got, err = pgNumbers(t, seq) })
	return got, err
}

// pgHold answers pages up to upTo from pages at once; a request for a later
// page is held until its context ends (the SDK cancels it), and then
// dropped without an answer.
func pgHold(pages http.HandlerFunc, upTo int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pgPageOf(r) > upTo {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			panic(http.ErrAbortHandler) // the mock transport turns it into a transport error
		}
		pages(w, r)
	}
}

var pgSize = func(n int) *invoicing.InvoiceListParams {
	return &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: n}}
}

func TestPaginationListFetchesPagesLazilyInOrder(t *testing.T) {
	c, api := newMock(t, pgPages(250, "invoices", true))
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), nil))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 250), got)
	assert.Equal(t, []string{"page=1&page_size=100", "page=2&page_size=100", "page=3&page_size=100"}, pgQueries(api),
		"page_size 100 when unset, pages in order, nothing more")
	for _, r := range api.requests() {
		assert.Equal(t, http.MethodGet, r.Method)
		assert.Equal(t, "/invoices", r.Path)
	}

	// Lazily: a page is requested only when the records before it are used.
	c, api = newMock(t, pgPages(250, "invoices", true))
	n := 0
	for _, err := range c.Invoices.List(context.Background(), nil) {
		require.NoError(t, err)
		n++
		assert.Len(t, api.requests(), (n-1)/100+1, "record %d", n)
	}
}

func TestPaginationListPageSizeAndStartPage(t *testing.T) {
	c, api := newMock(t, pgPages(30, "invoices", true))
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 10}}))
	require.NoError(t, err)
	assert.Equal(t, pgWant(11, 30), got, "the list starts at the page asked for")
	assert.Equal(t, []string{"page=2&page_size=10", "page=3&page_size=10"}, pgQueries(api))
}

func TestPaginationBreakStopsFetching(t *testing.T) {
	c, api := newMock(t, pgPages(1000, "invoices", true))
	n := 0
	pgRange(t, func() {
		for _, err := range c.Invoices.List(context.Background(), nil) {
			assert.NoError(t, err)
			if n++; n == 150 {
				break
			}
		}
	})
	assert.Equal(t, 150, n)
	assert.Len(t, api.requests(), 2, "no page is fetched after the caller breaks")
}

func TestPaginationFirstFetchesOnlyTheFirstPage(t *testing.T) {
	c, api := newMock(t, pgPages(250, "invoices", true))
	inv, err := invoicing.First(c.Invoices.List(context.Background(), pgSize(1)))
	require.NoError(t, err)
	assert.Equal(t, "INV-1", inv.InvoiceNumber)
	assert.Equal(t, []string{"page=1&page_size=1"}, pgQueries(api))

	c, api = newMock(t, always(200, `{"invoices": [], "total": 0, "page": 1, "page_size": 100, "has_more": false}`))
	inv, err = invoicing.First(c.Invoices.List(context.Background(), nil))
	assert.Nil(t, inv)
	require.ErrorIs(t, err, invoicing.ErrEmptyList)
	assert.ErrorIs(t, err, invoicing.ErrNotFound, "First reads like Get")
	assert.Len(t, api.requests(), 1)

	c, _ = newMock(t, always(403, `{"detail": "Missing scope invoices:read"}`))
	inv, err = invoicing.First(c.Invoices.List(context.Background(), nil))
	assert.Nil(t, inv)
	require.ErrorIs(t, err, invoicing.ErrForbidden)
	assert.NotErrorIs(t, err, invoicing.ErrEmptyList)
}

func TestPaginationCollect(t *testing.T) {
	c, api := newMock(t, pgPages(250, "invoices", true))
	all, err := invoicing.Collect(c.Invoices.List(context.Background(), nil), 0)
	require.NoError(t, err)
	require.Len(t, all, 250)
	assert.Equal(t, "INV-250", all[249].InvoiceNumber)
	assert.Len(t, api.requests(), 3)

	c, api = newMock(t, pgPages(250, "invoices", true))
	some, err := invoicing.Collect(c.Invoices.List(context.Background(), nil), 150)
	require.ErrorIs(t, err, invoicing.ErrTooManyRecords)
	assert.Contains(t, err.Error(), "more than 150")
	require.Len(t, some, 150, "the first limit records")
	assert.Equal(t, "INV-150", some[149].InvoiceNumber)
	assert.Len(t, api.requests(), 2, "it stops fetching once the list shows one record more")

	c, _ = newMock(t, pgPages(100, "invoices", true))
	exact, err := invoicing.Collect(c.Invoices.List(context.Background(), nil), 100)
	require.NoError(t, err, "exactly limit records are not too many")
	assert.Len(t, exact, 100)

	c, _ = newMock(t, pgFailAt(pgPages(250, "invoices", true), 2, 403, `{"detail": "Missing scope invoices:read"}`))
	part, err := invoicing.Collect(c.Invoices.List(context.Background(), nil), 0)
	require.ErrorIs(t, err, invoicing.ErrForbidden)
	assert.Len(t, part, 100, "the records yielded before the error come with it")
}

func TestPaginationListPage(t *testing.T) {
	c, api := newMock(t, pgPages(120, "invoices", true))
	pg, err := c.Invoices.ListPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{""}, pgQueries(api), "no page or page_size: the service's defaults")
	assert.Len(t, pg.Items, 50)
	assert.Equal(t, 120, pg.Total)
	assert.Equal(t, 1, pg.Page)
	assert.Equal(t, 50, pg.PageSize)
	assert.True(t, pg.HasMore)

	pg, err = c.Invoices.ListPage(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 3, PageSize: 50}})
	require.NoError(t, err)
	assert.Equal(t, "page=3&page_size=50", api.last(t).Query)
	assert.Len(t, pg.Items, 20)
	assert.Equal(t, "INV-101", pg.Items[0].InvoiceNumber)
	assert.Equal(t, 3, pg.Page)
	assert.False(t, pg.HasMore)
	assert.Len(t, api.requests(), 2, "one request a page, whatever has_more says")

	// A page that does not echo its paging members leaves them zero.
	c, _ = newMock(t, always(200, `{"invoices": [`+pgRecord(1)+`]}`))
	pg, err = c.Invoices.ListPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, invoicing.Page[invoicing.Invoice]{Items: pg.Items}, *pg)
	require.Len(t, pg.Items, 1)
}

func TestPaginationListKey(t *testing.T) {
	// The general key "items" is accepted, across pages.
	c, _ := newMock(t, pgPages(120, "items", true))
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), pgSize(50)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 120), got)

	// Both keys: the resource's wins, wherever it is.
	for name, body := range map[string]string{
		"resource key first": `{"invoices": [` + pgRecord(1) + `], "items": [` + pgRecord(2) + `], "has_more": false}`,
		"resource key last":  `{"items": [` + pgRecord(2) + `], "invoices": [` + pgRecord(1) + `], "has_more": false}`,
		"resource key empty": `{"items": [` + pgRecord(2) + `], "invoices": [], "has_more": false}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newMock(t, always(200, body))
			got, err := pgNumbers(t, c.Invoices.List(context.Background(), nil))
			require.NoError(t, err)
			pg, err := c.Invoices.ListPage(context.Background(), nil)
			require.NoError(t, err)
			var fromPage []string
			for _, inv := range pg.Items {
				fromPage = append(fromPage, inv.InvoiceNumber)
			}
			assert.Equal(t, got, fromPage)
			if name == "resource key empty" {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, []string{"INV-1"}, got)
			}
		})
	}

	// Another resource's key is not a list of this one.
	c, _ = newMock(t, always(200, `{"quotes": [`+pgRecord(1)+`], "has_more": false}`))
	got, err = pgNumbers(t, c.Invoices.List(context.Background(), nil))
	require.NoError(t, err)
	assert.Empty(t, got)
}

// pgInconsistent are servers whose pages contradict the request or each
// other: every list over them ends with ErrInconsistentList, after the
// records of the pages before.
var pgInconsistent = []struct {
	name     string
	handler  http.HandlerFunc
	params   *invoicing.InvoiceListParams
	want     []string // the records yielded before the error
	message  string
	requests int // requests of a sequential list
}{
	{
		name:    "page other than asked",
		handler: always(200, `{"invoices": [`+pgRecord(1)+`, `+pgRecord(2)+`], "total": 900, "page": 1, "page_size": 100, "has_more": true}`),
		want:    pgWant(1, 2), message: "asked for page 2, the service answered page 1", requests: 2,
	},
	{
		name:    "page repeating the previous page",
		handler: always(200, `{"invoices": [`+pgRecord(1)+`, `+pgRecord(2)+`], "has_more": true}`),
		want:    pgWant(1, 2), message: "page 2 repeats the records of page 1", requests: 2,
	},
	{
		name: "more records than page_size",
		handler: func(w http.ResponseWriter, r *http.Request) {
			if pgPageOf(r) == 1 {
				pgPages(10, "invoices", true)(w, r)
				return
			}
			reply(w, 200, `{"invoices": [`+pgRecord(3)+`, `+pgRecord(4)+`, `+pgRecord(5)+`], "total": 10, "page": 2, "has_more": true}`)
		},
		params: pgSize(2), want: pgWant(1, 2), message: "the page holds 3 records, more than the page_size of 2", requests: 2,
	},
	{
		name: "more records than the default page_size",
		handler: func(w http.ResponseWriter, r *http.Request) {
			items := make([]string, 101)
			for i := range items {
				items[i] = pgRecord(i + 1)
			}
			reply(w, 200, `{"invoices": [`+strings.Join(items, ",")+`], "total": 101, "page": 1, "has_more": false}`)
		},
		want: nil, message: "the page holds 101 records, more than the page_size of 100", requests: 1,
	},
	{
		name: "has_more on an empty page",
		handler: func(w http.ResponseWriter, r *http.Request) {
			if pgPageOf(r) == 1 {
				reply(w, 200, `{"invoices": [`+pgRecord(1)+`, `+pgRecord(2)+`], "total": 900, "page": 1, "page_size": 100, "has_more": true}`)
				return
			}
			reply(w, 200, `{"invoices": [], "total": 900, "page": 2, "page_size": 100, "has_more": true}`)
		},
		want: pgWant(1, 2), message: "page 2 is empty but says more records follow", requests: 2,
	},
	{
		name:    "has_more after all total records",
		handler: always(200, `{"invoices": [`+pgRecord(1)+`, `+pgRecord(2)+`], "total": 2, "page": 1, "page_size": 100, "has_more": true}`),
		want:    pgWant(1, 2), message: "page 1 says more records follow, but all 2 were listed", requests: 1,
	},
	{
		name:    "has_more after all total records, counting the pages skipped",
		handler: always(200, `{"invoices": [`+pgRecord(11)+`, `+pgRecord(12)+`], "total": 12, "page": 2, "page_size": 10, "has_more": true}`),
		params:  &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 10}},
		want:    pgWant(11, 12), message: "page 2 says more records follow, but all 12 were listed", requests: 1,
	},
}

func TestPaginationInconsistentListsEnd(t *testing.T) {
	for _, tc := range pgInconsistent {
		for _, prefetch := range []int{0, 4} {
			t.Run(fmt.Sprintf("%s/prefetch=%d", tc.name, prefetch), func(t *testing.T) {
				c, api := newMock(t, tc.handler)
				var opts []invoicing.ListOption
				if prefetch > 0 {
					opts = append(opts, invoicing.WithPrefetch(prefetch))
				}
				got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), tc.params, opts...))
				require.ErrorIs(t, err, invoicing.ErrInconsistentList)
				assert.Contains(t, err.Error(), tc.message)
				assert.Equal(t, tc.want, got)
				if prefetch == 0 {
					assert.Len(t, api.requests(), tc.requests)
				} else {
					assert.LessOrEqual(t, len(api.requests()), 1+prefetch)
				}
			})
		}
	}

	// ListPage applies the page_size check too.
	c, _ := newMock(t, always(200, `{"invoices": [`+pgRecord(1)+`, `+pgRecord(2)+`, `+pgRecord(3)+`]}`))
	_, err := c.Invoices.ListPage(context.Background(), pgSize(2))
	require.ErrorIs(t, err, invoicing.ErrInconsistentList)
	assert.Contains(t, err.Error(), "more than the page_size of 2")
}

// Records without ids cannot be told apart: a page repeating them is not
// taken for the previous page.
func TestPaginationRecordsWithoutIDsAreNotCompared(t *testing.T) {
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, fmt.Sprintf(`{"invoices": [{"invoice_number": "X"}], "page": %d, "has_more": %t}`, pgPageOf(r), pgPageOf(r) < 3))
	})
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"X", "X", "X"}, got)
	assert.Len(t, api.requests(), 3)
}

// A page that fails (a 403, or a 2xx whose body is null: not an empty
// page) ends the list with its error, after every record before it.
func TestPaginationErrorYieldedOnceAndLast(t *testing.T) {
	for _, page2 := range []struct {
		status int
		body   string
		want   string
	}{
		{403, `{"detail": "Missing scope invoices:read"}`, `invoicing: GET /invoices: 403 Forbidden: "Missing scope invoices:read"`},
		{200, `null`, "invoicing: decoding GET /invoices response: want a JSON object, got null"},
	} {
		for _, prefetch := range []int{0, 3} {
			t.Run(strconv.Itoa(page2.status)+"/prefetch="+strconv.Itoa(prefetch), func(t *testing.T) {
				c, api := newMock(t, pgFailAt(pgPages(500, "invoices", true), 2, page2.status, page2.body))
				var opts []invoicing.ListOption
				if prefetch > 0 {
					opts = append(opts, invoicing.WithPrefetch(prefetch))
				}
				got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), nil, opts...))
				require.EqualError(t, err, page2.want)
				assert.Equal(t, pgWant(1, 100), got)
				if prefetch == 0 {
					assert.Len(t, api.requests(), 2, "not retried, and nothing follows the error")
				}
			})
		}
	}
}

func TestPaginationMalformedPage(t *testing.T) {
	c, api := newMock(t, always(200, `{"invoices": [`+pgRecord(1)+`, {"invoice_number": 7}], "has_more": false}`))
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), nil))
	require.Error(t, err)
	assert.Empty(t, got, "a page that does not decode yields none of its records")
	assert.Contains(t, err.Error(), "decoding GET /invoices response")
	assert.Contains(t, err.Error(), "invoices[1].invoice_number")
	assert.Len(t, api.requests(), 1, "a decoding failure is not retried")

	for _, body := range []string{`[]`, `"x"`, `{"invoices": {}}`, `{"invoices": [1]}`, `{"invoices": [], "total": "3"}`, `{"invoices": []`} {
		c, _ := newMock(t, always(200, body))
		_, err := c.Invoices.ListPage(context.Background(), nil)
		assert.Error(t, err, body)
	}
}

func TestPaginationCancelledContext(t *testing.T) {
	c, api := newMock(t, pgPages(500, "invoices", true))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for _, err := range c.Invoices.List(ctx, nil) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 100 {
			cancel()
		}
	}
	assert.Equal(t, 100, n)
	assert.ErrorIs(t, last, context.Canceled)
	assert.Len(t, api.requests(), 1, "nothing is sent once the context has ended")

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	got, err := pgNumbers(t, c.Invoices.List(ctx, nil))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestPaginationInvalidOptionOrParams(t *testing.T) {
	c, api := newMock(t, pgPages(10, "invoices", true))
	for name, seq := range map[string]iter.Seq2[*invoicing.Invoice, error]{
		"prefetch 0":   c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(0)),
		"prefetch 65":  c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(invoicing.MaxPrefetch+1)),
		"response nil": c.Invoices.List(context.Background(), nil, invoicing.WithResponseInto(nil)),
	} {
		got, err := pgNumbers(t, seq)
		assert.Empty(t, got, name)
		assert.ErrorIs(t, err, invoicing.ErrInvalidOption, name)
	}
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), pgSize(101)))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())

	got, err = pgNumbers(t, c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(invoicing.MaxPrefetch)))
	require.NoError(t, err)
	assert.Len(t, got, 10)
}

// slowly answers with pages after a random delay of up to maxDelay, so that
// pages fetched together finish out of order.
func pgSlowly(pages http.HandlerFunc, maxDelay time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(rand.N(maxDelay + 1)):
		case <-r.Context().Done():
			return
		}
		pages(w, r)
	}
}

func TestPaginationPrefetchYieldsEveryRecordOnceInOrder(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c, api := newMock(t, pgSlowly(pgPages(1000, "invoices", true), 5*time.Millisecond))
			got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), pgSize(20), invoicing.WithPrefetch(n)))
			require.NoError(t, err)
			require.Equal(t, pgWant(1, 1000), got)
			pages := map[int]int{}
			for _, r := range api.requests() {
				p, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(r.Query, "&")[0], "page="))
				pages[p]++
				assert.Contains(t, r.Query, "page_size=20")
			}
			assert.Len(t, pages, 50, "planned from total: pages 1 to 50, nothing past the last")
			for p, k := range pages {
				assert.Equal(t, 1, k, "page %d requested once", p)
			}
		})
	}
}

func TestPaginationPrefetchStartsAtRequestedPage(t *testing.T) {
	c, api := newMock(t, pgPages(95, "invoices", true))
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 3, PageSize: 10}},
		invoicing.WithPrefetch(4)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(21, 95), got)
	assert.Len(t, api.requests(), 8, "pages 3 to 10")
	assert.Equal(t, "page=3&page_size=10", api.requests()[0].Query)
}

// The pages ahead are in flight together: n of them at most, and n indeed.
func TestPaginationPrefetchKeepsAtMostNInFlight(t *testing.T) {
	const n = 4
	pages := pgPages(1000, "invoices", true)
	var inFlight, peak atomic.Int32
	var round sync.WaitGroup // the first n pages after the first wait for each other
	round.Add(n)
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		if p := pgPageOf(r); p >= 2 && p <= n+1 {
			round.Done()
			waited := make(chan struct{})
			go func() { round.Wait(); close(waited) }()
			select {
			case <-waited:
			case <-time.After(10 * time.Second):
				reply(w, 500, `{"detail": "the pages ahead were not requested together"}`)
				return
			}
		}
		pages(w, r)
	}, invoicing.WithMaxRetries(0))
	got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), pgSize(25), invoicing.WithPrefetch(n)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 1000), got)
	assert.Len(t, api.requests(), 40)
	assert.EqualValues(t, n, peak.Load(), "n requests overlap, never more")
}

// Without a total, the pages ahead are requested blindly; those past the
// end come back empty and are dropped.
func TestPaginationPrefetchWithoutTotal(t *testing.T) {
	c, api := newMock(t, pgSlowly(pgPages(95, "invoices", false), 3*time.Millisecond))
	got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), pgSize(10), invoicing.WithPrefetch(4)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 95), got)
	reqs := len(api.requests())
	assert.GreaterOrEqual(t, reqs, 10)
	assert.LessOrEqual(t, reqs, 10+4, "no more than n pages past the last")
}

func TestPaginationPrefetchErrorAfterEveryEarlierRecord(t *testing.T) {
	pages := pgSlowly(pgPages(500, "invoices", true), 5*time.Millisecond)
	c, _ := newMock(t, pgFailAt(pages, 4, 403, `{"detail": "Missing scope invoices:read"}`))
	got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), pgSize(25), invoicing.WithPrefetch(6)))
	require.ErrorIs(t, err, invoicing.ErrForbidden)
	assert.Equal(t, pgWant(1, 75), got, "pages 1-3, and nothing after the error")
}

// Break, an error and a cancelled context each end a List whose pages
// ahead are still in flight (held by the server until cancelled): the range
// loop returns, and no goroutine outlives it.
func TestPaginationPrefetchLeavesNoGoroutine(t *testing.T) {
	t.Run("break", func(t *testing.T) {
		c, api := newMock(t, pgHold(pgPages(10_000, "invoices", true), 2))
		n := 0
		pgRange(t, func() {
			for _, err := range c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(8)) {
				assert.NoError(t, err)
				if n++; n == 150 {
					break
				}
			}
		})
		assert.Equal(t, 150, n)
		assert.LessOrEqual(t, len(api.requests()), 1+8+1, "pages 1 to 10 at most: n ahead of page 2, the last consumed")
	})
	t.Run("error", func(t *testing.T) {
		c, _ := newMock(t, pgFailAt(pgHold(pgPages(10_000, "invoices", true), 2), 2, 404, `{"detail": "gone"}`))
		got, err := pgRangeNumbers(t, c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(8)))
		assert.ErrorIs(t, err, invoicing.ErrNotFound)
		assert.Equal(t, pgWant(1, 100), got)
	})
	t.Run("cancel", func(t *testing.T) {
		c, _ := newMock(t, pgHold(pgPages(10_000, "invoices", true), 2))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		var last error
		pgRange(t, func() {
			for _, err := range c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)) {
				if err != nil {
					last = err
					continue
				}
				if n++; n == 150 {
					cancel()
				}
			}
		})
		assert.ErrorIs(t, last, context.Canceled)
		assert.Equal(t, 200, n, "the pages already fetched are yielded; the next one fails")
	})
}

// WithResponseInto holds the response of the last page yielded, or of the
// page that failed.
func TestPaginationResponseInto(t *testing.T) {
	for _, prefetch := range []int{0, 4} {
		t.Run("prefetch="+strconv.Itoa(prefetch), func(t *testing.T) {
			opts := func(r *invoicing.Response) []invoicing.ListOption {
				o := []invoicing.ListOption{invoicing.WithResponseInto(r)}
				if prefetch > 0 {
					o = append(o, invoicing.WithPrefetch(prefetch))
				}
				return o
			}
			for _, withTotal := range []bool{true, false} {
				c, _ := newMock(t, pgSlowly(pgPages(95, "invoices", withTotal), 3*time.Millisecond))
				var resp invoicing.Response
				got, err := pgNumbers(t, c.Invoices.List(context.Background(), pgSize(10), opts(&resp)...))
				require.NoError(t, err)
				require.Len(t, got, 95)
				assert.Equal(t, 200, resp.StatusCode)
				assert.Equal(t, "page-10", resp.RequestID, "the last page's response (total %t)", withTotal)
				assert.Equal(t, 1, resp.Attempts)
			}

			// After a break: the page the last record came from.
			c, _ := newMock(t, pgSlowly(pgPages(95, "invoices", true), 3*time.Millisecond))
			var resp invoicing.Response
			n := 0
			for _, err := range c.Invoices.List(context.Background(), pgSize(10), opts(&resp)...) {
				require.NoError(t, err)
				if n++; n == 25 {
					break
				}
			}
			assert.Equal(t, "page-3", resp.RequestID)

			// After an error: the failed page's.
			c, _ = newMock(t, pgFailAt(pgPages(95, "invoices", true), 2, 403, `{"detail": "no"}`, "X-Request-Id", "failed"))
			resp = invoicing.Response{}
			_, err := pgNumbers(t, c.Invoices.List(context.Background(), pgSize(10), opts(&resp)...))
			require.ErrorIs(t, err, invoicing.ErrForbidden)
			assert.Equal(t, 403, resp.StatusCode)
			assert.Equal(t, "failed", resp.RequestID)
		})
	}

	c, _ := newMock(t, pgPages(95, "invoices", true))
	var resp invoicing.Response
	_, err := c.Invoices.ListPage(context.Background(), pgSize(10), invoicing.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "page-1", resp.RequestID)
}

// pgRetryLog is a slog.Handler that signals on retrying each time the
// Client logs a retry.
type pgRetryLog struct{ retrying chan<- struct{} }

func (h pgRetryLog) Enabled(context.Context, slog.Level) bool { return true }
func (h pgRetryLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "invoicing: retrying" {
		select {
		case h.retrying <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h pgRetryLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h pgRetryLog) WithGroup(string) slog.Handler      { return h }

// A 429 met by one page fetched ahead pauses the others: no request is sent
// inside the Retry-After window. (Retry-After has a resolution of one
// second, so this test waits one second.)
func TestPaginationPrefetch429PausesThePagesAhead(t *testing.T) {
	t.Parallel()
	// Pages 2-9 go out together once page 1 has come back. The server
	// answers page 3 with a 429 once all of them have arrived, and holds the
	// others until the Client has logged its retry (so has paused): every
	// request sent after that is one the Client made knowing of the 429.
	var arrived atomic.Int32
	allArrived, answer := make(chan struct{}), make(chan struct{})
	retrying := make(chan struct{}, 1)
	var mu sync.Mutex
	var at429 time.Time
	var after []time.Duration // when each later request arrived, after the 429
	var page3 atomic.Int32
	pages := pgPages(2000, "invoices", true)
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		p := pgPageOf(r)
		mu.Lock()
		if !at429.IsZero() && (p > 9 || p == 3) {
			after = append(after, time.Since(at429))
		}
		mu.Unlock()
		if p >= 2 && p <= 9 && page3.Load() == 0 {
			if arrived.Add(1) == 8 {
				close(allArrived)
			}
			if p == 3 {
				<-allArrived
				mu.Lock()
				at429 = time.Now()
				mu.Unlock()
				page3.Add(1)
				reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "1")
				return
			}
			<-answer
		}
		pages(w, r)
	}, invoicing.WithRetryWait(time.Millisecond, 2*time.Second), invoicing.WithLogger(slog.New(pgRetryLog{retrying})))
	go func() {
		select {
		case <-retrying:
		case <-time.After(10 * time.Second):
		}
		close(answer)
	}()
	got, err := pgNumbers(t, c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(8)))
	require.NoError(t, err)
	assert.Equal(t, pgWant(1, 2000), got)
	assert.Len(t, api.requests(), 21, "20 pages and page 3's retry")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, after, 12, "page 3's retry and pages 10-20")
	for _, d := range after {
		assert.GreaterOrEqual(t, d, time.Second, "nothing was sent inside the Retry-After window")
	}
}

// peakHeap ranges over n invoices and returns the largest live heap (after a
// GC) seen every 500 invoices.
func pgPeakHeap(t *testing.T, n int, opts ...invoicing.ListOption) uint64 {
	c, _ := newMock(t, pgPages(n, "invoices", true))
	var peak uint64
	var ms runtime.MemStats
	i := 0
	for inv, err := range c.Invoices.List(context.Background(), nil, opts...) {
		require.NoError(t, err)
		require.NotEmpty(t, inv.InvoiceNumber)
		if i++; i%500 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	require.Equal(t, n, i)
	return peak
}

// A List holds a bounded number of pages (n+1 with WithPrefetch(n)), not
// every record it yields.
func TestPaginationMemoryDoesNotGrowWithRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 20,000 records")
	}
	for name, opts := range map[string][]invoicing.ListOption{"sequential": nil, "prefetch 8": {invoicing.WithPrefetch(8)}} {
		small := pgPeakHeap(t, 2_000, opts...)
		large := pgPeakHeap(t, 20_000, opts...)
		t.Logf("%s: peak live heap 2,000 invoices %d KiB, 20,000 invoices %d KiB", name, small>>10, large>>10)
		// 20,000 decoded invoices take some 30 MiB.
		assert.Less(t, large, small+1<<20, "%s: bounded by the pages held, not by the total", name)
	}
}
