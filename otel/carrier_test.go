package invoicingotel

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// headerCarrier writes what propagation.HeaderCarrier writes, for the W3C
// headers it names itself and for any other.
func TestHeaderCarrierWritesWhatHeaderCarrierWrites(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=value")
	require.NoError(t, err)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, TraceState: ts})
	member, err := baggage.NewMember("tenant", "acme")
	require.NoError(t, err)
	bag, err := baggage.New(member)
	require.NoError(t, err)
	ctx := baggage.ContextWithBaggage(trace.ContextWithSpanContext(context.Background(), sc), bag)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

	want, got := http.Header{}, http.Header{}
	prop.Inject(ctx, propagation.HeaderCarrier(want))
	prop.Inject(ctx, headerCarrier(got))
	require.Len(t, want, 3, "traceparent, tracestate, baggage: %v", want)
	require.Equal(t, want, got)

	headerCarrier(got).Set("x-other-Header", "v")
	require.Equal(t, []string{"v"}, got["X-Other-Header"])
	require.Equal(t, "v", headerCarrier(got).Get("x-other-header"))
	require.ElementsMatch(t, []string{"Traceparent", "Tracestate", "Baggage", "X-Other-Header"}, headerCarrier(got).Keys())

	// A retry's propagation replaces the previous attempt's headers.
	prop.Inject(trace.ContextWithSpanContext(context.Background(), sc.WithSpanID(trace.SpanID{3})), headerCarrier(got))
	require.Len(t, got["Traceparent"], 1)
	require.Contains(t, got.Get("traceparent"), "0300000000000000")
}
