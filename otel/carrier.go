package invoicingotel

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// A headerCarrier is a propagation.HeaderCarrier that writes the W3C
// headers under their canonical names without computing them each time.
type headerCarrier http.Header

func (h headerCarrier) Get(key string) string { return http.Header(h).Get(key) }

func (h headerCarrier) Set(key, value string) { h[canonicalKey(key)] = []string{value} }

func (h headerCarrier) Keys() []string { return propagation.HeaderCarrier(h).Keys() }

// canonicalKey returns http.CanonicalHeaderKey(key), without building a
// string for the headers of the W3C propagators.
func canonicalKey(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return http.CanonicalHeaderKey(key)
}
