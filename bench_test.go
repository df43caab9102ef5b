package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The benchmarks compare the SDK with a hand-written net/http +
// encoding/json client decoding the records as they were before the SDK
// moved to encoding/json/v2 (the v1* types: same fields, no methods) from
// the same local server, in the same loop (internal/benchpair: every iteration runs each variant,
// rotating which goes first). Each reports <variant>-ns/op, -B/op and
// -allocs/op, and the ratios of the other variants to the first:
//
//	go test -run '^$' -bench . -count 10 . | tee bench.txt
//	benchstat bench.txt

const benchInvoices = 10_000

// benchServer serves one invoice and 10,000 invoices in pages, all encoded
// once up front so the server's cost is the same for both clients.
func benchServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	one := []byte(fixture(tb, "invoice.json"))
	pages := map[string][]byte{}
	const size = 100
	for p := 1; p <= benchInvoices/size; p++ {
		var b strings.Builder
		fmt.Fprintf(&b, `{"invoices": [`)
		for i := 0; i < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			n := (p-1)*size + i + 1
			b.WriteString(strings.Replace(strings.Replace(string(one), "INV-0042", "INV-"+strconv.Itoa(n), 1),
				"3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", uuid.NewSHA1(uuid.NameSpaceOID, []byte(strconv.Itoa(n))).String(), 1))
		}
		fmt.Fprintf(&b, `], "total": %d, "page": %d, "page_size": %d, "has_more": %t}`, benchInvoices, p, size, p*size < benchInvoices)
		pages[strconv.Itoa(p)] = []byte(b.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == prefix+"/invoices" {
			_, _ = w.Write(pages[r.URL.Query().Get("page")])
			return
		}
		_, _ = w.Write(one)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// baseline is what a careful hand-written client does: one http.Client,
// bearer header, status check, json.Decoder into the same types, drain.
type baseline struct {
	hc   *http.Client
	base string
	key  string
}

func (b *baseline) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Accept", "application/json")
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func newBaseline(srv *httptest.Server) *baseline {
	return &baseline{
		hc:   &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		base: srv.URL + prefix, key: testKey,
	}
}

// rangeAll is what a careful hand-written client does to range over every
// invoice: page 1, then (knowing the total) the other pages with up to
// inFlight requests under way or waiting to be read, yielded in order.
func (b *baseline) rangeAll(ctx context.Context, inFlight int) iter.Seq2[*v1Invoice, error] {
	type result struct {
		page *v1InvoicePage
		err  error
	}
	get := func(ctx context.Context, n int) result {
		var p v1InvoicePage
		err := b.get(ctx, "/invoices?page="+strconv.Itoa(n)+"&page_size=100", &p)
		return result{&p, err}
	}
	return func(yield func(*v1Invoice, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		first := get(ctx, 1)
		if first.err != nil {
			yield(nil, first.err)
			return
		}
		last := (first.page.Total + 99) / 100
		results := make([]chan result, last+1)
		for n := 2; n <= last; n++ {
			results[n] = make(chan result, 1)
		}
		slots := make(chan struct{}, inFlight)
		go func() {
			for n := 2; n <= last; n++ {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				go func() { results[n] <- get(ctx, n) }()
			}
		}()
		for n := 1; n <= last; n++ {
			r := first
			if n > 1 {
				r = <-results[n]
				<-slots
			}
			if r.err != nil {
				yield(nil, r.err)
				return
			}
			for i := range r.page.Invoices {
				if !yield(&r.page.Invoices[i], nil) {
					return
				}
			}
		}
	}
}

func BenchmarkInvoicesGet(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	bl := newBaseline(srv)
	defer bl.hc.CloseIdleConnections()
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	benchpair.Run(b, 200, benchpair.Variant{Name: "baseline", Run: func() error {
		var inv v1Invoice
		if err := bl.get(ctx, "/invoices/"+invoiceID, &inv); err != nil || inv.InvoiceNumber != "INV-0042" {
			return fmt.Errorf("baseline: %v", err)
		}
		return nil
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		inv, err := c.Invoices.Get(ctx, invoiceID)
		if err != nil || inv.InvoiceNumber != "INV-0042" {
			return fmt.Errorf("sdk: %v", err)
		}
		return nil
	}})
}

func BenchmarkInvoicesListAll(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	bl := newBaseline(srv)
	defer bl.hc.CloseIdleConnections()
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	benchpair.Run(b, 2, benchpair.Variant{Name: "baseline", Run: func() error {
		return countInvoices(bl.rangeAll(ctx, 1), benchInvoices)
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil), benchInvoices)
	}})
}

// BenchmarkInvoicesListPrefetchNoLatency measures what WithPrefetch costs
// when there is no round trip to hide: it must stay within 5% of List one
// page at a time in ns/op and allocs/op.
func BenchmarkInvoicesListPrefetchNoLatency(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	benchpair.Run(b, 2, benchpair.Variant{Name: "plain", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil), benchInvoices)
	}}, benchpair.Variant{Name: "prefetch4", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(4)), benchInvoices)
	}})
}

// BenchmarkInvoicesListLatency ranges 2,000 invoices (20 pages of 100) of
// the in-memory service answering every request after 20 ms, as a network
// round trip would: List one page at a time, with WithPrefetch(4) and (8),
// and a hand-written net/http client keeping 4 or 8 page requests in flight.
// The ideal with 4 in flight is 6 round trips (the first page, then 19
// pages 4 at a time): 120 ms against 400 ms.
func BenchmarkInvoicesListLatency(b *testing.B) {
	const total = 2000
	srv := invoicingtest.NewTestServer(b)
	c := srv.Client()
	ctx := context.Background()
	for i := range total {
		if _, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, InvoiceNumber: fmt.Sprintf("B-%05d", i+1),
			LineItems: []invoicing.LineItemParams{{Description: "Consulting", UnitPrice: decimal.NewFromInt(int64(100 + i))}},
		}); err != nil {
			b.Fatal(err)
		}
	}
	srv.SetLatency(20*time.Millisecond, 0)
	bl := &baseline{hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, base: srv.URL, key: srv.FullKey}
	defer bl.hc.CloseIdleConnections()
	benchpair.Run(b, 1, benchpair.Variant{Name: "plain", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil), total)
	}}, benchpair.Variant{Name: "prefetch4", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(4)), total)
	}}, benchpair.Variant{Name: "prefetch8", Run: func() error {
		return countInvoices(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)), total)
	}}, benchpair.Variant{Name: "nethttp4", Run: func() error {
		return countInvoices(bl.rangeAll(ctx, 4), total)
	}}, benchpair.Variant{Name: "nethttp8", Run: func() error {
		return countInvoices(bl.rangeAll(ctx, 8), total)
	}})
}

// countInvoices ranges over seq and fails unless it yields want invoices,
// each with a number.
func countInvoices[T invoicing.Invoice | v1Invoice](seq iter.Seq2[*T, error], want int) error {
	n := 0
	for inv, err := range seq {
		if err != nil {
			return err
		}
		if invoiceNumber(inv) == "" {
			return fmt.Errorf("invoice %d has no number", n)
		}
		n++
	}
	if n != want {
		return fmt.Errorf("got %d invoices, want %d", n, want)
	}
	return nil
}

// invoiceNumber is the number of an SDK or a baseline invoice.
func invoiceNumber[T invoicing.Invoice | v1Invoice](inv *T) string {
	switch v := any(inv).(type) {
	case *invoicing.Invoice:
		return v.InvoiceNumber
	case *v1Invoice:
		return v.InvoiceNumber
	}
	return ""
}
