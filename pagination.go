package invoicing

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// MaxPageSize is the largest page_size the API accepts; List uses it.
const MaxPageSize = 100

// ErrInconsistentList matches (with errors.Is) the error that ends a list
// when the service's answers contradict the request or each other: a page
// other than the one asked for, a page repeating the previous page's
// records, more records on a page than its page_size, or has_more still
// true on an empty page or once every one of total records was listed. A
// list that ends with it may be missing records: the service, or a proxy in
// front of it, ignored the paging parameters.
var ErrInconsistentList = errors.New("invoicing: inconsistent list pages")

// ListParams are the paging parameters every list endpoint takes. Embed them
// in a resource's list params.
type ListParams struct {
	// Page is the 1-based page to fetch; 0 means the first. List starts from
	// this page and goes on from there.
	Page int
	// PageSize is the number of records a page, 1 to 100. 0 means the API's
	// default (50) for ListPage, and the maximum (100) for List.
	PageSize int
}

// Page is one page of a list response.
type Page[T any] struct {
	// Items are the records of this page, in the service's order.
	Items []T
	// Total is the number of records matching the filters, on all pages.
	Total int
	// Page is this page's 1-based number, as the service echoed it (0 when
	// it did not).
	Page int
	// PageSize is the page size the service applied.
	PageSize int
	// HasMore is true when another page exists.
	HasMore bool
}

// record is a record type T, decoded by its generated decodeJSON.
type record[T any] interface {
	*T
	decodeJSON(*codec.Decoder) error
}

// lister fetches the pages of one list.
type lister[T any, P record[T]] struct {
	c           *Client
	path, key   string     // key: the records' member, besides the general "items"
	q           url.Values // filters, without page and page_size
	cfg         *callConfig
	start, size int  // the first page; the records a page, as asked (0: the service's default)
	sendPage    bool // whether page is sent: always by List, by ListPage when asked for
}

func newLister[T any, P record[T], O interface{ applyList(*callConfig) }](c *Client, path, key string, p any, opts []O) (*lister[T, P], error) {
	q, lp, err := query(p)
	if err != nil {
		return nil, err
	}
	cfg, err := config(opts)
	if err != nil {
		return nil, err
	}
	return &lister[T, P]{c: c, path: path, key: key, q: q, cfg: cfg, start: max(lp.Page, 1), size: lp.PageSize, sendPage: lp.Page != 0}, nil
}

// pageResult is one fetched page, its response (for WithResponseInto, which
// the caller's goroutine fills, in page order) and its error.
type pageResult[T any] struct {
	page *Page[T]
	resp Response
	err  error
}

// fetch gets page number n. It may run on several goroutines at once.
func (l *lister[T, P]) fetch(ctx context.Context, n int) pageResult[T] {
	q := make(url.Values, len(l.q)+2)
	maps.Copy(q, l.q)
	if l.sendPage {
		q.Set("page", strconv.Itoa(n))
	}
	if l.size > 0 {
		q.Set("page_size", strconv.Itoa(l.size))
	}
	limit := orDefault(l.size, MaxPageSize)
	var res pageResult[T]
	cfg := *l.cfg
	cfg.into = &res.resp
	pg := new(Page[T])
	_, res.err = l.c.do(ctx, &request{method: http.MethodGet, path: l.path, query: q, paged: true}, &cfg, func(b []byte) error {
		return decodePage[T, P](b, l.key, limit, pg)
	})
	if res.err == nil {
		res.page = pg
	}
	return res
}

// into fills the caller's WithResponseInto with the response of res.
func (l *lister[T, P]) into(res *pageResult[T]) {
	if l.cfg.into != nil {
		*l.cfg.into = res.resp
	}
}

// orDefault returns v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// decodePage decodes a list response, which must be a JSON object, into pg.
// The records may be under the resource's own key or under the general key
// "items" (the resource's key wins); a page holding more than limit records
// ends the list.
func decodePage[T any, P record[T]](b []byte, key string, limit int, pg *Page[T]) error {
	if err := wantJSON(b, '{'); err != nil {
		return err
	}
	return codec.Decode(b, true, func(d *codec.Decoder) error { return decodeMembers[T, P](d, key, limit, pg) })
}

