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
// encoding/json (v1) client decoding into plain structs with the same
// fields (benchpair.Baseline), against the same local server, in the
// same loop: internal/benchpair runs every variant in each iteration,
// rotating which goes first, and reports <variant>-ns/op, -B/op and
// -allocs/op, and the ratio of each other variant's time to the first's
// (e.g. sdk/baseline: below 1 is the SDK being faster).
//
//	go test -run '^$' -bench . -benchmem -count 10 . | tee bench.txt
//	benchstat bench.txt
//
// The targets (in each benchmark's comment) are ratios within one run, so
// that a busy machine weighs on both sides alike.

const (
	benchInvoices  = 10_000
	benchInvoiceID = "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f" // testdata/invoice.json's
)

// benchServer serves testdata/invoice.json and total invoices like it in
// pages of 100, all encoded once up front so that the server costs the
// same for every client (and next to nothing), each answer after latency.
func benchServer(tb testing.TB, total int, latency time.Duration) *httptest.Server {
	tb.Helper()
	one := fixture(tb, "invoice.json")
	pages := map[string][]byte{}
	const size = 100
	for p := 1; p <= total/size; p++ {
		var b strings.Builder
		b.WriteString(`{"invoices": [`)
		for i := range size {
			if i > 0 {
				b.WriteByte(',')
			}
			n := (p-1)*size + i + 1
			b.WriteString(strings.NewReplacer("INV-0042", "INV-"+strconv.Itoa(n),
				benchInvoiceID, uuid.NewSHA1(uuid.NameSpaceOID, []byte(strconv.Itoa(n))).String()).Replace(one))
		}
		fmt.Fprintf(&b, `], "total": %d, "page": %d, "page_size": %d, "has_more": %t}`, total, p, size, p*size < total)
		pages[strconv.Itoa(p)] = []byte(b.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if latency > 0 {
			t := time.NewTimer(latency)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == invoicingtest.BasePath+"/invoices" {
			page := r.URL.Query().Get("page")
			if page == "" {
				page = "1" // API.md 4.1: the default
			}
			_, _ = w.Write(pages[page])
			return
		}
		_, _ = io.WriteString(w, one)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// benchCount ranges over seq and fails unless it yields want invoices,
// each with a number.
func benchCount[T invoicing.Invoice | benchpair.Invoice](seq iter.Seq2[*T, error], want int) error {
	n := 0
	for inv, err := range seq {
		if err != nil {
			return err
		}
		var number string
		switch v := any(inv).(type) {
		case *invoicing.Invoice:
			number = v.InvoiceNumber
		case *benchpair.Invoice:
			number = v.InvoiceNumber
		}
		if number == "" {
			return fmt.Errorf("invoice %d has no number", n)
		}
		n++
	}
	if n != want {
		return fmt.Errorf("got %d invoices, want %d", n, want)
	}
	return nil
}

// benchClients returns the local server of benchServer, the baseline and
// an SDK client for it.
func benchClients(b *testing.B) (*benchpair.Baseline, *invoicing.Client) {
	srv := benchServer(b, benchInvoices, 0)
	return benchpair.NewBaseline(b, srv.URL+invoicingtest.BasePath, testKey), newClient(b, srv.URL+invoicingtest.BasePath, testKey)
}

// benchInvoicePageJSON returns a page of 100 invoices exactly as
// invoicingtest serves it: one line each, as the service's documented
// example has, with amounts, quantities and descriptions that vary from
// invoice to invoice.
func benchInvoicePageJSON(tb testing.TB) []byte {
	tb.Helper()
	srv := invoicingtest.NewTestServer(tb)
	c := newClient(tb, srv.URL, srv.FullKey)
	ctx := context.Background()
	descriptions := []string{"Consulting", "Widget", "Support plan", "Travel", "Licence renewal"}
	for i := range 100 {
		_, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, Notes: "Thank you for your business",
			LineItems: []invoicing.LineItemParams{{
				Description: descriptions[i%len(descriptions)],
				UnitPrice:   decimal.New(int64(1000+i*137%90000), -2),
				Quantity:    invoicing.Ptr(decimal.NewFromInt(int64(1 + i%5))),
			}},
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	var page []byte
	if err := c.Do(ctx, http.MethodGet, "/invoices?page_size=100", nil, &page); err != nil {
		tb.Fatal(err)
	}
	return page
}

// expect returns the variant name, which runs run and fails unless it
// returns want and no error.
func expect[T comparable](name string, want T, run func() (T, error)) benchpair.Variant {
	return benchpair.Variant{Name: name, Run: func() error {
		if got, err := run(); err != nil || got != want {
			return fmt.Errorf("%s: got %v (%v), want %v", name, got, err, want)
		}
		return nil
	}}
}

// BenchmarkDecodeInvoicePage decodes one page of 100 invoices: with
// encoding/json into plain structs (v1), and as the SDK decodes a page
// (sdk). Target: sdk/v1 <= 0.4 (2.5 times as fast).
func BenchmarkDecodeInvoicePage(b *testing.B) {
	page := benchInvoicePageJSON(b)
	b.SetBytes(int64(len(page)))
	benchpair.Run(b, 200, expect("v1", 100, func() (int, error) {
		var p benchpair.InvoicePage
		err := json.Unmarshal(page, &p)
		return len(p.Invoices), err
	}), expect("sdk", 100, func() (int, error) {
		p, err := invoicing.DecodePage[invoicing.Invoice](page, "invoices")
		return len(p.Items), err
	}))
}

// BenchmarkInvoicesListPage fetches one page of 100 invoices. Target:
// sdk/baseline <= 0.6.
func BenchmarkInvoicesListPage(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	p := &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 100}}
	benchpair.Run(b, 50, expect("baseline", 100, func() (int, error) {
		pg, err := bl.Page(ctx, 1)
		return len(pg.Invoices), err
	}), expect("sdk", 100, func() (int, error) {
		pg, err := c.Invoices.ListPage(ctx, p)
		if err != nil {
			return 0, err
		}
		return len(pg.Items), nil
	}))
}

// BenchmarkInvoicesGet fetches one invoice. Target: sdk/baseline <= 0.85.
func BenchmarkInvoicesGet(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	benchpair.Run(b, 200, expect("baseline", "INV-0042", func() (string, error) {
		var inv benchpair.Invoice
		err := bl.Get(ctx, "/invoices/"+benchInvoiceID, &inv)
		return inv.InvoiceNumber, err
	}), expect("sdk", "INV-0042", func() (string, error) {
		inv, err := c.Invoices.Get(ctx, benchInvoiceID)
		if err != nil {
			return "", err
		}
		return inv.InvoiceNumber, nil
	}))
}

// BenchmarkInvoicesListAll ranges over 10,000 invoices, a page of 100 at a
// time, each page fetched after the previous one was ranged over. Target:
// sdk/baseline <= 0.4.
func BenchmarkInvoicesListAll(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	benchpair.Run(b, 2, benchpair.Variant{Name: "baseline", Run: func() error {
		return benchCount(bl.RangeAll(ctx, 0), benchInvoices)
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil), benchInvoices)
	}})
}

// BenchmarkInvoicesListPrefetchNoLatency measures what WithPrefetch costs
// when there is no round trip to hide: prefetch4/plain should stay close to
// 1 in time and allocations.
func BenchmarkInvoicesListPrefetchNoLatency(b *testing.B) {
	_, c := benchClients(b)
	ctx := context.Background()
	benchpair.Run(b, 2, benchpair.Variant{Name: "plain", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil), benchInvoices)
	}}, benchpair.Variant{Name: "prefetch4", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(4)), benchInvoices)
	}})
}

