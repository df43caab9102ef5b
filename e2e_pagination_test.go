package invoicing_test

import (
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EPaginationOverManyRecords(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	customer := srv.AddClient(invoicingtest.Contact{Name: "Volume Buyer Pty Ltd"})
	const n = 120

	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				_, err := c.Invoices.Create(ctx, e2eInvoice(customer, e2eLine("Order "+strconv.Itoa(i), "1", strconv.Itoa(i+1))))
				errs <- err
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	lists := func() []invoicingtest.Request { return e2eRequests(srv, http.MethodGet, "/invoices") }
	before := len(lists())
	all := e2eAll(t, c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: customer}))
	require.Len(t, all, n)
	seen := map[string]bool{}
	var sum decimal.Decimal
	for _, inv := range all {
		assert.False(t, seen[inv.ID], "invoice %s listed twice", inv.InvoiceNumber)
		seen[inv.ID] = true
		sum = sum.Add(inv.Subtotal)
	}
	e2eDecEqual(t, decimal.NewFromInt(n*(n+1)/2), sum, "every invoice once: subtotals 1..120")
	reqs := lists()[before:]
	require.Len(t, reqs, 2, "pages of 100: two requests for 120 records")
	for i, r := range reqs {
		q, err := url.ParseQuery(r.RawQuery)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(invoicing.MaxPageSize), q.Get("page_size"))
		assert.Equal(t, strconv.Itoa(i+1), e2eOr(q.Get("page"), "1"))
		assert.Equal(t, customer, q.Get("client_id"))
	}

	before = len(lists())
	count := 0
	for _, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: customer}) {
		require.NoError(t, err)
		count++
		if count == 5 {
			break
		}
	}
	assert.Equal(t, 5, count)
	assert.Len(t, lists(), before+1, "breaking early fetches no further page")

	last, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{Page: 2, PageSize: 100}})
	require.NoError(t, err)
	assert.Equal(t, n, last.Total)
	assert.False(t, last.HasMore)
	assert.Equal(t, e2eIDs(all[100:], e2eInvoiceID), e2eIDs(e2ePtrs(last.Items), e2eInvoiceID))

	fromPage2 := e2eAll(t, c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{Page: 2, PageSize: 50}}))
	assert.Equal(t, e2eIDs(all[50:], e2eInvoiceID), e2eIDs(fromPage2, e2eInvoiceID), "List starts at the requested page")
}

// e2eOr returns v, or def when v is empty (page 1 may be left out).
func e2eOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