// decodeMembers decodes the members of a list response (see decodePage).
func decodeMembers[T any, P record[T]](d *codec.Decoder, key string, limit int, pg *Page[T]) error {
	var named, general []T
	decode := func(v *T, d *codec.Decoder) error { return P(v).decodeJSON(d) }
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case key:
			return codec.ReadRecordsUpTo(d, &named, limit, decode)
		case "items":
			return codec.ReadRecordsUpTo(d, &general, limit, decode)
		case "total":
			return d.Int(&pg.Total)
		case "page":
			return d.Int(&pg.Page)
		case "page_size":
			return d.Int(&pg.PageSize)
		case "has_more":
			return d.Bool(&pg.HasMore)
		}
		return d.Skip()
	})
	var tm *codec.TooManyError
	if errors.As(err, &tm) {
		return fmt.Errorf("%w: the page holds %d records, more than the page_size of %d", ErrInconsistentList, tm.Count, limit)
	}
	pg.Items = named
	if named == nil {
		pg.Items = general
	}
	return err
}

// listPage fetches one page of path with p's filters and paging.
func listPage[T any, P record[T]](ctx context.Context, c *Client, path, key string, p any, opts []RequestOption) (*Page[T], error) {
	l, err := newLister[T, P](c, path, key, p, opts)
	if err != nil {
		return nil, err
	}
	res := l.fetch(ctx, l.start)
	l.into(&res)
	return res.page, res.err
}

// list returns an iterator over every record of path matching p, fetching
// pages lazily (page_size 100 unless p sets one): one at a time, or with
// WithPrefetch(n) up to n pages ahead of the one the caller ranges over.
//
// It is one loop either way. The first page is fetched alone, because its
// total and the page size give the number of the last page; with n > 0 the
// pages after it are then fetched up to n at a time, never past that last
// page (unless a page's has_more says the list grew, and then one page
// further at a time). A service that sends no total gets up to n pages
// requested ahead blindly, of which those past the end come back empty and
// are dropped.
//
// Pages are checked and yielded strictly in order (checkPage, yieldPage),
// and no page is requested on the word of a page that failed the checks, so
// records come out once each and in the service's order, an error is
// yielded once, as the last value, and no server can make the list loop
// forever. At most n pages wait while the caller holds the current one.
// When the list ends, the caller breaks or the context ends, the requests
// still in flight are cancelled and waited for, so no goroutine outlives
// the range loop.
func list[T any, P record[T]](ctx context.Context, c *Client, path, key string, p any, opts []ListOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		l, err := newLister[T, P](c, path, key, p, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		if l.size == 0 {
			l.size = MaxPageSize
		}
		l.sendPage = true
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
		}()
		pending := map[int]chan pageResult[T]{} // pages in flight or done, not yet yielded
		launched, last := l.start, math.MaxInt  // the highest page requested; the last page there is
		launch := func(upTo int) {
			for launched < min(upTo, last) {
				launched++
				n, ch := launched, make(chan pageResult[T], 1)
				pending[n] = ch
				wg.Go(func() { ch <- l.fetch(ctx, n) })
			}
		}
		rules := pageRules{start: l.start, size: l.size}
		for page := l.start; ; page++ {
			var res pageResult[T]
			if ch, ok := pending[page]; ok {
				res = <-ch
				delete(pending, page)
			} else { // the first page, or the next one with no page ahead
				launched = max(launched, page)
				res = l.fetch(ctx, page)
			}
			l.into(&res)
			err := checkPage(&rules, page, res)
			more := false
			if err == nil {
				if pg := res.page; pg.HasMore && len(pg.Items) > 0 {
					last = math.MaxInt
					if pg.Total > 0 {
						last = max((pg.Total+l.size-1)/l.size, page+1)
					}
					launch(page + l.cfg.prefetch) // before yielding: the caller's work overlaps the fetches
				}
				more, err = yieldPage(&rules, page, res.page, yield)
			}
			if err != nil {
				yield(nil, err)
			}
			if !more {
				return
			}
		}
	}
}

