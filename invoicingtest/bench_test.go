package invoicingtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"
)

// BenchmarkListInvoicesPage serves pages of 100 of 2,000 invoices to
// parallel callers straight through the handler (no network, no latency):
// the cost of a page, and how far concurrent list requests wait for each
// other on the server's mutex.
func BenchmarkListInvoicesPage(b *testing.B) {
	srv := NewServer(WithClock(NewFakeClock(testStart)))
	b.Cleanup(srv.Close)
	h := srv.handler()
	body, err := json.Marshal(invoiceBody(nil))
	if err != nil {
		b.Fatal(err)
	}
	serve := func(method, target string, body []byte) int {
		req := httptest.NewRequest(method, BasePath+target, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.FullKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for range 2000 {
		if code := serve(http.MethodPost, "/invoices", body); code != http.StatusCreated {
			b.Fatalf("creating an invoice: status %d", code)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		page := 0
		for pb.Next() {
			page = page%20 + 1
			if code := serve(http.MethodGet, "/invoices?page_size=100&page="+strconv.Itoa(page), nil); code != http.StatusOK {
				b.Errorf("page %d: status %d", page, code)
				return
			}
		}
	})
}
