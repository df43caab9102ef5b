package invoicing

import (
	"errors"
	"iter"
	"strconv"
)

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

// tooMany is Collect's error for a list over its limit.
type tooMany struct{ limit int }

func (e tooMany) Error() string {
	return "invoicing: the list holds more than " + strconv.Itoa(e.limit) + " records"
}
func (tooMany) Is(target error) bool { return target == ErrTooManyRecords }

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
			return out, tooMany{limit}
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
