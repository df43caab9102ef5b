package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go"
)

// Each sub-benchmark closes its idle connections and starts from a fresh GC,
// and runPair alternates which client runs first: on this 2-core VM the
// second of two back-to-back runs is measurably slower, whichever it is.
//
// The benchmarks compare the SDK with a hand-written net/http +
// encoding/json client decoding the same types from the same local server,
// in the same run:
//
//	go test -run '^$' -bench . -benchmem -count 10 . | tee bench.txt
//	benchstat -col /client bench.txt

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

// benchRound counts the calls of runPair (one per -count repetition).
var benchRound int

// runPair runs the baseline and the SDK sub-benchmarks, alternating their
// order from one repetition to the next so neither is always second.
func runPair(b *testing.B, baseline, sdk func(*testing.B)) {
	benchRound++
	if benchRound%2 == 1 {
		b.Run("client=baseline", baseline)
		b.Run("client=sdk", sdk)
		return
	}
	b.Run("client=sdk", sdk)
	b.Run("client=baseline", baseline)
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

func BenchmarkInvoicesGet(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	runPair(b, func(b *testing.B) {
		bl := newBaseline(srv)
		defer bl.hc.CloseIdleConnections()
		runtime.GC()
		b.ReportAllocs()
		for b.Loop() {
			var inv invoicing.Invoice
			if err := bl.get(ctx, "/invoices/"+invoiceID, &inv); err != nil || inv.InvoiceNumber != "INV-0042" {
				b.Fatal(err)
			}
		}
	}, func(b *testing.B) {
		c, err := invoicing.NewClient(srv.URL+prefix, testKey)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseIdleConnections()
		runtime.GC()
		b.ReportAllocs()
		for b.Loop() {
			inv, err := c.Invoices.Get(ctx, invoiceID)
			if err != nil || inv.InvoiceNumber != "INV-0042" {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkInvoicesListAll(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	runPair(b, func(b *testing.B) {
		bl := newBaseline(srv)
		defer bl.hc.CloseIdleConnections()
		runtime.GC()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for page := 1; ; page++ {
				var body struct {
					Invoices []invoicing.Invoice `json:"invoices"`
					HasMore  bool                `json:"has_more"`
				}
				if err := bl.get(ctx, "/invoices?page="+strconv.Itoa(page)+"&page_size=100", &body); err != nil {
					b.Fatal(err)
				}
				for i := range body.Invoices {
					if body.Invoices[i].InvoiceNumber == "" {
						b.Fatal("empty invoice")
					}
					n++
				}
				if !body.HasMore || len(body.Invoices) == 0 {
					break
				}
			}
			if n != benchInvoices {
				b.Fatalf("got %d invoices", n)
			}
		}
	}, func(b *testing.B) {
		c, err := invoicing.NewClient(srv.URL+prefix, testKey)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseIdleConnections()
		runtime.GC()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for inv, err := range c.Invoices.List(ctx, nil) {
				if err != nil {
					b.Fatal(err)
				}
				if inv.InvoiceNumber == "" {
					b.Fatal("empty invoice")
				}
				n++
			}
			if n != benchInvoices {
				b.Fatalf("got %d invoices", n)
			}
		}
	})
}