// BenchmarkInvoicesListLatency ranges over 2,000 invoices (20 pages of
// 100) of the in-memory service answering every request after 20 ms, as a
// network round trip would: List one page at a time (plain), with
// WithPrefetch(8), and a hand-written net/http client keeping 8 page
// requests in flight. The ideal with 8 in flight is 4 round trips (the
// first page, then 19 pages 8 at a time): 80 ms against 400 ms. Target:
// prefetch8/plain <= 1/4.5 (0.222).
func BenchmarkInvoicesListLatency(b *testing.B) {
	const total = 2000
	srv := invoicingtest.NewTestServer(b)
	c := newClient(b, srv.URL, srv.FullKey)
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
	benchLatency(b, c, benchpair.NewBaseline(b, srv.URL, srv.FullKey), total)
}

// benchLatency runs the variants of the latency benchmarks, each ranging
// over total invoices: c's List (plain, and prefetch8 with
// WithPrefetch(8)), and bl with 8 requests in flight (nethttp8).
func benchLatency(b *testing.B, c *invoicing.Client, bl *benchpair.Baseline, total int) {
	ctx := context.Background()
	benchpair.Run(b, 1, benchpair.Variant{Name: "plain", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil), total)
	}}, benchpair.Variant{Name: "prefetch8", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)), total)
	}}, benchpair.Variant{Name: "nethttp8", Run: func() error {
		return benchCount(bl.RangeAll(ctx, 8), total)
	}})
}

// BenchmarkInvoicesListLatencyFixedPages is BenchmarkInvoicesListLatency
// against pages encoded up front (benchServer), so that the server's work
// weighs nothing: what is left is the clients' own. The fake service of
// BenchmarkInvoicesListLatency encodes each page as it answers, on the same
// two cores as the clients, and the 8 pages of a round contend for them.
func BenchmarkInvoicesListLatencyFixedPages(b *testing.B) {
	const total = 2000
	srv := benchServer(b, total, 20*time.Millisecond)
	base := srv.URL + invoicingtest.BasePath
	benchLatency(b, newClient(b, base, testKey), benchpair.NewBaseline(b, base, testKey), total)
}
