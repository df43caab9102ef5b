package invoicing_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The unit tests' one fake is httpmock: a mock transport behind each
// Client (newMock), answering with http.HandlerFuncs. The end-to-end tests
// (e2e_*_test.go) use invoicingtest instead (e2eServer). Both get their
// Client from newClient.

const (
	testKey = "sk_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	prefix  = "/api/v1/external"
	testURL = "https://api.invoicing.test" + prefix
)

// The ids of the fixtures in testdata/.
const (
	idInvoice  = "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f"
	idItem     = "9d7e6f5a-4b3c-4d2e-8f10-112233445566"
	idQuote    = "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"
	idClient   = "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
	idSupplier = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
	idBill     = "9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
	idAccount  = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	idTaxCode  = "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"
	idBankTx   = "3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f"
)

func svcDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// svcDecEqual asserts that got is want in value.
func svcDecEqual(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	assert.True(t, svcDec(want).Equal(got), append([]any{"want %s, got %s", want, got}, msgAndArgs...)...)
}

// svcAssertGET checks the parts of a request every read shares.
func svcAssertGET(t *testing.T, r seenRequest, path, query string) {
	t.Helper()
	assert.Equal(t, http.MethodGet, r.Method)
	assert.Equal(t, path, r.Path)
	assert.Equal(t, query, r.Query)
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	assert.Equal(t, "application/json", r.Header.Get("Accept"))
	assert.Empty(t, r.Body)
}

// svcAssertPOST checks a create request, including its exact body.
func svcAssertPOST(t *testing.T, r seenRequest, path, body string) {
	t.Helper()
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, path, r.Path)
	assert.Empty(t, r.Query)
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, body, string(r.Body))
}

// svcPaging returns the paging members of pg, and its number of records:
// total, page, page_size, has_more, len(items).
func svcPaging[T any](pg *invoicing.Page[T]) []any {
	return []any{pg.Total, pg.Page, pg.PageSize, pg.HasMore, len(pg.Items)}
}

// svcErr returns the error of a call returning a value and an error.
func svcErr[T any](_ T, err error) error { return err }

