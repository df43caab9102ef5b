package invoicing

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
)

// MaxPageSize is the largest page_size the API accepts; List uses it.
const MaxPageSize = 100

// ErrInconsistentList matches (with errors.Is) the error that ends a list
// when the service's answers contradict the request or each other: a page
// other than the one asked for, a page repeating the previous page's
// records, more records on a page than its page_size, or has_more still
// true on an empty page or once every one of total records was listed. A list that ends with
// it may be missing records: the service, or a proxy in front of it,
// ignored the paging parameters.
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

func (p ListParams) paging() ListParams { return p }

func (p ListParams) validate() error {
	if p.Page < 0 {
		return paramErr("page", "must be 1 or more")
	}
	if p.PageSize < 0 || p.PageSize > MaxPageSize {
		return paramErr("page_size", "must be between 1 and 100")
	}
	return nil
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

// listEnvelope decodes one list response into page. The records may be
// under the resource's own key or under the general key `items`; both are
// accepted, the resource's key first. A page holding more than limit
// records is refused once the record after the limit begins: at most limit
// records are decoded, and the error counts them all.
type listEnvelope[T any] struct {
	key   string // the resource's own key, e.g. "invoices"
	limit int
	page  Page[T]
}

func (e *listEnvelope[T]) decodeFrom(st *decodeState) error {
	var named, general []T
	err := st.object(func(name []byte) error {
		switch string(name) {
		case e.key:
			return decodeRecords(st, &named, e.limit)
		case "items":
			return decodeRecords(st, &general, e.limit)
		case "total":
			return st.int(&e.page.Total)
		case "page":
			return st.int(&e.page.Page)
		case "page_size":
			return st.int(&e.page.PageSize)
		case "has_more":
			return st.bool(&e.page.HasMore)
		}
		return st.dec.SkipValue()
	})
	if err != nil {
		return err
	}
	e.page.Items = named
	if named == nil {
		e.page.Items = general
	}
	return nil
}

// decodeRecords decodes a JSON array of records into *dst (null leaves it
// nil), refusing an array of more than limit records with an error matching
// ErrInconsistentList that counts them.
func decodeRecords[T any](st *decodeState, dst *[]T, limit int) error {
	if st.dec.PeekKind() == '[' {
		*dst = make([]T, 0, limit)
	}
	st.share = true
	n := 0
	err := array(st, dst, func(v *T) error {
		if n++; n > limit {
			return errTooMany
		}
		if r, ok := any(v).(recordDecoder); ok {
			return r.decodeFrom(st)
		}
		return json.UnmarshalDecode(st.dec, v)
	})
	if err != errTooMany {
		return err
	}
	for st.dec.PeekKind() != ']' { // count the rest, for the message
		if err := st.dec.SkipValue(); err != nil {
			return err
		}
		n++
	}
	n-- // the record after the limit was counted before it was skipped
	return fmt.Errorf("%w: the page holds %d records, more than the page_size of %d", ErrInconsistentList, n, limit)
}

// errTooMany stops decodeRecords at the record after the limit.
var errTooMany = errors.New("too many records")

// listQuery is implemented by every list params type: paging plus filters.
type listQuery interface {
	paging() ListParams
	encode(q url.Values) error
}

// lister fetches the pages of one list.
type lister[T any] struct {
	c     *Client
	path  string
	key   string     // the resource's key in the response
	q     url.Values // the filters and page_size, without page
	cfg   callConfig // the call's settings, for every page
	start int        // the first page
	size  int        // records a page, as asked
}

func newLister[T any](c *Client, path, key string, p listQuery, opts []RequestOption) (*lister[T], error) {
	q, lp, cfg, err := c.listValues(p, opts, true)
	if err != nil {
		return nil, err
	}
	size := lp.PageSize
	if size == 0 {
		size = MaxPageSize
	}
	q.Set("page_size", strconv.Itoa(size))
	return &lister[T]{c: c, path: path, key: key, q: q, cfg: cfg, start: max(lp.Page, 1), size: size}, nil
}

// pageResult is one fetched page, its response (for WithResponseInto) and
// its error.
type pageResult[T any] struct {
	page *Page[T]
	resp Response
	err  error
}

// fetch gets page number n. It may run on several goroutines at once.
func (l *lister[T]) fetch(ctx context.Context, n int) pageResult[T] {
	q := make(url.Values, len(l.q)+1)
	for k, vs := range l.q {
		q[k] = vs
	}
	q.Set("page", strconv.Itoa(n))
	var res pageResult[T]
	cfg := l.cfg
	cfg.into = &res.resp
	res.page, res.err = fetchPage[T](ctx, l.c, l.path, l.key, q, l.size, &cfg)
	return res
}

// report fills the caller's WithResponseInto with a page's response.
func (l *lister[T]) report(res *pageResult[T]) {
	if l.cfg.into != nil {
		*l.cfg.into = res.resp
	}
}

func fetchPage[T any](ctx context.Context, c *Client, path, key string, q url.Values, limit int, cfg *callConfig) (*Page[T], error) {
	env := listEnvelope[T]{key: key, limit: limit}
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: path, query: q, object: true, paged: true, cfg: cfg}, &env); err != nil {
		return nil, err
	}
	return &env.page, nil
}