// pageRules are the checks that end a list on any server, applied to its
// pages in order.
type pageRules struct {
	start, size int
	seen        int      // records yielded so far
	prevIDs     []string // the ids of the previous page
}

// check returns the error of page n (res), or the error that ends the list
// when the page is not the one asked for or repeats the previous page.
func checkPage[T any](r *pageRules, n int, res pageResult[T]) error {
	if res.err != nil {
		return res.err
	}
	pg := res.page
	if pg.Page != 0 && pg.Page != n {
		return fmt.Errorf("%w: asked for page %d, the service answered page %d", ErrInconsistentList, n, pg.Page)
	}
	ids := recordIDs(pg.Items)
	if len(ids) > 0 && slices.Equal(ids, r.prevIDs) {
		return fmt.Errorf("%w: page %d repeats the records of page %d", ErrInconsistentList, n, n-1)
	}
	r.prevIDs = ids
	return nil
}

// recordIDs returns the ids of records (their field ID), or nil when a
// record has an empty one: records that cannot be told apart are not
// compared.
func recordIDs[T any](records []T) []string {
	f, ok := reflect.TypeFor[T]().FieldByName("ID")
	if !ok || len(records) == 0 {
		return nil
	}
	ids := make([]string, len(records))
	for i := range records {
		if ids[i] = reflect.ValueOf(&records[i]).Elem().FieldByIndex(f.Index).String(); ids[i] == "" {
			return nil
		}
	}
	return ids
}

// yieldPage yields the records of page n, which passed checkPage, and
// reports whether the list goes on. It returns the error to yield last
// when the page's has_more contradicts it or the total; more is false then.
func yieldPage[T any](r *pageRules, n int, pg *Page[T], yield func(*T, error) bool) (more bool, err error) {
	for i := range pg.Items {
		if !yield(&pg.Items[i], nil) {
			return false, nil
		}
	}
	r.seen += len(pg.Items)
	switch listed := (r.start-1)*r.size + r.seen; {
	case !pg.HasMore:
		return false, nil
	case len(pg.Items) == 0:
		return false, fmt.Errorf("%w: page %d is empty but says more records follow", ErrInconsistentList, n)
	case pg.Total > 0 && listed >= pg.Total:
		return false, fmt.Errorf("%w: page %d says more records follow, but all %d were listed", ErrInconsistentList, n, pg.Total)
	}
	return true, nil
}

// ErrTooManyRecords matches the error of Collect when the list holds more
// records than the limit it was given.
var ErrTooManyRecords = errors.New("invoicing: the list holds more records than the limit")

// ErrEmptyList is the error of First for a list with no record. It matches
// ErrNotFound too, so that First reads like Get:
//
//	inv, err := invoicing.First(c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}))
//	if errors.Is(err, invoicing.ErrNotFound) { ... nothing overdue ... }
var ErrEmptyList error = emptyList{}

type emptyList struct{}

func (emptyList) Error() string        { return "invoicing: the list is empty" }
func (emptyList) Is(target error) bool { return target == ErrNotFound }

// Collect ranges over seq, a List, and returns its records in order. A
// positive limit caps how many it will hold: once the list shows one record
// more, it stops fetching and returns the first limit records with an error
// matching ErrTooManyRecords, so that a list larger than expected cannot
// fill memory. limit <= 0 means no cap. An error of the list is returned
// with the records yielded before it.
func Collect[T any](seq iter.Seq2[*T, error], limit int) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		if limit > 0 && len(out) == limit {
			return out, fmt.Errorf("%w: more than %d", ErrTooManyRecords, limit)
		}
		out = append(out, v)
	}
	return out, nil
}

// First returns the first record of seq, a List, fetching only its first
// page (give the List a ListParams.PageSize of 1 to fetch one record). A
// list with no record is ErrEmptyList, which matches ErrNotFound.
func First[T any](seq iter.Seq2[*T, error]) (*T, error) {
	for v, err := range seq {
		return v, err
	}
	return nil, ErrEmptyList
}
