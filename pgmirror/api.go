package pgmirror

//go:generate go run github.com/invoicing-api/invoicing-go/internal/cmd/recordgen -mirror ..

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// This file is the only place the mirror calls the service: every call goes
// through a resource's list, total and get, and every error a call returns
// is classified here, where it enters the mirror: an *apiError (of the
// service), a *store.Error (a request budget's statement failed inside the
// call), or the context's error.

// pageSize is the page size of every walk: the API's maximum.
const pageSize = invoicing.MaxPageSize

// apiKind says what a failed call to the service means for the mirror.
type apiKind int

const (
	// apiTransient: the service could not answer now (a network error, a
	// timeout, a 5xx, a 429, a list inconsistent across its pages): another
	// try later may succeed.
	apiTransient apiKind = iota
	// apiRefused: the service refused the business's key or its rights
	// (401, 403): a new key mends it, waiting does not.
	apiRefused
	// apiRejected: the service, or the SDK before sending, refused the
	// request itself (another 4xx, an id that is not a UUID): trying again
	// will not mend it.
	apiRejected
	// apiNotFound: the record does not exist (404).
	apiNotFound
	// apiPaused: the business is paused (its budget refused the call before
	// anything was sent) until until.
	apiPaused
)

// An apiError is a failed call to the service, classified.
type apiError struct {
	kind       apiKind
	retryAfter time.Duration // what the service asked to wait (Retry-After), if anything
	until      time.Time     // apiPaused: when the pause ends
	err        error
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// classify is the error of a call that failed with err: ctx's error once
// ctx was canceled (the caller stops), a *store.Error for a budget's
// statement, an *apiError otherwise (a deadline that passed is a timeout:
// transient).
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var dbErr *store.Error
	if errors.As(err, &dbErr) {
		return dbErr
	}
	e := &apiError{kind: apiTransient, err: err}
	var p *errPaused
	var paramErr *invoicing.ParamError
	var sdkErr *invoicing.Error
	switch {
	case errors.As(err, &p):
		e.kind, e.until = apiPaused, p.until
	case errors.As(err, &paramErr):
		e.kind = apiRejected
	case errors.As(err, &sdkErr):
		e.retryAfter = sdkErr.RetryAfter
		switch s := sdkErr.StatusCode; {
		case s == http.StatusUnauthorized || s == http.StatusForbidden:
			e.kind = apiRefused
		case s == http.StatusNotFound:
			e.kind = apiNotFound
		case s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests:
			e.kind = apiRejected
		}
	}
	return e
}

// apiFailed reports whether err is a call's failure of one of kinds.
func apiFailed(err error, kinds ...apiKind) bool {
	var e *apiError
	if !errors.As(err, &e) {
		return false
	}
	for _, k := range kinds {
		if e.kind == k {
			return true
		}
	}
	return false
}

// A resource is one kind of record the mirror copies: its tables, and the
// calls that read it (see mirrored).
type resource struct {
	name  string
	table *store.Table
	lines *store.Table // nil when the record has no lines
	// list walks the records from page start (pages of pageSize).
	list func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[store.Row, error]
	// total returns the number of records the service counts now.
	total func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error)
	// get fetches one record; nil when the service has no endpoint for it
	// (bank accounts).
	get func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (store.Row, error)
}

// lister is an SDK service that lists records T with parameters P.
type lister[T, P any] interface {
	List(ctx context.Context, p *P, opts ...invoicing.ListOption) iter.Seq2[*T, error]
	ListPage(ctx context.Context, p *P, opts ...invoicing.RequestOption) (*invoicing.Page[T], error)
}

// getter is an SDK service that fetches one record T.
type getter[T any] interface {
	Get(ctx context.Context, id string, opts ...invoicing.RequestOption) (*T, error)
}

// mirrored is the resource of table (and its lines), read through the
// service S of a Client, whose list parameters params makes, each record a
// row as row makes it (tables_gen.go calls it for each //mirror:table
// record). It has a get when S has.
func mirrored[T, P any, S lister[T, P]](table, lines *store.Table, service func(*invoicing.Client) S,
	params func(invoicing.ListParams) *P, row func(*T) store.Row) *resource {
	r := &resource{name: table.Name, table: table, lines: lines}
	r.list = func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[store.Row, error] {
		return func(yield func(store.Row, error) bool) {
			for rec, err := range service(c).List(ctx, params(invoicing.ListParams{Page: start, PageSize: pageSize}), opts...) {
				if err != nil {
					yield(store.Row{}, classify(ctx, err))
					return
				}
				out, err := recordRow(rec, row)
				if !yield(out, err) || err != nil {
					return
				}
			}
		}
	}
	r.total = func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
		p, err := service(c).ListPage(ctx, params(invoicing.ListParams{Page: 1, PageSize: 1}), opts...)
		if err != nil {
			return 0, classify(ctx, err)
		}
		return p.Total, nil
	}
	var s S
	if _, ok := any(s).(getter[T]); ok {
		r.get = func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (store.Row, error) {
			rec, err := any(service(c)).(getter[T]).Get(ctx, id, opts...)
			if err != nil {
				return store.Row{}, classify(ctx, err)
			}
			return recordRow(rec, row)
		}
	}
	return r
}

// recordRow is the row row makes of rec, with rec's JSON as the service
// sent it, every member included (the SDK's records marshal back to what
// they were decoded from).
func recordRow[T any](rec *T, row func(*T) store.Row) (store.Row, error) {
	r := row(rec)
	raw, err := json.Marshal(rec)
	if err != nil {
		return store.Row{}, fmt.Errorf("pgmirror: encoding record %s: %w", r.ID, err)
	}
	r.Raw = raw
	return r, nil
}

// Resources returns the names of the mirrored resources, in the order the
// backfill and the reconciler walk them.
func Resources() []string {
	out := make([]string, len(allResources))
	for i, r := range allResources {
		out[i] = r.name
	}
	return out
}

// resourceNamed returns the resource called name, or nil.
func resourceNamed(name string) *resource {
	for _, r := range allResources {
		if r.name == name {
			return r
		}
	}
	return nil
}
