package invoicingotel_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

// calls makes a create, a get the server first answers 429 (two attempts),
// a list and a get of an unknown invoice, under one parent span.
func calls(t *testing.T, tel *telemetry, srv *invoicingtest.Server, c *invoicing.Client) tracetest.SpanStub {
	ctx, parent := tel.tp.Tracer("test").Start(context.Background(), "parent")
	created, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Consulting", UnitPrice: decimal.RequireFromString("150.00")}},
	})
	require.NoError(t, err)
	srv.InjectFault(invoicingtest.Fault{Status: http.StatusTooManyRequests, Method: http.MethodGet, Path: "/invoices/*"})
	var resp invoicing.Response
	_, err = c.Invoices.Get(ctx, created.ID, invoicing.WithResponseInto(&resp))
	require.NoError(t, err)
	require.Equal(t, 2, resp.Attempts, "a 429, then the invoice")
	for _, err := range c.Invoices.List(ctx, nil) {
		require.NoError(t, err)
	}
	_, err = c.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000")
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	parent.End()
	for _, s := range tel.spans.GetSpans() {
		if s.Name == "parent" {
			return s
		}
	}
	t.Fatal("no parent span")
	return tracetest.SpanStub{}
}

func TestOneSpanPerAttemptNamedByRoute(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tel := newTelemetry(t, nil)
	c := srv.Client(invoicing.WithMiddleware(tel.middleware(invoicingotel.WithPropagator(propagation.TraceContext{}))),
		invoicing.WithRetryWait(time.Millisecond, 10*time.Millisecond))
	parent := calls(t, tel, srv, c)

	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	host, port := u.Hostname(), u.Port()
	common := func(method, tmpl string) map[string]string {
		return map[string]string{"http.request.method": method, "http.route": tmpl, "url.template": tmpl,
			"server.address": host, "server.port": port}
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	type span struct {
		Name   string
		Status codes.Code
		Attrs  map[string]string
	}
	var got []span
	spans := tel.attemptSpans()
	for _, s := range spans {
		got = append(got, span{s.Name, s.Status.Code, attrs(s.Attributes)})
		assert.Empty(t, s.Status.Description, "%s: the status code says it all", s.Name)
	}
	assert.Equal(t, []span{
		{"POST /invoices", codes.Unset, with(common("POST", "/invoices"), "http.response.status_code", "201")},
		{"GET /invoices/{id}", codes.Error, with(common("GET", "/invoices/{id}"), "http.response.status_code", "429", "error.type", "429")},
		{"GET /invoices/{id}", codes.Unset, with(common("GET", "/invoices/{id}"), "http.response.status_code", "200", "http.request.resend_count", "1")},
		{"GET /invoices", codes.Unset, with(common("GET", "/invoices"), "http.response.status_code", "200")},
		{"GET /invoices/{id}", codes.Error, with(common("GET", "/invoices/{id}"), "http.response.status_code", "404", "error.type", "404")},
	}, got)

	// Every attempt is a child of the caller's span, and reached the server
	// with its own span's traceparent.
	reqs := srv.Requests()
	require.Len(t, reqs, len(spans))
	for i, s := range spans {
		assert.Equal(t, parent.SpanContext.SpanID(), s.Parent.SpanID(), s.Name)
		assert.Equal(t, parent.SpanContext.TraceID(), s.SpanContext.TraceID(), s.Name)
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(reqs[i].Header)))
		assert.Equal(t, s.SpanContext.SpanID(), sc.SpanID(), "request %d (%s %s) carries its attempt's span", i, reqs[i].Method, reqs[i].Path)
		assert.True(t, sc.IsSampled())
	}

	// The durations: one series per route and status, the 429 among them.
	series := map[string]uint64{}
	for _, p := range tel.durations(t) {
		a := attrs(p.Attributes.ToSlice())
		assert.NotContains(t, a, "http.request.resend_count", "no per-attempt attribute on the metric")
		series[a["http.request.method"]+" "+a["http.route"]+" "+a["http.response.status_code"]+" "+a["error.type"]] += p.Count
		assert.Equal(t, host, a["server.address"])
	}
	assert.Equal(t, map[string]uint64{
		"POST /invoices 201 ":        1,
		"GET /invoices/{id} 429 429": 1,
		"GET /invoices/{id} 200 ":    1,
		"GET /invoices 200 ":         1,
		"GET /invoices/{id} 404 404": 1,
	}, series)
}

