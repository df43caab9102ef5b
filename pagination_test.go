package invoicing_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// pagedInvoices serves n invoices numbered INV-1..INV-n under key, honouring
// page and page_size like the API.
func pagedInvoices(n int, key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
		page, size = max(page, 1), cmpOr(size, 50)
		var items []string
		for i := (page-1)*size + 1; i <= min(page*size, n); i++ {
			items = append(items, fmt.Sprintf(`{"id": "00000000-0000-4000-8000-%012d", "invoice_number": "INV-%d", "total": %d.10}`, i, i, i))
		}
		reply(w, 200, fmt.Sprintf(`{%q: [%s], "total": %d, "page": %d, "page_size": %d, "has_more": %t}`,
			key, strings.Join(items, ","), n, page, size, page*size < n))
	}
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func TestListRangesAllPagesLazily(t *testing.T) {
	c, api := newTestAPI(t, pagedInvoices(250, "invoices"))
	var numbers []string
	for inv, err := range c.Invoices.List(context.Background(), nil) {
		require.NoError(t, err)
		numbers = append(numbers, inv.InvoiceNumber)
	}
	require.Len(t, numbers, 250)
	assert.Equal(t, "INV-1", numbers[0])
	assert.Equal(t, "INV-250", numbers[249])
	reqs := api.requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.Equal(t, fmt.Sprintf("page=%d&page_size=100", i+1), r.Query)
	}
}

func TestListAcceptsGeneralItemsKey(t *testing.T) {
	c, _ := newTestAPI(t, pagedInvoices(120, "items"))
	n := 0
	for inv, err := range c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 50}}) {
		require.NoError(t, err)
		n++
		assert.Equal(t, fmt.Sprintf("INV-%d", n), inv.InvoiceNumber)
	}
	assert.Equal(t, 120, n)
}

func TestListStartsAtRequestedPage(t *testing.T) {
	c, api := newTestAPI(t, pagedInvoices(30, "invoices"))
	var first string
	for inv, err := range c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 10}}) {
		require.NoError(t, err)
		if first == "" {
			first = inv.InvoiceNumber
		}
	}
	assert.Equal(t, "INV-11", first)
	assert.Len(t, api.requests(), 2)
}

func TestListBreakStopsFetching(t *testing.T) {
	c, api := newTestAPI(t, pagedInvoices(1000, "invoices"))
	n := 0
	for _, err := range c.Invoices.List(context.Background(), nil) {
		require.NoError(t, err)
		n++
		if n == 150 {
			break
		}
	}
	assert.Equal(t, 150, n)
	assert.Len(t, api.requests(), 2, "no page is fetched after the caller breaks")
}

func TestListLyingHasMoreOnEmptyPageEnds(t *testing.T) {
	c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "1" {
			reply(w, 200, `{"invoices": [{"invoice_number": "A"}, {"invoice_number": "B"}], "total": 5, "page": 1, "page_size": 100, "has_more": true}`)
			return
		}
		reply(w, 200, `{"invoices": [], "total": 5, "page": 2, "page_size": 100, "has_more": true}`)
	})
	got, err := collectNumbers(c.Invoices.List(context.Background(), nil))
	assert.Equal(t, []string{"A", "B"}, got)
	require.ErrorIs(t, err, invoicing.ErrInconsistentList)
	assert.Contains(t, err.Error(), "page 2 is empty but says more records follow")
	assert.Len(t, api.requests(), 2)
}

// collectNumbers ranges over seq and returns the invoice numbers yielded
// and the error yielded, failing the test when an error is not the last
// value.
func collectNumbers(seq iter.Seq2[*invoicing.Invoice, error]) ([]string, error) {
	var got []string
	var last error
	for inv, err := range seq {
		if last != nil {
			panic("a value was yielded after the error")
		}
		if err != nil {
			last = err
			continue
		}
		got = append(got, inv.InvoiceNumber)
	}
	return got, last
}

func TestListErrorMidwayYieldedOnceAsLast(t *testing.T) {
	c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			reply(w, 403, `{"detail": "Missing scope invoices:read"}`)
			return
		}
		pagedInvoices(500, "invoices")(w, r)
	})
	n, errs := 0, 0
	for inv, err := range c.Invoices.List(context.Background(), nil) {
		if err != nil {
			errs++
			assert.Nil(t, inv)
			assert.ErrorIs(t, err, invoicing.ErrForbidden)
			continue // keep ranging: the iterator must end by itself
		}
		n++
	}
	assert.Equal(t, 100, n)
	assert.Equal(t, 1, errs)
	assert.Len(t, api.requests(), 2)
}

func TestListMalformedPage(t *testing.T) {
	c, _ := newTestAPI(t, always(200, `{"invoices": [{"invoice_number": 7}]}`))
	for _, err := range c.Invoices.List(context.Background(), nil) {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "decoding GET /invoices response")
	}
}

func TestListCancelledContext(t *testing.T) {
	c, api := newTestAPI(t, pagedInvoices(500, "invoices"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for _, err := range c.Invoices.List(ctx, nil) {
		if err != nil {
			last = err
			break
		}
		n++
		if n == 100 {
			cancel()
		}
	}
	assert.Equal(t, 100, n)
	assert.ErrorIs(t, last, context.Canceled)
	assert.Len(t, api.requests(), 1)
}
