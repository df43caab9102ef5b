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
// fields (the bench* types below), against the same local server, in the
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

// benchInvoice is the baseline's invoice: the SDK's fields and field types,
// without the record's own JSON methods.
type benchInvoice struct {
	ID            string                  `json:"id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	ClientName    string                  `json:"client_name"`
	Status        invoicing.InvoiceStatus `json:"status"`
	IssueDate     invoicing.Date          `json:"issue_date"`
	DueDate       invoicing.Date          `json:"due_date"`
	Subtotal      decimal.Decimal         `json:"subtotal"`
	TaxTotal      decimal.Decimal         `json:"tax_total"`
	Total         decimal.Decimal         `json:"total"`
	AmountPaid    decimal.Decimal         `json:"amount_paid"`
	AmountDue     decimal.Decimal         `json:"amount_due"`
	Currency      string                  `json:"currency"`
	Notes         string                  `json:"notes"`
	Reference     string                  `json:"reference,omitempty"`
	LineItems     []struct {
		ID          string          `json:"id"`
		Description string          `json:"description"`
		Quantity    decimal.Decimal `json:"quantity"`
		UnitPrice   decimal.Decimal `json:"unit_price"`
		Amount      decimal.Decimal `json:"amount"`
		TaxAmount   decimal.Decimal `json:"tax_amount"`
		AccountID   *string         `json:"account_id"`
		TaxCodeID   *string         `json:"tax_code_id"`
	} `json:"line_items"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

type benchInvoicePage struct {
	Invoices []benchInvoice `json:"invoices"`
	Total    int            `json:"total"`
	Page     int            `json:"page"`
	PageSize int            `json:"page_size"`
	HasMore  bool           `json:"has_more"`
}

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

// benchBaseline is what a careful hand-written client does: one
// http.Client, bearer header, status check, json.Decoder into plain
// structs, drain.
type benchBaseline struct {
	hc        *http.Client
	base, key string
}

func newBenchBaseline(tb testing.TB, base, key string) *benchBaseline {
	bl := &benchBaseline{hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, base: base, key: key}
	tb.Cleanup(bl.hc.CloseIdleConnections)
	return bl
}

func (b *benchBaseline) get(ctx context.Context, path string, out any) error {
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

func (b *benchBaseline) page(ctx context.Context, n int) (*benchInvoicePage, error) {
	var p benchInvoicePage
	err := b.get(ctx, "/invoices?page="+strconv.Itoa(n)+"&page_size=100", &p)
	return &p, err
}

// rangeAll ranges over every invoice: page 1, then (knowing the total) the
// other pages, one at a time when inFlight is 0, or with up to inFlight
// requests under way while the caller ranges, yielded in order.
func (b *benchBaseline) rangeAll(ctx context.Context, inFlight int) iter.Seq2[*benchInvoice, error] {
	type result struct {
		page *benchInvoicePage
		err  error
	}
	return func(yield func(*benchInvoice, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		first, err := b.page(ctx, 1)
		if err != nil {
			yield(nil, err)
			return
		}
		last := (first.Total + 99) / 100
		results := make([]chan result, last+1)
		if inFlight > 0 {
			slots := make(chan struct{}, inFlight)
			for n := 2; n <= last; n++ {
				results[n] = make(chan result, 1)
			}
			go func() {
				for n := 2; n <= last; n++ {
					select {
					case slots <- struct{}{}:
					case <-ctx.Done():
						return
					}
					go func() {
						p, err := b.page(ctx, n)
						results[n] <- result{p, err}
						<-slots
					}()
				}
			}()
		}
		for n := 1; n <= last; n++ {
			r := result{page: first}
			switch {
			case n == 1:
			case inFlight > 0:
				r = <-results[n]
			default:
				r.page, r.err = b.page(ctx, n)
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

// benchCount ranges over seq and fails unless it yields want invoices,
// each with a number.
func benchCount[T invoicing.Invoice | benchInvoice](seq iter.Seq2[*T, error], want int) error {
	n := 0
	for inv, err := range seq {
		if err != nil {
			return err
		}
		var number string
		switch v := any(inv).(type) {
		case *invoicing.Invoice:
			number = v.InvoiceNumber
		case *benchInvoice:
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
func benchClients(b *testing.B) (*benchBaseline, *invoicing.Client) {
	srv := benchServer(b, benchInvoices, 0)
	return newBenchBaseline(b, srv.URL+invoicingtest.BasePath, testKey), newClient(b, srv.URL+invoicingtest.BasePath, testKey)
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

// BenchmarkDecodeInvoicePage decodes one page of 100 invoices: with
// encoding/json into plain structs (v1), and as the SDK decodes a page
// (sdk). Target: sdk/v1 <= 0.4 (2.5 times as fast).
func BenchmarkDecodeInvoicePage(b *testing.B) {
	page := benchInvoicePageJSON(b)
	b.SetBytes(int64(len(page)))
	benchpair.Run(b, 200, benchpair.Variant{Name: "v1", Run: func() error {
		var p benchInvoicePage
		if err := json.Unmarshal(page, &p); err != nil || len(p.Invoices) != 100 {
			return fmt.Errorf("v1: %d invoices, %v", len(p.Invoices), err)
		}
		return nil
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		p, err := invoicing.DecodePage[invoicing.Invoice](page, "invoices")
		if err != nil || len(p.Items) != 100 {
			return fmt.Errorf("sdk: %v", err)
		}
		return nil
	}})
}

// BenchmarkInvoicesListPage fetches one page of 100 invoices. Target:
// sdk/baseline <= 0.6.
func BenchmarkInvoicesListPage(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	p := &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 100}}
	benchpair.Run(b, 50, benchpair.Variant{Name: "baseline", Run: func() error {
		pg, err := bl.page(ctx, 1)
		if err != nil || len(pg.Invoices) != 100 {
			return fmt.Errorf("baseline: %v", err)
		}
		return nil
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		pg, err := c.Invoices.ListPage(ctx, p)
		if err != nil || len(pg.Items) != 100 {
			return fmt.Errorf("sdk: %v", err)
		}
		return nil
	}})
}

// BenchmarkInvoicesGet fetches one invoice. Target: sdk/baseline <= 0.85.
func BenchmarkInvoicesGet(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	benchpair.Run(b, 200, benchpair.Variant{Name: "baseline", Run: func() error {
		var inv benchInvoice
		if err := bl.get(ctx, "/invoices/"+benchInvoiceID, &inv); err != nil || inv.InvoiceNumber != "INV-0042" {
			return fmt.Errorf("baseline: %v", err)
		}
		return nil
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		inv, err := c.Invoices.Get(ctx, benchInvoiceID)
		if err != nil || inv.InvoiceNumber != "INV-0042" {
			return fmt.Errorf("sdk: %v", err)
		}
		return nil
	}})
}

// BenchmarkInvoicesListAll ranges over 10,000 invoices, a page of 100 at a
// time, each page fetched after the previous one was ranged over. Target:
// sdk/baseline <= 0.4.
func BenchmarkInvoicesListAll(b *testing.B) {
	bl, c := benchClients(b)
	ctx := context.Background()
	benchpair.Run(b, 2, benchpair.Variant{Name: "baseline", Run: func() error {
		return benchCount(bl.rangeAll(ctx, 0), benchInvoices)
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
	bl := newBenchBaseline(b, srv.URL, srv.FullKey)
	benchpair.Run(b, 1, benchpair.Variant{Name: "plain", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil), total)
	}}, benchpair.Variant{Name: "prefetch8", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)), total)
	}}, benchpair.Variant{Name: "nethttp8", Run: func() error {
		return benchCount(bl.rangeAll(ctx, 8), total)
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
	c, bl := newClient(b, base, testKey), newBenchBaseline(b, base, testKey)
	ctx := context.Background()
	benchpair.Run(b, 1, benchpair.Variant{Name: "plain", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil), total)
	}}, benchpair.Variant{Name: "prefetch8", Run: func() error {
		return benchCount(c.Invoices.List(ctx, nil, invoicing.WithPrefetch(8)), total)
	}}, benchpair.Variant{Name: "nethttp8", Run: func() error {
		return benchCount(bl.rangeAll(ctx, 8), total)
	}})
}
