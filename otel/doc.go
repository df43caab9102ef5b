// Package invoicingotel traces and measures the Invoicing SDK's HTTP calls
// with OpenTelemetry, by route template, never by raw id:
//
//	c, err := invoicing.NewClient(baseURL, apiKey,
//		invoicing.WithMiddleware(invoicingotel.Middleware()))
//
// Middleware records one client span for every attempt the Client makes
// (a call retried after a 429 or a 503 is two spans, the second with
// http.request.resend_count 1) and the http.client.request.duration
// histogram, following the OpenTelemetry semantic conventions for HTTP
// clients (https://opentelemetry.io/docs/specs/semconv/http/). A span is
// named by the method and the route template, "GET /invoices/{id}", and
// carries http.request.method, http.route and url.template (both the route
// template, "/invoices/{id}"), server.address, server.port,
// http.response.status_code, error.type and http.request.resend_count. The
// histogram has the same attributes except the resend count. The route
// template is invoicing.Route's, relative to the base URL, with each id
// replaced by {id}: no attribute, span name or metric carries an id, a
// path as sent, a query or a header value. url.full, which the
// conventions ask of a client span, is left out for that reason.
//
// Why one span per attempt and not one per call: the conventions ask for a
// span per HTTP request sent, resends included, and each attempt is what
// the service saw (its status, its time, its own traceparent header, which
// the service's traces can join). The attempts of one call share the
// caller's span as their parent; start a span around a call to group them.
//
// By default the middleware uses the global TracerProvider, MeterProvider
// and TextMapPropagator (otel.GetTracerProvider and the others): it reads
// them, and never sets them. A program that has not installed providers
// gets no-op ones, and the middleware then costs next to nothing. The
// options WithTracerProvider, WithMeterProvider and WithPropagator choose
// others.
//
// This package is a module of its own
// (github.com/invoicing-api/invoicing-go/otel), so that the SDK's module
// does not depend on OpenTelemetry.
package invoicingotel
