package invoicing_test

// Behaviour under hostile servers, stalled networks and careless callers:
// every call ends, nothing leaks the key, nothing allocates what a server
// merely claims.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// ---------------------------------------------------------- lists always end

func TestListEndsOnServerIgnoringPage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		requests   int
		message    string
	}{
		{"total reached with has_more", `{"invoices": [{"id": "00000000-0000-4000-8000-000000000001", "invoice_number": "A"}, {"id": "00000000-0000-4000-8000-000000000002", "invoice_number": "B"}], "total": 2, "page": 1, "page_size": 100, "has_more": true}`,
			1, "page 1 says more records follow, but all 2 were listed"},
		{"page not echoed", `{"invoices": [{"id": "00000000-0000-4000-8000-000000000001", "invoice_number": "A"}, {"id": "00000000-0000-4000-8000-000000000002", "invoice_number": "B"}], "total": 900, "page": 1, "page_size": 100, "has_more": true}`,
			2, "asked for page 2, the service answered page 1"},
		{"same ids, no total, no echo", `{"invoices": [{"id": "00000000-0000-4000-8000-000000000001", "invoice_number": "A"}, {"id": "00000000-0000-4000-8000-000000000002", "invoice_number": "B"}], "has_more": true}`,
			2, "page 2 repeats the records of page 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, api := newTestAPI(t, always(200, tc.body))
			got, err := collectNumbers(c.Invoices.List(context.Background(), nil))
			require.ErrorIs(t, err, invoicing.ErrInconsistentList)
			assert.Contains(t, err.Error(), tc.message)
			assert.Equal(t, []string{"A", "B"}, got, "each record once, none of the repeated page")
			assert.Len(t, api.requests(), tc.requests)
		})
	}
}

func TestOversizedPageRefusedBeforeDecoding(t *testing.T) {
	// 10^6 empty records, 2.9 MiB, on a page asked for 100.
	body := `{"invoices": [{}` + strings.Repeat(`,{}`, 999_999) + `], "total": 1000000, "page": 1, "page_size": 100, "has_more": true}`
	srv := httptest.NewServer(always(200, body))
	defer srv.Close()
	c, err := invoicing.NewClient(srv.URL+prefix, testKey)
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := collectNumbers(c.Invoices.List(context.Background(), nil))
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, invoicing.ErrInconsistentList)
	assert.Contains(t, err.Error(), "the page holds 1000000 records, more than the page_size of 100")
	assert.Empty(t, got)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB to refuse the page", allocated>>10)
	assert.Less(t, allocated, uint64(32<<20), "decoding it all took 600-800 MiB")

	_, err = c.Invoices.ListPage(context.Background(), &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 10}})
	require.ErrorIs(t, err, invoicing.ErrInconsistentList, "ListPage refuses it too")
}

// ------------------------------------------------- nothing waits forever

func TestStalledServerEndsEachAttempt(t *testing.T) {
	var attempts atomic.Int32
	stall := func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		<-r.Context().Done() // never answers
	}
	c, _ := newTestAPI(t, stall, invoicing.WithTimeout(100*time.Millisecond), invoicing.WithMaxRetries(2), invoicing.WithClock(newFakeClock()))
	var resp invoicing.Response
	_, err := c.Invoices.Get(context.Background(), invoiceID, invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "no complete response within 100ms")
	assert.EqualValues(t, 3, attempts.Load(), "a stall is a network error: a GET is retried")
	assert.Equal(t, 3, resp.Attempts)

	attempts.Store(0)
	_, err = c.Quotes.Create(context.Background(), validQuote())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, attempts.Load(), "a create without a reference is not repeated")
}

