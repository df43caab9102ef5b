package invoicingotel

import (
	"net/http"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// MaxRoutes is how many distinct route templates one Middleware records.
// The SDK's own methods use about thirty; Client.Do can reach paths whose
// segments are ids the SDK does not recognise as such (only UUIDs become
// {id}), and this bound keeps those from growing the number of span names
// and metric series without end: an attempt whose route would be the
// (MaxRoutes+1)th is recorded without http.route and url.template, under
// the span name of its method alone ("GET").
const MaxRoutes = 64

// A route is what an attempt's span and duration take from its method and
// route template.
type route struct {
	spanName string             // "GET /invoices/{id}", or "GET" without a template
	method   attribute.KeyValue // http.request.method: GET, or _OTHER
	original attribute.KeyValue // http.request.method_original for _OTHER, else empty
	template string             // "/invoices/{id}", or "" when not recorded
}

// newRoute returns the route of a request with this method and template
// ("" for none).
func newRoute(method, template string) *route {
	r := &route{method: semconv.HTTPRequestMethodOther, original: semconv.HTTPRequestMethodOriginal(method), template: template}
	name := "HTTP"
	if kv, ok := knownMethods[method]; ok {
		r.method, r.original, name = kv, attribute.KeyValue{}, method
	}
	r.spanName = name
	if template != "" {
		r.spanName = name + " " + template
	}
	return r
}

// knownMethods are the methods the conventions record as they are; any
// other is recorded as _OTHER, with http.request.method_original on the
// span.
var knownMethods = map[string]attribute.KeyValue{
	http.MethodConnect: semconv.HTTPRequestMethodConnect,
	http.MethodDelete:  semconv.HTTPRequestMethodDelete,
	http.MethodGet:     semconv.HTTPRequestMethodGet,
	http.MethodHead:    semconv.HTTPRequestMethodHead,
	http.MethodOptions: semconv.HTTPRequestMethodOptions,
	http.MethodPatch:   semconv.HTTPRequestMethodPatch,
	http.MethodPost:    semconv.HTTPRequestMethodPost,
	http.MethodPut:     semconv.HTTPRequestMethodPut,
	http.MethodTrace:   semconv.HTTPRequestMethodTrace,
}

// routes are the routes a Middleware has recorded, at most MaxRoutes of
// them, by invoicing.Route's value ("GET /invoices/{id}").
type routes struct {
	mu sync.RWMutex
	m  map[string]*route
}

// lookup returns the route of a request with this method whose
// invoicing.Route is r: a route without template when r is empty or
// MaxRoutes others have been recorded.
func (rs *routes) lookup(method, r string) *route {
	rs.mu.RLock()
	found, ok := rs.m[r]
	rs.mu.RUnlock()
	if ok {
		return found
	}
	_, template, _ := strings.Cut(r, " ")
	if template == "" {
		return newRoute(method, "")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if found, ok := rs.m[r]; ok {
		return found
	}
	if len(rs.m) >= MaxRoutes {
		return newRoute(method, "")
	}
	if rs.m == nil {
		rs.m = make(map[string]*route)
	}
	found = newRoute(method, template)
	rs.m[r] = found
	return found
}