// svcListErr drains a List and returns its error, if any.
func svcListErr[T any](seq iter.Seq2[*T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func svcValidInvoice() *invoicing.InvoiceCreateParams {
	return &invoicing.InvoiceCreateParams{
		ClientID:         "c0ffee00-1111-4222-8333-444455556666",
		DefaultAccountID: "4000",
		DefaultTaxCodeID: "GST",
		LineItems:        []invoicing.LineItemParams{{UnitPrice: svcDec("100")}},
	}
}

func svcValidItem() *invoicing.ItemCreateParams {
	return &invoicing.ItemCreateParams{Name: "Widget", AccountID: "4000", TaxCodeID: "GST", UnitPrice: invoicing.Ptr(svcDec("19.999"))}
}

func svcValidQuote() *invoicing.QuoteCreateParams {
	return &invoicing.QuoteCreateParams{
		ClientID:  "c0ffee00-1111-4222-8333-444455556666",
		LineItems: []invoicing.LineItemParams{{UnitPrice: svcDec("100"), AccountID: "4000", TaxCodeID: "ONE"}},
	}
}

// apiCall is one SDK call, made with valid arguments and the request
// options under test.
type apiCall struct {
	name   string
	verb   string // the HTTP method it sends
	path   string // the path it sends, relative to the base URL
	create bool   // a POST not safe to repeat
	raw    bool   // a PDF or Client.Do: it decodes no record or page
	call   func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) error
}

// apiCalls is every method of every service, and Client.Do.
func apiCalls() []apiCall {
	type (
		ctxT = context.Context
		C    = invoicing.Client
		O    = invoicing.RequestOption
	)
	withRef := svcValidInvoice()
	withRef.Reference = "ERP-1"
	pdf := func(f *invoicing.File, err error) error {
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(io.Discard, f)
		return err
	}
	return []apiCall{
		{"Invoices.List", "GET", "/invoices", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Invoices.List(ctx, nil, listOpts(o)...)) }},
		{"Invoices.ListPage", "GET", "/invoices", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Invoices.ListPage(ctx, nil, o...)) }},
		{"Invoices.Get", "GET", "/invoices/" + idInvoice, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Invoices.Get(ctx, idInvoice, o...)) }},
		{"Invoices.PDF", "GET", "/invoices/" + idInvoice + "/pdf", false, true, func(ctx ctxT, c *C, o ...O) error { return pdf(c.Invoices.PDF(ctx, idInvoice, o...)) }},
		{"Invoices.Create", "POST", "/invoices", true, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Invoices.Create(ctx, svcValidInvoice(), o...)) }},
		{"Invoices.Create with Reference", "POST", "/invoices", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Invoices.Create(ctx, withRef, o...)) }},
		{"Items.List", "GET", "/items", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Items.List(ctx, nil, listOpts(o)...)) }},
		{"Items.ListPage", "GET", "/items", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Items.ListPage(ctx, nil, o...)) }},
		{"Items.Get", "GET", "/items/" + idItem, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Items.Get(ctx, idItem, o...)) }},
		{"Items.Create", "POST", "/items", true, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Items.Create(ctx, svcValidItem(), o...)) }},
		{"Quotes.List", "GET", "/quotes", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Quotes.List(ctx, nil, listOpts(o)...)) }},
		{"Quotes.ListPage", "GET", "/quotes", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Quotes.ListPage(ctx, nil, o...)) }},
		{"Quotes.Get", "GET", "/quotes/" + idQuote, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Quotes.Get(ctx, idQuote, o...)) }},
		{"Quotes.PDF", "GET", "/quotes/" + idQuote + "/pdf", false, true, func(ctx ctxT, c *C, o ...O) error { return pdf(c.Quotes.PDF(ctx, idQuote, o...)) }},
		{"Quotes.Create", "POST", "/quotes", true, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Quotes.Create(ctx, svcValidQuote(), o...)) }},
		{"Clients.List", "GET", "/clients", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Clients.List(ctx, nil, listOpts(o)...)) }},
		{"Clients.ListPage", "GET", "/clients", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Clients.ListPage(ctx, nil, o...)) }},
		{"Clients.Get", "GET", "/clients/" + idClient, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Clients.Get(ctx, idClient, o...)) }},
		{"Clients.Create", "POST", "/clients", true, false, func(ctx ctxT, c *C, o ...O) error {
			return svcErr(c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Acme"}, o...))
		}},
		{"Suppliers.List", "GET", "/suppliers", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Suppliers.List(ctx, nil, listOpts(o)...)) }},
		{"Suppliers.ListPage", "GET", "/suppliers", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Suppliers.ListPage(ctx, nil, o...)) }},
		{"Suppliers.Get", "GET", "/suppliers/" + idSupplier, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Suppliers.Get(ctx, idSupplier, o...)) }},
		{"Suppliers.Create", "POST", "/suppliers", true, false, func(ctx ctxT, c *C, o ...O) error {
			return svcErr(c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "Paper Co"}, o...))
		}},
		{"Bills.List", "GET", "/bills", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Bills.List(ctx, nil, listOpts(o)...)) }},
		{"Bills.ListPage", "GET", "/bills", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Bills.ListPage(ctx, nil, o...)) }},
		{"Bills.Get", "GET", "/bills/" + idBill, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Bills.Get(ctx, idBill, o...)) }},
		{"Bills.Create", "POST", "/bills", true, false, func(ctx ctxT, c *C, o ...O) error {
			return svcErr(c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: idSupplier}, o...))
		}},
		{"Accounts.List", "GET", "/accounts", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.Accounts.List(ctx, nil, listOpts(o)...)) }},
		{"Accounts.ListPage", "GET", "/accounts", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Accounts.ListPage(ctx, nil, o...)) }},
		{"Accounts.Get", "GET", "/accounts/" + idAccount, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Accounts.Get(ctx, idAccount, o...)) }},
		{"TaxCodes.List", "GET", "/tax-codes", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.TaxCodes.List(ctx, nil, listOpts(o)...)) }},
		{"TaxCodes.ListPage", "GET", "/tax-codes", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.TaxCodes.ListPage(ctx, nil, o...)) }},
		{"TaxCodes.Get", "GET", "/tax-codes/" + idTaxCode, false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.TaxCodes.Get(ctx, idTaxCode, o...)) }},
		{"BankAccounts.List", "GET", "/bank-accounts", false, false, func(ctx ctxT, c *C, o ...O) error { return svcListErr(c.BankAccounts.List(ctx, nil, listOpts(o)...)) }},
		{"BankAccounts.ListPage", "GET", "/bank-accounts", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.BankAccounts.ListPage(ctx, nil, o...)) }},
		{"BankTransactions.List", "GET", "/bank-transactions", false, false, func(ctx ctxT, c *C, o ...O) error {
			return svcListErr(c.BankTransactions.List(ctx, nil, listOpts(o)...))
		}},
		{"BankTransactions.ListPage", "GET", "/bank-transactions", false, false, func(ctx ctxT, c *C, o ...O) error {
			return svcErr(c.BankTransactions.ListPage(ctx, nil, o...))
		}},
		{"BankTransactions.Get", "GET", "/bank-transactions/" + idBankTx, false, false, func(ctx ctxT, c *C, o ...O) error {
			return svcErr(c.BankTransactions.Get(ctx, idBankTx, o...))
		}},
		{"Reports.TrialBalance", "GET", "/reports/trial-balance", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Reports.TrialBalance(ctx, nil, o...)) }},
		{"Reports.ProfitAndLoss", "GET", "/reports/profit-loss", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Reports.ProfitAndLoss(ctx, nil, o...)) }},
		{"Reports.BalanceSheet", "GET", "/reports/balance-sheet", false, false, func(ctx ctxT, c *C, o ...O) error { return svcErr(c.Reports.BalanceSheet(ctx, nil, o...)) }},
		{"Client.Do GET", "GET", "/invoices/" + idInvoice, false, true, func(ctx ctxT, c *C, o ...O) error {
			var out map[string]any
			return c.Do(ctx, "GET", "/invoices/"+idInvoice, nil, &out, o...)
		}},
		{"Client.Do POST", "POST", "/credit-notes", true, true, func(ctx ctxT, c *C, o ...O) error {
			return c.Do(ctx, "POST", "/credit-notes", map[string]any{"invoice_id": idInvoice}, nil, o...)
		}},
	}
}