func TestDrippingBodyEndsAtTheAttemptDeadline(t *testing.T) {
	drip := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for {
			_, _ = io.WriteString(w, " ")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	c, api := newTestAPI(t, drip, invoicing.WithTimeout(200*time.Millisecond), invoicing.WithMaxRetries(1), invoicing.WithClock(newFakeClock()))
	start := time.Now()
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the deadline covers the whole body, not each byte")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Len(t, api.requests(), 2)
}

func TestPDFStallIsAnIdleReadError(t *testing.T) {
	release := make(chan struct{})
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, "%PDF-1.7\n")
		w.(http.Flusher).Flush()
		select { // then nothing more
		case <-r.Context().Done():
		case <-release:
		}
	}, invoicing.WithTimeout(150*time.Millisecond))
	defer close(release)
	f, err := c.Invoices.PDF(context.Background(), invoiceID)
	require.NoError(t, err, "the headers came in time")
	defer f.Close()
	head := make([]byte, 9)
	_, err = io.ReadFull(f, head)
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // the caller is slow: that is not a stall
	_, err = f.Read(make([]byte, 10))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "stalled for 150ms")
}

func TestPDFSlowReaderIsNotAStall(t *testing.T) {
	pdf := bytes.Repeat([]byte("%PDF-1.7 0123456789\n"), 100)
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}, invoicing.WithTimeout(50*time.Millisecond))
	f, err := c.Invoices.PDF(context.Background(), invoiceID)
	require.NoError(t, err)
	defer f.Close()
	var got []byte
	buf := make([]byte, 500)
	for {
		time.Sleep(60 * time.Millisecond) // longer than the timeout, between reads
		n, err := f.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, pdf, got)
}

// Transport-level faults, without a server: httpmock's responders.
func TestTransportFaults(t *testing.T) {
	t.Run("stall without a server", func(t *testing.T) {
		c, mt := mockClient(t, invoicing.WithTimeout(50*time.Millisecond), invoicing.WithMaxRetries(1))
		mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		_, err := c.Items.Get(context.Background(), invoiceID)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 2, mt.GetTotalCallCount())
	})
	t.Run("body cut short", func(t *testing.T) {
		c, mt := mockClient(t)
		cut := func(*http.Request) (*http.Response, error) {
			resp := httpmock.NewBytesResponse(200, nil)
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"id": "`), iotestErrReader{io.ErrUnexpectedEOF}))
			return resp, nil
		}
		mt.RegisterNoResponder(httpmock.Responder(cut).Then(httpmock.NewStringResponder(200, fixture(t, "item.json"))))
		it, err := c.Items.Get(context.Background(), invoiceID)
		require.NoError(t, err, "a broken body is a network error: the GET is retried")
		assert.NotEmpty(t, it.ID)
		assert.Equal(t, 2, mt.GetTotalCallCount())
	})
	t.Run("connection reset on a create", func(t *testing.T) {
		c, mt := mockClient(t)
		mt.RegisterNoResponder(httpmock.NewErrorResponder(errors.New("connection reset by peer")))
		_, err := c.Bills.Create(context.Background(), &invoicing.BillCreateParams{SupplierID: invoiceID})
		require.ErrorContains(t, err, "connection reset by peer")
		assert.Equal(t, 1, mt.GetTotalCallCount())
		_, err = c.Bills.Create(context.Background(), &invoicing.BillCreateParams{SupplierID: invoiceID}, invoicing.WithIdempotentRetry())
		require.Error(t, err)
		assert.Equal(t, 1+1+3, mt.GetTotalCallCount(), "WithIdempotentRetry: 1 try + 3 retries")
	})
	t.Run("Content-Length is a hint", func(t *testing.T) {
		c, mt := mockClient(t)
		mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
			resp := httpmock.NewStringResponse(200, `{}`)
			resp.ContentLength = 32 << 20 // claimed, not sent
			return resp, nil
		})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := c.Items.Get(context.Background(), invoiceID)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20), "a 32 MiB claim must not allocate 32 MiB")
	})
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

// --------------------------------------- a caller's http.Client stays safe