func TestNoIDInSpansOrMetrics(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tel := newTelemetry(t, nil)
	c := srv.Client(invoicing.WithMiddleware(tel.middleware()), invoicing.WithRetryWait(time.Millisecond, 10*time.Millisecond))
	calls(t, tel, srv, c)
	var withID int
	for _, r := range srv.Requests() {
		if uuidRE.MatchString(r.Path) {
			withID++
		}
	}
	require.Equal(t, 3, withID, "the requests carried raw ids in their paths")

	for _, s := range tel.spans.GetSpans() {
		assert.NotRegexp(t, uuidRE, s.Name)
		assert.NotRegexp(t, uuidRE, s.Status.Description, s.Name)
		for _, a := range s.Attributes {
			assert.NotRegexp(t, uuidRE, a.Value.String(), "%s: attribute %s", s.Name, a.Key)
		}
		assert.Empty(t, s.Events, s.Name)
	}
	for _, p := range tel.durations(t) {
		for _, a := range p.Attributes.ToSlice() {
			assert.NotRegexp(t, uuidRE, a.Value.String(), "metric attribute %s", a.Key)
		}
	}
}

// unreachable returns a base URL on a loopback port where nothing listens.
func unreachable(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String() + invoicingtest.BasePath
	require.NoError(t, ln.Close())
	return base
}

func TestNetworkErrorsOnEachAttempt(t *testing.T) {
	tel := newTelemetry(t, nil)
	c := testClient(t, unreachable(t), invoicing.WithMiddleware(tel.middleware()),
		invoicing.WithRetryWait(time.Millisecond, 10*time.Millisecond), invoicing.WithMaxRetries(2))
	_, err := c.Invoices.Get(context.Background(), invoicingtest.SeedClientID)
	require.Error(t, err)

	spans := tel.attemptSpans()
	require.Len(t, spans, 3, "a GET is retried twice after a network error")
	for i, s := range spans {
		a := attrs(s.Attributes)
		assert.Equal(t, "GET /invoices/{id}", s.Name)
		assert.NotContains(t, a, "http.response.status_code", "no response, no status code")
		assert.Equal(t, "*net.OpError", a["error.type"])
		if i > 0 {
			assert.Equal(t, strconv.Itoa(i), a["http.request.resend_count"])
		}
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.Contains(t, s.Status.Description, "connection refused")
		assert.NotRegexp(t, uuidRE, s.Status.Description)
	}
	points := tel.durations(t)
	require.Len(t, points, 1, "the three attempts are one series")
	assert.Equal(t, uint64(3), points[0].Count)
	assert.Equal(t, "*net.OpError", attrs(points[0].Attributes.ToSlice())["error.type"])
}

func TestTimeoutsAndCancellation(t *testing.T) {
	arrived, hang := make(chan struct{}, 1), make(chan struct{})
	base := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	})
	t.Cleanup(func() { close(hang) })
	tel := newTelemetry(t, nil)
	client := func(timeout time.Duration) *invoicing.Client {
		return testClient(t, base, invoicing.WithMiddleware(tel.middleware()), invoicing.WithTimeout(timeout), invoicing.WithMaxRetries(0))
	}

	_, err := client(20*time.Millisecond).Invoices.Get(context.Background(), invoicingtest.SeedClientID)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the attempt's deadline")
	<-arrived
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err = client(time.Minute).Invoices.Get(ctx, invoicingtest.SeedClientID)
	require.ErrorIs(t, err, context.Canceled, "the caller's cancellation")

	spans := tel.attemptSpans()
	require.Len(t, spans, 2)
	assert.Equal(t, "timeout", attrs(spans[0].Attributes)["error.type"])
	assert.Equal(t, "canceled", attrs(spans[1].Attributes)["error.type"])
	for _, s := range spans {
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.NotContains(t, attrs(s.Attributes), "http.response.status_code")
	}
}

// A span lasts until the body has been read: the SDK reads it within the
// attempt. The server holds the rest of the body until the test has seen
// the headers arrive with no span ended.
func TestSpanEndsWithTheBody(t *testing.T) {
	rest := make(chan struct{})
	base := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items": [`))
		w.(http.Flusher).Flush()
		<-rest
		_, _ = w.Write([]byte(`], "total": 0, "page": 1, "page_size": 100, "has_more": false}`))
	})
	tel := newTelemetry(t, nil)
	headers := make(chan time.Time, 1)
	probe := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		headers <- time.Now()
		return resp, err
	}
	c := testClient(t, base, invoicing.WithMiddleware(tel.middleware(), probe))
	listed := make(chan error, 1)
	go func() {
		_, err := c.Items.ListPage(context.Background(), nil)
		listed <- err
	}()
	headersAt := <-headers
	assert.Empty(t, tel.attemptSpans(), "no span ends while the body is on its way")
	released := time.Now()
	close(rest)
	require.NoError(t, <-listed)

	spans := tel.attemptSpans()
	require.Len(t, spans, 1)
	assert.True(t, spans[0].EndTime.After(released), "the span covers the body")
	points := tel.durations(t)
	require.Len(t, points, 1)
	assert.GreaterOrEqual(t, points[0].Sum, released.Sub(headersAt).Seconds(), "so does the duration")
}