// recordCalls are the calls of apiCalls that decode a record or a page:
// all but the PDFs and Client.Do.
func recordCalls() []apiCall {
	var out []apiCall
	for _, c := range apiCalls() {
		if !c.raw {
			out = append(out, c)
		}
	}
	return out
}

// listOpts turns RequestOptions into the ListOptions List takes.
func listOpts(opts []invoicing.RequestOption) []invoicing.ListOption {
	out := make([]invoicing.ListOption, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

// seenRequest is what the mock received.
type seenRequest struct {
	Method string
	Path   string // without the /api/v1/external prefix
	Query  string
	Header http.Header
	Body   []byte
}

// mockAPI is the fake service a test Client calls (see newMock): it records
// every request it receives and answers it.
type mockAPI struct {
	// handler answers each request; or responder does, for what no handler
	// can give (a transport error, a body that breaks or stalls).
	handler   http.HandlerFunc
	responder httpmock.Responder
	// shape is the http.Client the Client is given around the mock's
	// transport, as a caller would pass one to WithHTTPClient
	// (plainHTTPClient when nil).
	shape func(http.RoundTripper) *http.Client
	// server serves the mock on loopback (httptest) instead, for net/http's
	// own transports, which only a real connection exercises: the Client
	// then has its default http.Client, or shape(nil) when shape is set.
	server bool
	// base and key are the Client's base URL and key: testURL and testKey
	// when empty.
	base, key string

	once sync.Once
	mt   *httpmock.MockTransport
	mu   sync.Mutex
	reqs []seenRequest
}

// mockAnswer is what newMock takes: a handler, a responder, or a mockAPI
// set up beyond its answer.
type mockAnswer interface {
	~func(http.ResponseWriter, *http.Request) | ~func(*http.Request) (*http.Response, error) | *mockAPI
}

// newMock is how a test gets a Client, as go-github's setup does (the
// tests of NewClient's own checks aside): a Client (newClient) whose every
// request the returned mockAPI records and answers with answer, through an
// httpmock transport. opts come after, and win.
func newMock[A mockAnswer](t testing.TB, answer A, opts ...invoicing.Option) (*invoicing.Client, *mockAPI) {
	t.Helper()
	var a *mockAPI
	switch v := any(answer).(type) {
	case *mockAPI:
		a = v
	case http.HandlerFunc:
		a = &mockAPI{handler: v}
	case func(http.ResponseWriter, *http.Request):
		a = &mockAPI{handler: v}
	case httpmock.Responder:
		a = &mockAPI{responder: v}
	case func(*http.Request) (*http.Response, error):
		a = &mockAPI{responder: v}
	}
	base, hc := a.base, a.shape
	switch {
	case a.server:
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.record(r)
			a.handler(w, r)
		}))
		t.Cleanup(srv.Close)
		base = srv.URL + prefix
		if hc != nil {
			opts = append([]invoicing.Option{invoicing.WithHTTPClient(hc(nil))}, opts...)
		}
	default:
		if hc == nil {
			hc = plainHTTPClient
		}
		opts = append([]invoicing.Option{invoicing.WithHTTPClient(hc(a.transport()))}, opts...)
	}
	return newClient(t, base, a.key, opts...), a
}

