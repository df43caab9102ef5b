// Command otel records an OpenTelemetry span for every attempt the SDK
// makes, through an invoicing.Middleware, and prints the spans. It needs no
// account and no network:
//
//	go run ./examples/otel    (from the repository root; or go run . in examples/otel)
//
// It starts the in-memory Invoicing Service (package invoicingtest), makes a
// few calls under one parent span (an invoice create, a get that the server
// answers first with a 429 so that the SDK retries it, a list, and a get of
// an unknown invoice), and prints the trace: one client span per attempt,
// named by the route template (invoicing.Route, e.g. "GET /invoices/{id}",
// never the raw id), with the attributes http.request.method,
// http.response.status_code, url.template and invoicing.attempt (1 for the
// first try of a call, 2 for its first retry, ...; retries also carry
// http.request.resend_count). Each attempt sends its span's W3C traceparent
// header, so the service's own traces can join the caller's.
//
// The spans go to the OpenTelemetry SDK's in-memory exporter; in a real
// program, give newTracing a TracerProvider that exports to your collector
// (an OTLP exporter, say) instead.
//
// This example is a module of its own, so that the SDK's go.mod does not
// depend on OpenTelemetry.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// tracerName names the instrumentation in the spans it records.
const tracerName = "github.com/invoicing-api/invoicing-go/examples/otel"

// attemptAttr is the attribute holding the attempt number of a call.
const attemptAttr = attribute.Key("invoicing.attempt")

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

// run makes the demo's calls against an in-memory server, records their
// attempts as spans and prints them to w.
func run(ctx context.Context, w io.Writer) error {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	if err := demo(ctx, srv, tp); err != nil {
		return err
	}
	printSpans(w, exp.GetSpans())
	fmt.Fprintf(w, "\nThe server received %d requests; each carried the traceparent of its attempt's span:\n", len(srv.Requests()))
	for _, r := range srv.Requests() {
		fmt.Fprintf(w, "  %-4s %-3d traceparent %s\n", r.Method, r.Status, r.Header.Get("traceparent"))
	}
	return nil
}

// demo makes a few calls through a Client whose middleware records spans
// with tp, all under one parent span. The server answers the first attempt
// of the get with a 429, so that call has two attempts and two spans.
func demo(ctx context.Context, srv *invoicingtest.Server, tp trace.TracerProvider) error {
	// A short retry wait keeps the demo quick: the 429 asks for no
	// particular wait, so the SDK backs off from the minimum.
	c := srv.Client(invoicing.WithMiddleware(newTracing(tp)), invoicing.WithRetryWait(20*time.Millisecond, time.Second))
	ctx, parent := tp.Tracer(tracerName).Start(ctx, "otel example")
	defer parent.End()

	created, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Consulting", UnitPrice: decimal.RequireFromString("150.00")}},
	})
	if err != nil {
		return fmt.Errorf("creating an invoice: %w", err)
	}

	srv.InjectFault(invoicingtest.Fault{Status: http.StatusTooManyRequests, Method: http.MethodGet, Path: "/invoices/*"})
	var resp invoicing.Response
	if _, err := c.Invoices.Get(ctx, created.ID, invoicing.WithResponseInto(&resp)); err != nil {
		return fmt.Errorf("getting the invoice: %w", err)
	}
	if resp.Attempts != 2 {
		return fmt.Errorf("getting the invoice took %d attempts, want 2 (a 429, then the invoice)", resp.Attempts)
	}

	for _, err := range c.Invoices.List(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing invoices: %w", err)
		}
	}

	if _, err := c.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, invoicing.ErrNotFound) {
		return fmt.Errorf("getting an unknown invoice: want ErrNotFound, got %v", err)
	}
	return nil
}

// newTracing returns a Middleware that records one client span per attempt
// with tp: named by the route template, with the attempt's method, status
// and route, its number within the call, and its error. It sends the span's
// W3C trace context (traceparent) with the attempt.
func newTracing(tp trace.TracerProvider) invoicing.Middleware {
	tracer := tp.Tracer(tracerName)
	var prop propagation.TraceContext
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		route := invoicing.Route(req)     // "GET /invoices/{id}": no raw id
		attempt := invoicing.Attempt(req) // 1, then 2 for the first retry, ...
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", req.Method),
			attribute.String("url.template", strings.TrimPrefix(route, req.Method+" ")),
			attemptAttr.Int(attempt),
		}
		if attempt > 1 {
			attrs = append(attrs, attribute.Int("http.request.resend_count", attempt-1))
		}
		ctx, span := tracer.Start(req.Context(), route, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		defer span.End()

		out := req.Clone(ctx) // this attempt's own headers, to add the trace context to
		prop.Inject(ctx, propagation.HeaderCarrier(out.Header))
		resp, err := next(out)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			return nil, err
		}
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 400 {
			span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
			span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
		}
		return resp, nil
	}
}

// printSpans writes the spans in the order they started, each attempt under
// the parent span, with its attributes and events.
func printSpans(w io.Writer, spans tracetest.SpanStubs) {
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	if len(spans) > 0 {
		fmt.Fprintf(w, "trace %s\n", spans[0].SpanContext.TraceID())
	}
	for _, s := range spans {
		indent := "  "
		if s.Parent.IsValid() {
			indent = "    "
		}
		fmt.Fprintf(w, "%s%s  [%s, span %s, %v]", indent, s.Name, s.SpanKind, s.SpanContext.SpanID(), s.EndTime.Sub(s.StartTime).Round(10*time.Microsecond))
		if s.Status.Code != codes.Unset {
			fmt.Fprintf(w, "  status %s %q", s.Status.Code, s.Status.Description)
		}
		fmt.Fprintln(w)
		if len(s.Attributes) > 0 {
			parts := make([]string, len(s.Attributes))
			for i, a := range s.Attributes {
				parts[i] = string(a.Key) + "=" + a.Value.Emit()
			}
			fmt.Fprintf(w, "%s  %s\n", indent, strings.Join(parts, " "))
		}
		for _, e := range s.Events {
			fmt.Fprintf(w, "%s  event %s\n", indent, e.Name)
		}
	}
}