func TestCallersHTTPClientKeepsTheRedirectRule(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.HasSuffix(r.URL.Path, "/moved") {
			http.Redirect(w, r, strings.TrimSuffix(r.URL.Path, "/moved"), http.StatusFound) // same host: allowed
			return
		}
		if r.URL.Path != prefix+"/items/"+invoiceID {
			http.Redirect(w, r, "http://api.example.test"+r.URL.Path, http.StatusFound) // to plain http: refused
			return
		}
		reply(w, 200, `{"id": "`+invoiceID+`"}`)
	}))
	defer srv.Close()
	var policyCalls atomic.Int32
	mine := &http.Client{
		Timeout:   30 * time.Second,
		Transport: srv.Client().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			policyCalls.Add(1)
			return nil
		},
	}
	c, err := invoicing.NewClient(srv.URL+prefix, testKey, invoicing.WithHTTPClient(mine))
	require.NoError(t, err)

	_, err = c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorContains(t, err, "refusing to follow a redirect to plain http")
	assert.NotContains(t, err.Error(), testKey)
	assert.EqualValues(t, 1, hits.Load(), "not followed, not retried")
	assert.EqualValues(t, 0, policyCalls.Load(), "the SDK's rule runs first")

	var out map[string]any
	require.NoError(t, c.Do(context.Background(), "GET", "/items/"+invoiceID+"/moved", nil, &out))
	assert.EqualValues(t, 1, policyCalls.Load(), "the caller's policy still runs")
	assert.Nil(t, mine.CheckRedirect(nil, nil), "the caller's client is not modified")
	assert.Equal(t, 30*time.Second, mine.Timeout)
}

// ------------------------------------------------ the key cannot be printed

func TestAPIKeyCannotBePrinted(t *testing.T) {
	const key = "sk_live_do_not_print_me_0123456789"
	c, err := invoicing.NewClient("https://api.example.test"+prefix, key)
	require.NoError(t, err)
	values := map[string]any{
		"*Client": c, "Client": reflect.ValueOf(c).Elem().Interface(), // what *c gives
		"Invoices": c.Invoices, "*Invoices": *c.Invoices, "Items": c.Items,
		"Quotes": c.Quotes, "Clients": c.Clients, "Suppliers": c.Suppliers, "Bills": c.Bills,
		"Accounts": c.Accounts, "TaxCodes": c.TaxCodes, "Reports": c.Reports, "*Reports": *c.Reports,
		"BankAccounts": c.BankAccounts, "BankTransactions": c.BankTransactions,
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t", "%p", "%T", "%60.4v", "%08d"} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, key, "%s printed with %s", name, verb)
			assert.NotContains(t, out, "Bearer", "%s printed with %s", name, verb)
			assert.NotContains(t, out, fmt.Sprintf("%x", key), "%s printed with %s", name, verb)
		}
	}
	assert.Equal(t, "invoicing.Client{https://api.example.test"+prefix+"}", fmt.Sprintf("%v", c))
}

// ---------------------------------------------------- small robustness points

func TestSuccessBodyMustBeAnObject(t *testing.T) {
	for _, body := range []string{`null`, `[]`, `"invoice"`, `42`, `true`, ``, `   `} {
		c, _ := newTestAPI(t, always(200, body))
		inv, err := c.Invoices.Get(context.Background(), invoiceID)
		assert.Nil(t, inv, "body %q", body)
		assert.ErrorContains(t, err, "want a JSON object", "body %q", body)
		_, err = c.Invoices.ListPage(context.Background(), nil)
		assert.ErrorContains(t, err, "want a JSON object", "list, body %q", body)
	}
}

func TestErrorMessageEscapesServerText(t *testing.T) {
	detail := "Invoice not found\ninvoicing: GET /x: 200 OK\x1b[2K\u202e"
	c, _ := newTestAPI(t, always(404, `{"detail": "Invoice not found\ninvoicing: GET /x: 200 OK\u001b[2K\u202e"}`))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, detail, apiErr.Detail, "Detail is verbatim")
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	assert.NotContains(t, msg, "\x1b")
	assert.NotContains(t, msg, "\u202e")
	assert.Contains(t, msg, `404 Not Found: "Invoice not found\ninvoicing: GET /x: 200 OK\x1b[2K\u202e"`)
}

func TestPDFErrorsComeBackAsJSONDetails(t *testing.T) {
	c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			reply(w, 404, `{"detail": "Invoice not found"}`)
			return
		}
		http.Error(w, "<html>Not Found</html>", 404)
	})
	_, err := c.Invoices.PDF(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "Invoice not found", apiErr.Detail)
	assert.Equal(t, "application/pdf, application/json", api.last(t).Header.Get("Accept"))
}

