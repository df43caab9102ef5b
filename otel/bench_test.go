package invoicingotel_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

// BenchmarkInvoicesGet measures the middleware's cost on the SDK's GET
// benchmark (the root module's BenchmarkInvoicesGet: one invoice from a
// local server that answers with bytes encoded up front), in one loop that
// interleaves the variants (internal/benchpair), each its own Client:
//
//   - sdk: no middleware, the reference of the ratios;
//   - noop: the middleware with no-op providers, what a program that
//     installed none gets;
//   - sampledout: a TracerProvider that samples nothing and a recording
//     MeterProvider (every duration recorded; trace context still sent);
//   - recording: every span sampled, batched to an exporter that drops
//     them, every duration recorded, traceparent sent;
//   - baseline: the hand-written net/http + encoding/json client of the
//     root benchmark, for scale;
//   - bare-sampledout, bare-recording: the OpenTelemetry SDK's own part of
//     those two variants, with the same providers but no GET (see
//     bareOTel): their ratio to sdk is the share of the GET that no
//     middleware can save.
//
// The target is at most 3% (noop/sdk, sampledout/sdk, recording/sdk <=
// 1.03). Take the median of several runs:
//
//	go test -run '^$' -bench InvoicesGet -count 7 . | tee bench.txt
func BenchmarkInvoicesGet(b *testing.B) {
	id, invoice := benchInvoice(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(invoice)
	}))
	b.Cleanup(srv.Close)
	base := srv.URL + invoicingtest.BasePath
	ctx := context.Background()
	client := invoiceGetter(b, base, id)
	bl := benchpair.NewBaseline(b, base, "bench-key")
	baseline := func() error {
		var inv benchpair.Invoice
		if err := bl.Get(ctx, "/invoices/"+id, &inv); err != nil || inv.ID != id {
			return fmt.Errorf("baseline: %v", err)
		}
		return nil
	}
	benchpair.Run(b, 200, middlewareVariants(b, client, benchpair.Variant{Name: "baseline", Run: baseline})...)
}

// invoiceGetter returns the client argument of middlewareVariants: each
// call builds a Client of base with the middleware given, then inner (the
// innermost), and returns one GET of invoice id through it, which fails
// unless that invoice comes back.
func invoiceGetter(b *testing.B, base, id string, inner ...invoicing.Middleware) func(...invoicing.Middleware) func() error {
	ctx := context.Background()
	return func(mws ...invoicing.Middleware) func() error {
		c, err := invoicing.NewClient(base, "bench-key", invoicing.WithInsecureHTTP(),
			invoicing.WithMiddleware(append(mws[:len(mws):len(mws)], inner...)...))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.CloseIdleConnections)
		return func() error {
			inv, err := c.Invoices.Get(ctx, id)
			if err != nil || inv.ID != id {
				return fmt.Errorf("get: %v", err)
			}
			return nil
		}
	}
}

// middlewareVariants returns the variants of the middleware benchmarks:
// sdk, a Client from client without the middleware, then Clients with it
// (noop, sampledout, recording), extra, and the OpenTelemetry SDK's own
// part of sampledout and recording (bareOTel).
func middlewareVariants(b *testing.B, client func(...invoicing.Middleware) func() error, extra ...benchpair.Variant) []benchpair.Variant {
	ctx := context.Background()
	meter := func() *sdkmetric.MeterProvider {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(ctx) })
		return mp
	}
	tracer := func(s sdktrace.Sampler) *sdktrace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(ctx) })
		return tp
	}
	tc := invoicingotel.WithPropagator(propagation.TraceContext{})
	vs := []benchpair.Variant{
		{Name: "sdk", Run: client()},
		{Name: "noop", Run: client(invoicingotel.Middleware(
			invoicingotel.WithTracerProvider(tracenoop.NewTracerProvider()), invoicingotel.WithMeterProvider(metricnoop.NewMeterProvider())))},
		{Name: "sampledout", Run: client(invoicingotel.Middleware(
			invoicingotel.WithTracerProvider(tracer(sdktrace.NeverSample())), invoicingotel.WithMeterProvider(meter()), tc))},
		{Name: "recording", Run: client(invoicingotel.Middleware(
			invoicingotel.WithTracerProvider(tracer(sdktrace.AlwaysSample())), invoicingotel.WithMeterProvider(meter()), tc))},
	}
	return append(append(vs, extra...),
		benchpair.Variant{Name: "bare-sampledout", Run: bareOTel(b, tracer(sdktrace.NeverSample()), meter())},
		benchpair.Variant{Name: "bare-recording", Run: bareOTel(b, tracer(sdktrace.AlwaysSample()), meter())})
}