// newClient is the one place the tests build a Client (the tests of
// NewClient's own checks aside): base URL base and key key (testURL and
// testKey when empty), fast retries, then opts, which win.
func newClient(t testing.TB, base, key string, opts ...invoicing.Option) *invoicing.Client {
	t.Helper()
	opts = append([]invoicing.Option{invoicing.WithRetryWait(time.Millisecond, 20*time.Millisecond)}, opts...)
	c, err := invoicing.NewClient(cmp.Or(base, testURL), cmp.Or(key, testKey), opts...)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// plainHTTPClient is the http.Client most tests give the SDK: rt and
// nothing else.
func plainHTTPClient(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt} }

// transport returns the httpmock transport that hands every request to
// the mock, for an http.Client of a test's own.
func (a *mockAPI) transport() *httpmock.MockTransport {
	a.once.Do(func() {
		a.mt = httpmock.NewMockTransport()
		a.mt.RegisterNoResponder(a.respond)
	})
	return a.mt
}

func (a *mockAPI) requests() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenRequest(nil), a.reqs...)
}

func (a *mockAPI) last(t *testing.T) seenRequest {
	t.Helper()
	r := a.requests()
	require.NotEmpty(t, r, "no request reached the mock")
	return r[len(r)-1]
}

// record notes r, leaving its body to be read again.
func (a *mockAPI) record(r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	a.mu.Lock()
	a.reqs = append(a.reqs, seenRequest{
		Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, prefix),
		Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body,
	})
	a.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
}