func TestPDFFileNamesAreSafe(t *testing.T) {
	long := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	for _, tc := range []struct{ disposition, want string }{
		{`attachment; filename="Invoice-INV-0042.pdf"`, "Invoice-INV-0042.pdf"},
		{`attachment; filename="../../etc/passwd"`, "passwd"},
		{`attachment; filename="C:\\Windows\\evil.pdf"`, "evil.pdf"},
		{"attachment; filename*=UTF-8''Invoice%C2%85-1.pdf", "Invoice-1.pdf"},            // C1 control (NEL)
		{"attachment; filename*=UTF-8''Invoice-%E2%80%AEfdp.exe", "Invoice-fdp.exe"},     // right-to-left override
		{"attachment; filename*=UTF-8''a%E2%81%A6b%E2%81%A9c%E2%80%AAd.pdf", "abcd.pdf"}, // isolates, embedding
		{"attachment; filename*=UTF-8''" + strings.ReplaceAll(long, "é", "%C3%A9"), strings.Repeat("é", 125) + ".pdf"},
		{`attachment; filename=".."`, ""},
		{`attachment; filename="%2e%2e"`, "%2e%2e"},
		{`inline`, ""},
	} {
		c, _ := newTestAPI(t, always(200, "%PDF", "Content-Type", "application/pdf", "Content-Disposition", tc.disposition))
		f, err := c.Invoices.PDF(context.Background(), invoiceID)
		require.NoError(t, err, tc.disposition)
		f.Close()
		assert.Equal(t, tc.want, f.Filename, tc.disposition)
		assert.LessOrEqual(t, len(f.Filename), 255)
	}
}

func TestQuoteLineItemIDKeptAsSent(t *testing.T) {
	body := strings.Replace(fixture(t, "quote.json"), `"line_items": [`, `"line_items": [{"id": "l-odd", "item_id": "", "quantity": 1}, {"id": "l-odder", "item_id": "SKU 7", "quantity": 1}, `, 1)
	c, _ := newTestAPI(t, always(200, body))
	q, err := c.Quotes.Get(context.Background(), invoiceID)
	require.NoError(t, err, "an odd item_id does not fail the quote")
	assert.Equal(t, "", q.LineItems[0].ItemID)
	assert.Equal(t, "SKU 7", q.LineItems[1].ItemID)
}

func TestExplicitZeroQuantityIsSent(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "invoice.json")))
	p := validInvoice()
	p.LineItems = []invoicing.LineItemParams{
		{Description: "billed", Quantity: invoicing.Ptr(dec("1")), UnitPrice: dec("100")},
		{Description: "free this month", Quantity: invoicing.Ptr(dec("0")), UnitPrice: dec("100")},
		{Description: "service default", UnitPrice: dec("100")},
	}
	_, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	body := string(api.last(t).Body)
	assert.Contains(t, body, `{"description":"billed","quantity":1,"unit_price":100}`)
	assert.Contains(t, body, `{"description":"free this month","quantity":0,"unit_price":100}`)
	assert.Contains(t, body, `{"description":"service default","unit_price":100}`)
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	quote := strings.Replace(fixture(t, "quote.json"), `"unit_price": 0,`, `"unit_price": "lots",`, 1)
	require.NotEqual(t, fixture(t, "quote.json"), quote)
	c, _ := newTestAPI(t, always(200, quote))
	_, err := c.Quotes.Get(context.Background(), invoiceID)
	require.ErrorContains(t, err, "field line_items[1].unit_price")

	c, _ = newTestAPI(t, always(200, `{"invoices": [{"id": "a"}, {"id": "b", "issue_date": "2026-13-45"}], "has_more": false}`))
	_, err = c.Invoices.ListPage(context.Background(), nil)
	require.ErrorContains(t, err, "field invoices[1].issue_date")
	require.ErrorContains(t, err, `invalid date "2026-13-45"`)
}
