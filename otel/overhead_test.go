package invoicingotel_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

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
	ctx := context.Background()
	answer := invoicing.Middleware(func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(invoice)), ContentLength: int64(len(invoice)), Request: req}, nil
	})
	client := func(mws ...invoicing.Middleware) func() error {
		c, err := invoicing.NewClient("http://127.0.0.1:1"+invoicingtest.BasePath, "bench-key",
			invoicing.WithInsecureHTTP(), invoicing.WithMiddleware(append(mws, answer)...))
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			_, err := c.Invoices.Get(ctx, id)
			return err
		}
	}
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