// respond records r and answers it, as the mock transport's responder.
func (a *mockAPI) respond(r *http.Request) (*http.Response, error) {
	a.record(r)
	if a.responder != nil {
		return a.responder(r)
	}
	rec := httptest.NewRecorder()
	a.handler(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// reply answers with status, a JSON (or other) body and header pairs.
func reply(w http.ResponseWriter, status int, body string, header ...string) {
	w.Header().Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// always answers every request the same way.
func always(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { reply(w, status, body, header...) }
}

// sequence answers the n-th request with the n-th handler, repeating the last.
func sequence(hs ...http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := hs[min(n, len(hs)-1)]
		n++
		mu.Unlock()
		h(w, r)
	}
}

// ------------------------------------------------ answers and observers
//
// Answers beyond a handler (in turn, stalling, dripping), what tests
// observe a call with (arrivals, logs, the bytes read), the http.Clients
// callers pass, and endpointAPI, which answers every endpoint.

// responders answers the n-th request with the n-th responder, repeating
// the last (unlike httpmock's Then, it holds no lock while one runs).
func responders(rs ...httpmock.Responder) httpmock.Responder {
	var n atomic.Int32
	return func(r *http.Request) (*http.Response, error) {
		i := int(n.Add(1)) - 1
		return rs[min(i, len(rs)-1)](r)
	}
}

// stallingBody returns first, then blocks until ctx ends and fails with
// its error, as a connection does whose peer stopped sending.
type stallingBody struct {
	ctx   context.Context
	first []byte
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *stallingBody) Close() error { return nil }

// stallAfter answers status with a body that sends first and then stalls.
func stallAfter(status int, contentType, first string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, "")
		resp.Header.Set("Content-Type", contentType)
		resp.Body = &stallingBody{ctx: r.Context(), first: []byte(first)}
		resp.Request = r
		return resp, nil
	}
}

// stallHeaders never answers: the request ends with its context.
func stallHeaders(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// arrivals records when each request reached a handler.
type arrivals struct {
	mu sync.Mutex
	at []time.Time
}

func (a *arrivals) wrap(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.at = append(a.at, time.Now())
		a.mu.Unlock()
		h(w, r)
	}
}

func (a *arrivals) times() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at...)
}

// logRecorder is a slog.Handler keeping every record (and a line of text
// for each); on, when set before use, sees each record as it is logged.
type logRecorder struct {
	mu    sync.Mutex
	recs  []slog.Record
	lines []string
	on    func(slog.Record)
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	if l.on != nil {
		l.on(r)
	}
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waits returns the "wait" of every "invoicing: retrying" record: the
// longest the wait before that retry could be.
func (l *logRecorder) waits() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ws []time.Duration
	for _, r := range l.recs {
		if r.Message == "invoicing: retrying" {
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "wait" {
					ws = append(ws, a.Value.Duration())
				}
				return true
			})
		}
	}
	return ws
}

func (l *logRecorder) logger() invoicing.Option { return invoicing.WithLogger(slog.New(l)) }

// getInvoice is the call most tests make: a GET, safe to repeat.
func getInvoice(c *invoicing.Client, opts ...invoicing.RequestOption) error {
	_, err := c.Invoices.Get(context.Background(), idInvoice, opts...)
	return err
}

// apiError returns err's *Error, failing the test when there is none.
func apiError(t *testing.T, err error) *invoicing.Error {
	t.Helper()
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	return apiErr
}

// dripBody sends a byte every 10 ms until its context ends.
type dripBody struct{ ctx context.Context }

func (b dripBody) Read(p []byte) (int, error) {
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-time.After(10 * time.Millisecond):
		p[0] = ' '
		return 1, nil
	}
}

func (dripBody) Close() error { return nil }

// countingBody counts what is read of a body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// wrappingTransport is a caller's RoundTripper wrapping another, as tracing
// and logging transports do.
type wrappingTransport struct{ next http.RoundTripper }

func (w wrappingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return w.next.RoundTrip(req)
}