// A body cut short is an error of the attempt, though its status was 200.
func TestBodyCutShort(t *testing.T) {
	base := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte(`{"items": [`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection closes mid-body
	})
	tel := newTelemetry(t, nil)
	c := testClient(t, base, invoicing.WithMiddleware(tel.middleware()), invoicing.WithMaxRetries(0))
	_, err := c.Items.ListPage(context.Background(), nil)
	require.Error(t, err)

	spans := tel.attemptSpans()
	require.Len(t, spans, 1)
	a := attrs(spans[0].Attributes)
	assert.Equal(t, "200", a["http.response.status_code"])
	assert.Equal(t, "*errors.errorString", a["error.type"], "io.ErrUnexpectedEOF")
	assert.Equal(t, codes.Error, spans[0].Status.Code)
	assert.Equal(t, "unexpected EOF", spans[0].Status.Description)
}

// A sampled-out attempt records no span but its duration, and still sends
// its trace context (not sampled), so the service samples alike.
func TestSampledOut(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tel := newTelemetry(t, sdktrace.NeverSample())
	c := srv.Client(invoicing.WithMiddleware(tel.middleware(invoicingotel.WithPropagator(propagation.TraceContext{}))))
	_, err := c.Invoices.Get(context.Background(), "00000000-0000-4000-8000-000000000000")
	require.ErrorIs(t, err, invoicing.ErrNotFound)

	assert.Empty(t, tel.spans.GetSpans())
	points := tel.durations(t)
	require.Len(t, points, 1)
	assert.Equal(t, "404", attrs(points[0].Attributes.ToSlice())["http.response.status_code"])
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(reqs[0].Header)))
	require.True(t, sc.IsValid(), "traceparent %q", reqs[0].Header.Get("traceparent"))
	assert.False(t, sc.IsSampled())
}

// Without options the middleware uses the global providers, which it
// reads and never sets: a program that installed none records nothing and
// sends no trace header.
func TestGlobalProvidersByDefault(t *testing.T) {
	tp, mp, prop := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	srv := invoicingtest.NewTestServer(t)
	c := srv.Client(invoicing.WithMiddleware(invoicingotel.Middleware()))
	_, err := c.Invoices.Get(context.Background(), "00000000-0000-4000-8000-000000000000")
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	assert.Empty(t, srv.Requests()[0].Header.Get("traceparent"))
	assert.Equal(t, tp, otel.GetTracerProvider())
	assert.Equal(t, mp, otel.GetMeterProvider())
	assert.Equal(t, prop, otel.GetTextMapPropagator())
}

// Nil options mean the global providers too.
func TestNilOptions(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	c := srv.Client(invoicing.WithMiddleware(invoicingotel.Middleware(
		invoicingotel.WithTracerProvider(nil), invoicingotel.WithMeterProvider(nil), invoicingotel.WithPropagator(nil))))
	_, err := c.Invoices.Get(context.Background(), "00000000-0000-4000-8000-000000000000")
	require.ErrorIs(t, err, invoicing.ErrNotFound)
}

// A method that is not a standard one is recorded as _OTHER, its span
// named HTTP.
func TestOtherMethod(t *testing.T) {
	base := serveAPI(t, func(http.ResponseWriter, *http.Request) {})
	tel := newTelemetry(t, nil)
	c := testClient(t, base, invoicing.WithMiddleware(tel.middleware()))
	require.NoError(t, c.Do(context.Background(), "PURGE", "/cache", nil, nil))
	spans := tel.attemptSpans()
	require.Len(t, spans, 1)
	assert.Equal(t, "HTTP /cache", spans[0].Name)
	a := attrs(spans[0].Attributes)
	assert.Equal(t, "_OTHER", a["http.request.method"])
	assert.Equal(t, "PURGE", a["http.request.method_original"])
}

var errRefused = errors.New("refused by a test middleware")

// A middleware after this one that fails the attempt: its error is
// recorded by type.
func TestErrorOfAnInnerMiddleware(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tel := newTelemetry(t, nil)
	refuse := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return nil, errRefused
	}
	c := srv.Client(invoicing.WithMiddleware(tel.middleware(), refuse), invoicing.WithMaxRetries(0))
	_, err := c.Items.ListPage(context.Background(), nil)
	require.ErrorIs(t, err, errRefused)
	spans := tel.attemptSpans()
	require.Len(t, spans, 1)
	assert.Equal(t, "*errors.errorString", attrs(spans[0].Attributes)["error.type"])
	assert.Equal(t, errRefused.Error(), spans[0].Status.Description)
	assert.Empty(t, srv.Requests())
}
