package invoicingotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

var uuidRE = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// telemetry is an OpenTelemetry SDK that keeps what it records in memory:
// the spans, and the metrics read on demand.
type telemetry struct {
	tp     *sdktrace.TracerProvider
	spans  *tracetest.InMemoryExporter
	mp     *sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

// newTelemetry returns a telemetry whose tracer samples with sampler
// (every span when nil), shut down with the test.
func newTelemetry(t testing.TB, sampler sdktrace.Sampler) *telemetry {
	if sampler == nil {
		sampler = sdktrace.AlwaysSample()
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sampler))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &telemetry{tp: tp, spans: exp, mp: mp, reader: reader}
}

// middleware returns the Middleware recording into tel, with opts after
// the providers.
func (tel *telemetry) middleware(opts ...invoicingotel.Option) invoicing.Middleware {
	return invoicingotel.Middleware(append([]invoicingotel.Option{
		invoicingotel.WithTracerProvider(tel.tp), invoicingotel.WithMeterProvider(tel.mp)}, opts...)...)
}

// attemptSpans returns the client spans in the order they started.
func (tel *telemetry) attemptSpans() []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range tel.spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

// durations returns the data points of http.client.request.duration, one
// per series, failing the test if the metric has another shape.
func (tel *telemetry) durations(t testing.TB) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	var points []metricdata.HistogramDataPoint[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			require.Equal(t, invoicingotel.ScopeName, sm.Scope.Name)
			require.Equal(t, "http.client.request.duration", m.Name)
			require.Equal(t, "s", m.Unit)
			h, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "%s is a %T", m.Name, m.Data)
			points = append(points, h.DataPoints...)
		}
	}
	return points
}

// attrs returns a set of attributes as a map of their emitted values.
func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// serveAPI starts a server that answers every request with handler, closed
// when the test ends, and returns the base URL a Client of it takes.
func serveAPI(t testing.TB, handler http.HandlerFunc) string {
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	return ts.URL + invoicingtest.BasePath
}

// testClient returns a Client of base with the key "test-key" and opts.
func testClient(t testing.TB, base string, opts ...invoicing.Option) *invoicing.Client {
	t.Helper()
	c, err := invoicing.NewClient(base, "test-key", opts...)
	require.NoError(t, err)
	return c
}
