package invoicing

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// MaxPageSize is the largest page_size the API accepts; List uses it.
const MaxPageSize = 100

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
	// Page is this page's 1-based number.
	Page int
	// PageSize is the page size the service applied.
	PageSize int
	// HasMore is true when another page exists.
	HasMore bool
}

// listEnvelope is the wire shape of a list response, with the records under
// the general key `items`. Each resource embeds it beside a field for its
// own key (`invoices`, `quotes`, ...): both keys are accepted.
type listEnvelope[T any] struct {
	Items    []T  `json:"items"`
	Total    int  `json:"total"`
	Page     int  `json:"page"`
	PageSize int  `json:"page_size"`
	HasMore  bool `json:"has_more"`
}

// pageOf returns the page, taking the records from named (the resource's own
// key) when the response had it and from `items` otherwise.
func (e *listEnvelope[T]) pageOf(named []T) *Page[T] {
	items := named
	if items == nil {
		items = e.Items
	}
	return &Page[T]{Items: items, Total: e.Total, Page: e.Page, PageSize: e.PageSize, HasMore: e.HasMore}
}

// pageBody is implemented by each resource's list envelope.
type pageBody[T, E any] interface {
	*E
	page() *Page[T]
}

// listQuery is implemented by every list params type: paging plus filters.
type listQuery interface {
	paging() ListParams
	encode(q url.Values) error
}

// listPage fetches one page of path with p's filters.
func listPage[T, E any, PE pageBody[T, E]](ctx context.Context, c *Client, path string, p listQuery) (*Page[T], error) {
	q, lp, err := listValues(p)
	if err != nil {
		return nil, err
	}
	if lp.Page > 0 {
		q.Set("page", strconv.Itoa(lp.Page))
	}
	if lp.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(lp.PageSize))
	}
	return fetchPage[T, E, PE](ctx, c, path, q)
}

func fetchPage[T, E any, PE pageBody[T, E]](ctx context.Context, c *Client, path string, q url.Values) (*Page[T], error) {
	var env E
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: path, query: q}, &env); err != nil {
		return nil, err
	}
	return PE(&env).page(), nil
}

// listAll returns an iterator over every record of path matching p, fetching
// pages lazily (page_size 100 unless p sets one). It stops fetching when the
// caller breaks, when a page says has_more is false, and when a page comes
// back empty (so a server claiming has_more forever cannot loop it). An
// error is yielded once, as the last value.
func listAll[T, E any, PE pageBody[T, E]](ctx context.Context, c *Client, path string, p listQuery) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		q, lp, err := listValues(p)
		if err != nil {
			yield(nil, err)
			return
		}
		page, size := max(lp.Page, 1), lp.PageSize
		if size == 0 {
			size = MaxPageSize
		}
		q.Set("page_size", strconv.Itoa(size))
		for {
			q.Set("page", strconv.Itoa(page))
			pg, err := fetchPage[T, E, PE](ctx, c, path, q)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range pg.Items {
				if !yield(&pg.Items[i], nil) {
					return
				}
			}
			if !pg.HasMore || len(pg.Items) == 0 {
				return
			}
			page++
		}
	}
}

func listValues(p listQuery) (url.Values, ListParams, error) {
	lp := p.paging()
	if err := lp.validate(); err != nil {
		return nil, lp, err
	}
	q := url.Values{}
	if err := p.encode(q); err != nil {
		return nil, lp, err
	}
	return q, lp, nil
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