// benchInvoice returns an invoice's id and JSON exactly as invoicingtest
// serves it.
func benchInvoice(b *testing.B) (string, []byte) {
	srv := invoicingtest.NewTestServer(b)
	c := srv.Client()
	ctx := context.Background()
	created, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, Notes: "Thank you for your business",
		LineItems: []invoicing.LineItemParams{{Description: "Consulting", UnitPrice: decimal.RequireFromString("150.00")}},
	})
	if err != nil {
		b.Fatal(err)
	}
	var raw []byte
	if err := c.Do(ctx, http.MethodGet, "/invoices/"+created.ID, nil, &raw); err != nil {
		b.Fatal(err)
	}
	return created.ID, raw
}

// BenchmarkOverhead measures, without a network, what the middleware adds
// to one GET: each Client answers from memory (an inner middleware returns
// the invoice's bytes), so the difference of a variant's ns/op and
// allocs/op with sdk's is the middleware's own cost, in absolute terms
// (BenchmarkInvoicesGet gives it as a ratio of a real GET). The variants
// are BenchmarkInvoicesGet's, and bare-sampledout and bare-recording are
// the OpenTelemetry SDK's own part of those two, without the SDK client or
// the middleware: a bare tracer.Start and span.End with the same
// TracerProvider and attributes, and a histogram Record with a ready
// attribute set. Their ns/op (not their ratio to sdk) is what no
// middleware can save:
//
//	go test -run '^$' -bench Overhead -count 5 .
func BenchmarkOverhead(b *testing.B) {
	id, invoice := benchInvoice(b)
	answer := invoicing.Middleware(func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(invoice)), ContentLength: int64(len(invoice)), Request: req}, nil
	})
	client := invoiceGetter(b, "http://127.0.0.1:1"+invoicingtest.BasePath, id, answer)
	benchpair.Run(b, 200, middlewareVariants(b, client)...)
}

// bareOTel returns what the OpenTelemetry SDK does for one attempt,
// called directly: a client span started with the attempt's attributes and
// ended with its status code, and a duration recorded with a ready
// attribute set in the span's context (as the middleware does: a sampled
// span makes the measurement an exemplar candidate).
func bareOTel(b *testing.B, tp trace.TracerProvider, mp metric.MeterProvider) func() error {
	tracer := tp.Tracer(invoicingotel.ScopeName)
	h, err := httpconv.NewClientRequestDuration(mp.Meter(invoicingotel.ScopeName))
	if err != nil {
		b.Fatal(err)
	}
	hist := h.Inst()
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodGet, semconv.HTTPRoute("/invoices/{id}"), semconv.URLTemplate("/invoices/{id}"),
		semconv.ServerAddress("127.0.0.1"), semconv.ServerPort(8080)}
	start := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	set := attribute.NewSet(append(attrs, semconv.HTTPResponseStatusCode(200))...)
	record := []metric.RecordOption{metric.WithAttributeSet(set)}
	status := []attribute.KeyValue{semconv.HTTPResponseStatusCode(200)}
	ctx := context.Background()
	return func() error {
		ctx, span := tracer.Start(ctx, "GET /invoices/{id}", start...)
		span.SetAttributes(status...)
		span.End()
		hist.Record(ctx, 0.001, record...)
		return nil
	}
}
