package invoicingotel_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

// A Client whose attempts are traced and measured, against the in-memory
// Invoicing Service: an invoice create, a get the service answers 429
// first (two attempts, two spans), and a get of an unknown invoice. The
// spans go to an in-memory exporter and the metrics to a manual reader; a
// real program gives providers that export to its collector (OTLP, say),
// or installs them globally and calls Middleware with no option.
func ExampleMiddleware() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	c := srv.Client(invoicing.WithMiddleware(invoicingotel.Middleware(
		invoicingotel.WithTracerProvider(tp),
		invoicingotel.WithMeterProvider(mp),
		invoicingotel.WithPropagator(propagation.TraceContext{}), // a traceparent header on each attempt
	)), invoicing.WithRetryWait(10*time.Millisecond, time.Second))

	ctx, call := tp.Tracer("example").Start(context.Background(), "bill a customer")
	created, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Consulting", UnitPrice: decimal.RequireFromString("150.00")}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.InjectFault(invoicingtest.Fault{Status: http.StatusTooManyRequests, Method: http.MethodGet, Path: "/invoices/*"})
	if _, err := c.Invoices.Get(ctx, created.ID); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, invoicing.ErrNotFound) {
		fmt.Println("want ErrNotFound, got", err)
		return
	}
	call.End()

	fmt.Println("spans:")
	recorded := spans.GetSpans()
	slices.SortFunc(recorded, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for _, s := range recorded {
		fmt.Println("  " + strings.TrimRight(fmt.Sprintf("%-20s %-8s %s", s.Name, s.Status.Code, show(s.Attributes)), " "))
	}

	fmt.Println("http.client.request.duration series:")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	var series []string
	for _, p := range rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints {
		series = append(series, fmt.Sprintf("%d× %s", p.Count, show(p.Attributes.ToSlice())))
	}
	slices.Sort(series)
	for _, s := range series {
		fmt.Println("  " + s)
	}
	// Output:
	// spans:
	//   bill a customer      Unset
	//   POST /invoices       Unset    http.request.method=POST http.route=/invoices http.response.status_code=201
	//   GET /invoices/{id}   Error    http.request.method=GET http.route=/invoices/{id} http.response.status_code=429 error.type=429
	//   GET /invoices/{id}   Unset    http.request.method=GET http.route=/invoices/{id} http.request.resend_count=1 http.response.status_code=200
	//   GET /invoices/{id}   Error    http.request.method=GET http.route=/invoices/{id} http.response.status_code=404 error.type=404
	// http.client.request.duration series:
	//   1× error.type=404 http.request.method=GET http.response.status_code=404 http.route=/invoices/{id}
	//   1× error.type=429 http.request.method=GET http.response.status_code=429 http.route=/invoices/{id}
	//   1× http.request.method=GET http.response.status_code=200 http.route=/invoices/{id}
	//   1× http.request.method=POST http.response.status_code=201 http.route=/invoices
}

// show writes attributes as key=value, leaving out the server's address
// and port (a random loopback port here) and url.template (the same as
// http.route).
func show(kvs []attribute.KeyValue) string {
	var parts []string
	for _, kv := range kvs {
		switch kv.Key {
		case "server.address", "server.port", "url.template":
		default:
			parts = append(parts, string(kv.Key)+"="+kv.Value.String())
		}
	}
	return strings.Join(parts, " ")
}
