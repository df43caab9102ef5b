package main

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

var uuidRE = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// recorder returns a TracerProvider that keeps the spans in memory.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// attemptSpans returns the client spans in the order they started.
func attemptSpans(exp *tracetest.InMemoryExporter) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// summary is what the test expects of one attempt span.
type summary struct {
	Name    string
	Status  int64
	Attempt int64
}

func TestDemoRecordsOneSpanPerAttempt(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tp, exp := recorder(t)
	require.NoError(t, demo(context.Background(), srv, tp))

	spans := attemptSpans(exp)
	var got []summary
	for _, s := range spans {
		status, _ := attr(s, "http.response.status_code")
		attempt, _ := attr(s, "invoicing.attempt")
		got = append(got, summary{s.Name, status.AsInt64(), attempt.AsInt64()})
	}
	assert.Equal(t, []summary{
		{"POST /invoices", 201, 1},
		{"GET /invoices/{id}", 429, 1}, // the retried call: two spans
		{"GET /invoices/{id}", 200, 2},
		{"GET /invoices", 200, 1},
		{"GET /invoices/{id}", 404, 1},
	}, got)

	for _, s := range spans {
		method, _ := attr(s, "http.request.method")
		tmpl, _ := attr(s, "url.template")
		assert.Equal(t, s.Name, method.AsString()+" "+tmpl.AsString(), "the span name is the method and the route template")
		resend, ok := attr(s, "http.request.resend_count")
		attempt, _ := attr(s, "invoicing.attempt")
		assert.Equal(t, attempt.AsInt64() > 1, ok, "%s: resend_count is set on retries only", s.Name)
		if ok {
			assert.Equal(t, attempt.AsInt64()-1, resend.AsInt64())
		}
		status, _ := attr(s, "http.response.status_code")
		if status.AsInt64() >= 400 {
			assert.Equal(t, codes.Error, s.Status.Code, "%s %d", s.Name, status.AsInt64())
		} else {
			assert.Equal(t, codes.Unset, s.Status.Code, "%s %d", s.Name, status.AsInt64())
		}
	}

	// Every attempt is a child of the caller's span, in its trace.
	var parent tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "otel example" {
			parent = s
		}
	}
	require.True(t, parent.SpanContext.IsValid())
	for _, s := range spans {
		assert.Equal(t, parent.SpanContext.SpanID(), s.Parent.SpanID(), s.Name)
		assert.Equal(t, parent.SpanContext.TraceID(), s.SpanContext.TraceID(), s.Name)
	}

	// Each request reached the server with the traceparent of its own
	// attempt's span.
	reqs := srv.Requests()
	require.Len(t, reqs, len(spans))
	var prop propagation.TraceContext
	for i, r := range reqs {
		sc := trace.SpanContextFromContext(prop.Extract(context.Background(), propagation.HeaderCarrier(r.Header)))
		require.True(t, sc.IsValid(), "request %d (%s %s) has no valid traceparent: %q", i, r.Method, r.Path, r.Header.Get("traceparent"))
		assert.Equal(t, spans[i].SpanContext.TraceID(), sc.TraceID(), "request %d", i)
		assert.Equal(t, spans[i].SpanContext.SpanID(), sc.SpanID(), "request %d is the attempt of span %d", i, i)
	}
}

func TestNoRawIDInSpans(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	tp, exp := recorder(t)
	require.NoError(t, demo(context.Background(), srv, tp))

	// The demo fetched an invoice and an unknown invoice by id: their ids
	// are in the paths the server saw, and in no span.
	var withID int
	for _, r := range srv.Requests() {
		if uuidRE.MatchString(r.Path) {
			withID++
		}
	}
	require.Equal(t, 3, withID, "the requests carried raw ids in their paths")

	spans := exp.GetSpans()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		assert.NotRegexp(t, uuidRE, s.Name)
		assert.NotRegexp(t, uuidRE, s.Status.Description, s.Name)
		for _, a := range s.Attributes {
			assert.NotRegexp(t, uuidRE, a.Value.Emit(), "%s: attribute %s", s.Name, a.Key)
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				assert.NotRegexp(t, uuidRE, a.Value.Emit(), "%s: event %s attribute %s", s.Name, e.Name, a.Key)
			}
		}
	}
}

func TestNetworkErrorsAreRecordedOnEachAttempt(t *testing.T) {
	// A loopback port with nothing listening: every attempt is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String() + invoicingtest.BasePath
	require.NoError(t, ln.Close())

	tp, exp := recorder(t)
	c, err := invoicing.NewClient(base, "test-key",
		invoicing.WithMiddleware(newTracing(tp)),
		invoicing.WithRetryWait(time.Millisecond, 10*time.Millisecond),
		invoicing.WithMaxRetries(2))
	require.NoError(t, err)
	_, err = c.Invoices.Get(context.Background(), invoicingtest.SeedClientID)
	require.Error(t, err)

	spans := attemptSpans(exp)
	require.Len(t, spans, 3, "a GET is retried twice after a network error")
	for i, s := range spans {
		assert.Equal(t, "GET /invoices/{id}", s.Name)
		attempt, _ := attr(s, "invoicing.attempt")
		assert.Equal(t, int64(i+1), attempt.AsInt64())
		_, hasStatus := attr(s, "http.response.status_code")
		assert.False(t, hasStatus, "no response, no status code")
		assert.Equal(t, codes.Error, s.Status.Code)
		require.Len(t, s.Events, 1)
		assert.Equal(t, "exception", s.Events[0].Name)
		for _, a := range s.Events[0].Attributes {
			assert.NotRegexp(t, uuidRE, a.Value.Emit(), "the error recorded names no raw id")
		}
	}
}

func TestRunPrintsTheTrace(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	report := out.String()
	t.Log("\n" + report)
	assert.Regexp(t, `(?m)^trace [0-9a-f]{32}\n  otel example  \[internal, span [0-9a-f]{16}, `, report)
	assert.Regexp(t, `(?m)^    GET /invoices/\{id\}  \[client, span [0-9a-f]{16}, [^\]]+\]  status Error "Too Many Requests"\n      http.request.method=GET url.template=/invoices/\{id\} invoicing.attempt=1 http.response.status_code=429 error.type=429$`, report)
	assert.Regexp(t, `(?m)^      http.request.method=GET url.template=/invoices/\{id\} invoicing.attempt=2 http.request.resend_count=1 http.response.status_code=200$`, report)
	assert.Contains(t, report, "The server received 5 requests")
	assert.Regexp(t, `(?m)^  GET  429 traceparent 00-[0-9a-f]{32}-[0-9a-f]{16}-01$`, report)
	// Each traceparent names the span of an attempt printed above.
	parents := regexp.MustCompile(`traceparent 00-[0-9a-f]{32}-([0-9a-f]{16})-01`).FindAllStringSubmatch(report, -1)
	require.Len(t, parents, 5)
	for _, m := range parents {
		assert.Contains(t, report, "[client, span "+m[1]+", ")
	}
	assert.NotRegexp(t, uuidRE, report)
}
