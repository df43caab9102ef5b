package invoicingtest

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestConcurrentImportsWithOneReferenceCreateOneInvoice(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500, 500, 500)
	srv.AddWebhookEndpoint(rc.URL)

	const n = 20
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			statuses <- post(t, srv, "/invoices", invoiceBody(map[string]any{"reference": "BATCH-1"})).status
		})
		wg.Go(func() { get(t, srv, "/invoices") })
	}
	wg.Go(func() { clock.Advance(10 * time.Minute) })
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{http.StatusCreated: 1, http.StatusOK: n - 1}, count)
	assert.Equal(t, num("1"), get(t, srv, "/invoices").object(t)["total"])
	assert.Len(t, srv.Events(), 1)
}
