package invoicing_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// peakLiveHeap ranges over n invoices and returns the largest live heap
// (after a GC) seen every 500 invoices.
func peakLiveHeap(t *testing.T, n int, opts ...invoicing.RequestOption) uint64 {
	srv := httptest.NewServer(pagedInvoices(n, "invoices")) // records nothing, unlike newTestAPI
	defer srv.Close()
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	require.NoError(t, err)
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

func TestListMemoryDoesNotGrowWithRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 20,000 records")
	}
	small := peakLiveHeap(t, 2_000)
	large := peakLiveHeap(t, 20_000)
	t.Logf("peak live heap: 2,000 invoices %d KiB, 20,000 invoices %d KiB", small>>10, large>>10)
	// Ten times the records may not cost more than one more page's worth.
	assert.Less(t, large, small+256<<10)
}