// clientShapes are the ways callers pass an http.Client, each built around
// the transport rt: every typed error must come back the same through each.
// (net/http wraps the response body of a client with a Timeout; the SDK
// once lost the error body then.)
func clientShapes(t *testing.T) map[string]func(http.RoundTripper) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	follow := func(*http.Request, []*http.Request) error { return nil }
	return map[string]func(http.RoundTripper) *http.Client{
		"Transport only":     func(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt} },
		"Timeout":            func(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt, Timeout: 30 * time.Second} },
		"wrapping Transport": func(rt http.RoundTripper) *http.Client { return &http.Client{Transport: wrappingTransport{rt}} },
		"Jar":                func(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt, Jar: jar} },
		"CheckRedirect":      func(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt, CheckRedirect: follow} },
		"all of them at once": func(rt http.RoundTripper) *http.Client {
			return &http.Client{Transport: wrappingTransport{rt}, Timeout: time.Minute, Jar: jar, CheckRedirect: follow}
		},
	}
}

// newShapedClient returns a Client for h through shape, or, for the shapes
// "default" and "empty http.Client" (net/http's own transports, which only
// a real connection exercises), through a server on loopback.
func newShapedClient(t *testing.T, shape string, h http.HandlerFunc, opts ...invoicing.Option) (*invoicing.Client, *mockAPI) {
	t.Helper()
	switch shape {
	case "default":
		return newMock(t, &mockAPI{handler: h, server: true}, opts...)
	case "empty http.Client":
		return newMock(t, &mockAPI{handler: h, server: true, shape: func(http.RoundTripper) *http.Client { return &http.Client{} }}, opts...)
	}
	return newMock(t, &mockAPI{handler: h, shape: clientShapes(t)[shape]}, opts...)
}

func shapeNames(t *testing.T) []string {
	names := []string{"default", "empty http.Client"}
	for name := range clientShapes(t) {
		names = append(names, name)
	}
	return names
}

// endpointAPI answers every endpoint with a minimal valid body, and obeys
// the test's instructions in the request's X-Test header (sent with
// WithHeader, which this also tests): "fail=N" answers 503 to the first N
// attempts of the request named by X-Test-Call, "stall" never answers the
// first attempt (it ends with its deadline), "notfound" answers 404. It is
// an httpmock responder: a stalled attempt must fail with its context, not
// race it with an empty answer.
type endpointAPI struct {
	mu       sync.Mutex
	attempts map[string]int
	reqs     []seenRequest
}