// listPage fetches one page of path with p's filters.
func listPage[T any](ctx context.Context, c *Client, path, key string, p listQuery, opts []RequestOption) (*Page[T], error) {
	q, lp, cfg, err := c.listValues(p, opts, false)
	if err != nil {
		return nil, err
	}
	if lp.Page > 0 {
		q.Set("page", strconv.Itoa(lp.Page))
	}
	limit := MaxPageSize
	if lp.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(lp.PageSize))
		limit = lp.PageSize
	}
	return fetchPage[T](ctx, c, path, key, q, limit, &cfg)
}

// listAll returns an iterator over every record of path matching p,
// fetching pages lazily (page_size 100 unless p sets one), one at a time or
// ahead of the caller with WithPrefetch. It ends when the caller breaks,
// when a page says has_more is false, and with an error matching
// ErrInconsistentList when the pages contradict the request or each other
// (see checkPage and yieldPage), so no server can make it loop forever. An error is
// yielded once, as the last value.
func listAll[T any](ctx context.Context, c *Client, path, key string, p listQuery, opts []RequestOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		l, err := newLister[T](c, path, key, p, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		if l.cfg.prefetch > 0 {
			l.prefetched(ctx, yield)
			return
		}
		rules := pageRules{start: l.start, size: l.size}
		for n := l.start; ; n++ {
			res := l.fetch(ctx, n)
			l.report(&res)
			more, err := false, checkPage(&rules, n, res)
			if err == nil {
				more, err = yieldPage(&rules, n, res.page, yield)
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

// checkPage returns the error of page n (res), or the error that ends the
// list when the page is not the one asked for or repeats the previous page.
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

// yieldPage yields the records of page n, which passed check, and reports
// whether the list goes on. It returns the error to yield last when the
// page's has_more contradicts it or the total; more is false then.
func yieldPage[T any](r *pageRules, n int, pg *Page[T], yield func(*T, error) bool) (more bool, err error) {
	for i := range pg.Items {
		if !yield(&pg.Items[i], nil) {
			return false, nil
		}
	}
	r.seen += len(pg.Items)
	if !pg.HasMore {
		return false, nil
	}
	if len(pg.Items) == 0 {
		return false, fmt.Errorf("%w: page %d is empty but says more records follow", ErrInconsistentList, n)
	}
	if listed := (r.start-1)*r.size + r.seen; pg.Total > 0 && listed >= pg.Total {
		return false, fmt.Errorf("%w: page %d says more records follow, but all %d were listed", ErrInconsistentList, n, pg.Total)
	}
	return true, nil
}

// recordIDs returns the ids of records, or nil when T has none or a record
// has an empty one (records that cannot be told apart are not compared).
func recordIDs[T any](records []T) []string {
	if len(records) == 0 {
		return nil
	}
	if _, ok := any(&records[0]).(interface{ recordID() string }); !ok {
		return nil
	}
	ids := make([]string, len(records))
	for i := range records {
		if ids[i] = any(&records[i]).(interface{ recordID() string }).recordID(); ids[i] == "" {
			return nil
		}
	}
	return ids
}

// listValues checks a list call's params and options and returns its
// query (filters only), paging and settings.
func (c *Client) listValues(p listQuery, opts []RequestOption, list bool) (url.Values, ListParams, callConfig, error) {
	lp := p.paging()
	if err := lp.validate(); err != nil {
		return nil, lp, callConfig{}, err
	}
	q := url.Values{}
	if err := p.encode(q); err != nil {
		return nil, lp, callConfig{}, err
	}
	cfg, err := c.config(opts, list)
	return q, lp, cfg, err
}

// setDate, setString: optional query parameters.
func setDate(q url.Values, key string, d Date) {
	if !d.IsZero() {
		q.Set(key, d.String())
	}
}

func setString[S ~string](q url.Values, key string, v S) {
	if v != "" {
		q.Set(key, string(v))
	}
}

// encodeDocFilters sets the filters the invoice and quote lists share.
func encodeDocFilters[S ~string](q url.Values, status S, clientID string, from, to Date) error {
	setString(q, "status", status)
	setString(q, "client_id", clientID)
	setDate(q, "from_date", from)
	setDate(q, "to_date", to)
	return checkDateRange(from, to)
}

// checkDateRange fails when both bounds are set and from is after to.
func checkDateRange(from, to Date) error {
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return paramErr("from_date", "is after to_date")
	}
	return nil
}

// recordID gives List the id of each record, to tell a repeated page (see
// pageRules).
func (v *Invoice) recordID() string         { return v.ID }
func (v *Item) recordID() string            { return v.ID }
func (v *Quote) recordID() string           { return v.ID }
func (v *Contact) recordID() string         { return v.ID }
func (v *Bill) recordID() string            { return v.ID }
func (v *Account) recordID() string         { return v.ID }
func (v *TaxCode) recordID() string         { return v.ID }
func (v *BankAccount) recordID() string     { return v.ID }
func (v *BankTransaction) recordID() string { return v.ID }