func (a *endpointAPI) respond(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	a.mu.Lock()
	call := r.Header.Get("X-Test-Call")
	a.attempts[call]++
	n := a.attempts[call]
	a.reqs = append(a.reqs, seenRequest{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, prefix),
		Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	a.mu.Unlock()
	if r.Header.Get("X-Test") == "stall" && n == 1 {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	w := httptest.NewRecorder()
	a.answer(w, r, call, n)
	resp := w.Result()
	resp.Request = r
	return resp, nil
}

func (a *endpointAPI) answer(w http.ResponseWriter, r *http.Request, call string, n int) {
	w.Header().Set("X-Request-Id", "req-"+call+"-"+strconv.Itoa(n))
	switch mode := r.Header.Get("X-Test"); {
	case strings.HasPrefix(mode, "fail="):
		if limit, _ := strconv.Atoi(strings.TrimPrefix(mode, "fail=")); n <= limit {
			reply(w, 503, `{"detail": "busy"}`)
			return
		}
	case mode == "notfound":
		reply(w, 404, `{"detail": "Not found"}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, prefix)
	status := 200
	if r.Method == http.MethodPost {
		status = 201
	}
	switch {
	case strings.HasSuffix(path, "/pdf"):
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = io.WriteString(w, "%PDF-1.7\n")
	case strings.Count(path, "/") == 1 && r.Method == http.MethodGet: // a list
		reply(w, status, `{"items": [], "total": 0, "page": 1, "page_size": 100, "has_more": false}`)
	default:
		reply(w, status, `{"id": "`+idInvoice+`"}`)
	}
}

// lastOf returns the last request of the call named call (X-Test-Call).
func (a *endpointAPI) lastOf(t *testing.T, call string) seenRequest {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.reqs) - 1; i >= 0; i-- {
		if a.reqs[i].Header.Get("X-Test-Call") == call {
			return a.reqs[i]
		}
	}
	require.FailNow(t, "no request of "+call)
	return seenRequest{}
}

func (a *endpointAPI) attemptsOf(call string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attempts[call]
}

// fixture returns testdata/name.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// getFixture answers every request with testdata/name and returns what get
// makes of it, with the fixture's text. get must send one request: a GET
// of path with the query.
func getFixture[T any](t *testing.T, name, path, query string, get func(*invoicing.Client) (T, error)) (T, string) {
	t.Helper()
	body := fixture(t, name)
	c, api := newMock(t, always(200, body))
	v, err := get(c)
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), path, query)
	require.Len(t, api.requests(), 1)
	return v, body
}

// answered returns what get makes of a service that answers every request
// with body; get must succeed.
func answered[T any](t *testing.T, body string, get func(*invoicing.Client) (T, error)) T {
	t.Helper()
	c, _ := newMock(t, always(200, body))
	v, err := get(c)
	require.NoError(t, err)
	return v
}

// extraValue returns the member name of e, which must decode as a T.
func extraValue[T any](t *testing.T, e invoicing.Extra, name string) T {
	t.Helper()
	var v T
	require.NoError(t, e.Get(name, &v), name)
	return v
}

// rawJSON returns v encoded with encoding/json: for a record decoded from
// the service, the members it was decoded from.
func rawJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// ------------------------------------------------------------------ e2e
//
// End-to-end tests: every SDK method against the in-memory service of
// package invoicingtest, over real HTTP on loopback, with the API mounted
// under /api/v1/external. Expected values are computed from the rules of
// API.md (and, where API.md is silent, from the choices invoicingtest
// documents), never copied from a run. These are the helpers every
// e2e_*_test.go shares.

// e2eFast keeps retries fast: backoff from 1 ms, and Retry-After waits of up
// to 2 s are honoured (the service's Retry-After has a resolution of 1 s).
var e2eFast = invoicing.WithRetryWait(time.Millisecond, 2*time.Second)

// e2eDefaultRetries is WithMaxRetries's documented default: a call is sent
// at most 1+3 times.
const e2eDefaultRetries = 3

// e2eServer starts a fake service for one test and an SDK client for it
// with the full-scope key, fast retries and opts.
func e2eServer(t testing.TB, opts ...invoicingtest.Option) (*invoicingtest.Server, *invoicing.Client) {
	t.Helper()
	srv := invoicingtest.NewTestServer(t, opts...)
	return srv, newClient(t, srv.URL, srv.FullKey, e2eFast)
}

func e2eD(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// e2eDecEqual asserts that two decimals are equal in value.
func e2eDecEqual(t *testing.T, want, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	if !want.Equal(got) {
		assert.Fail(t, "decimal mismatch: want "+want.String()+", got "+got.String(), msgAndArgs...)
	}
}

// e2eAll drains a List iterator, failing the test on an error.
func e2eAll[T any](t *testing.T, seq iter.Seq2[*T, error]) []*T {
	t.Helper()
	out, err := invoicing.Collect(seq, 0)
	require.NoError(t, err)
	return out
}

// e2eIDs returns the ID field of each record, in order.
func e2eIDs[T any](recs []*T) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, reflect.ValueOf(r).Elem().FieldByName("ID").String())
	}
	return out
}

// e2eListIDs drains a List and returns the ids of its records.
func e2eListIDs[T any](t *testing.T, seq iter.Seq2[*T, error]) []string {
	t.Helper()
	return e2eIDs(e2eAll(t, seq))
}

// e2ePageIDs returns the ids of a page's records.
func e2ePageIDs[T any](p *invoicing.Page[T]) []string {
	out := make([]*T, len(p.Items))
	for i := range p.Items {
		out[i] = &p.Items[i]
	}
	return e2eIDs(out)
}

// e2eRequests returns the logged requests with method and path (relative to
// the base URL).
func e2eRequests(srv *invoicingtest.Server, method, path string) []invoicingtest.Request {
	var out []invoicingtest.Request
	for _, r := range srv.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// e2eToday is the service's "today" (UTC on its clock), the default
// issue_date.
func e2eToday(srv *invoicingtest.Server) invoicing.Date {
	return invoicing.DateOf(srv.Now().UTC())
}

// e2eAPIError asserts that err is an *invoicing.Error with the status.
func e2eAPIError(t *testing.T, err error, status int) *invoicing.Error {
	t.Helper()
	apiErr := apiError(t, err)
	require.Equal(t, status, apiErr.StatusCode, "error: %v", err)
	return apiErr
}

func e2eLine(desc, qty, price string) invoicing.LineItemParams {
	return invoicing.LineItemParams{Description: desc, Quantity: invoicing.Ptr(e2eD(qty)), UnitPrice: e2eD(price)}
}

// e2eInvoice is a create request for client with the Sales account and GST
// as defaults.
func e2eInvoice(clientID string, lines ...invoicing.LineItemParams) *invoicing.InvoiceCreateParams {
	return &invoicing.InvoiceCreateParams{
		ClientID:         clientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        lines,
	}
}

// e2eQuote is a quote create request for client with the Sales account and
// GST as defaults.
func e2eQuote(clientID string, lines ...invoicing.LineItemParams) *invoicing.QuoteCreateParams {
	p := e2eInvoice(clientID, lines...)
	return &invoicing.QuoteCreateParams{ClientID: p.ClientID, DefaultAccountID: p.DefaultAccountID, DefaultTaxCodeID: p.DefaultTaxCodeID, LineItems: p.LineItems}
}

// e2eAmounts is a line's net amount, tax and amount by API.md's rule
// (amount = quantity x unit_price + tax), rounded to cents per line half
// away from zero as invoicingtest documents. ratePercent is 10 for 10%.
func e2eAmounts(qty, price, ratePercent decimal.Decimal) (net, tax, amount decimal.Decimal) {
	gross := qty.Mul(price)
	net = gross.Round(2)
	tax = gross.Mul(ratePercent).Div(decimal.NewFromInt(100)).Round(2)
	return net, tax, net.Add(tax)
}

// e2eTaxRate reads a tax code's rate through the API.
func e2eTaxRate(t *testing.T, c *invoicing.Client, id string) decimal.Decimal {
	t.Helper()
	tc, err := c.TaxCodes.Get(t.Context(), id)
	require.NoError(t, err)
	return tc.Rate
}

// e2eQuoteMatchesInvoice asserts that an invoice converted from an accepted
// quote has the quote's accepted lines and totals.
func e2eQuoteMatchesInvoice(t *testing.T, q *invoicing.Quote, inv *invoicing.Invoice) {
	t.Helper()
	require.Len(t, inv.LineItems, len(q.LineItems))
	for i, ql := range q.LineItems {
		il := inv.LineItems[i]
		assert.Equal(t, ql.Description, il.Description)
		e2eDecEqual(t, ql.Quantity, il.Quantity)
		e2eDecEqual(t, ql.UnitPrice, il.UnitPrice)
		e2eDecEqual(t, ql.Amount, il.Amount)
		e2eDecEqual(t, ql.TaxAmount, il.TaxAmount)
	}
	e2eDecEqual(t, q.Subtotal, inv.Subtotal)
	e2eDecEqual(t, q.TaxTotal, inv.TaxTotal)
	e2eDecEqual(t, q.Total, inv.Total)
	e2eDecEqual(t, q.Total, inv.AmountDue)
}
