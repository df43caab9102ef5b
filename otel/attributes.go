package invoicingotel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// A startKey names the options an attempt's span starts with.
type startKey struct {
	route        *route
	scheme, host string // the URL's: host and port
	resends      int    // the attempt's number minus 1
}

// starts keeps the span start options of each startKey seen, so that
// starting a span builds no attributes.
type starts struct {
	mu sync.RWMutex
	m  map[startKey][]trace.SpanStartOption
}

// options returns the options an attempt's span starts with: its kind,
// client, and the attributes a sampler sees (the method, the route
// template, the server and, on a retry, the resend count).
func (s *starts) options(k startKey) []trace.SpanStartOption {
	s.mu.RLock()
	opts, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return opts
	}
	a := requestAttributes(k.route, k.scheme, k.host)
	if k.route.original.Valid() {
		a = append(a, k.route.original)
	}
	if k.resends > 0 {
		a = append(a, semconv.HTTPRequestResendCount(k.resends))
	}
	opts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(a...)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[startKey][]trace.SpanStartOption)
	}
	if len(s.m) < maxSeries {
		s.m[k] = opts
	}
	return opts
}

// requestAttributes are the attributes of both an attempt's span and its
// duration that its request determines: the method, the route template
// (as http.route and url.template) and the server's address and port.
func requestAttributes(r *route, scheme, hostPort string) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 8)
	a = append(a, r.method)
	if r.template != "" {
		a = append(a, semconv.HTTPRoute(r.template), semconv.URLTemplate(r.template))
	}
	host, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		host, p = hostPort, ""
	}
	return append(a, semconv.ServerAddress(strings.Trim(host, "[]")), semconv.ServerPort(port(scheme, p)))
}

// port returns the URL's port, or the scheme's default.
func port(scheme, p string) int {
	if n, err := strconv.Atoi(p); err == nil {
		return n
	}
	if scheme == "http" {
		return 80
	}
	return 443
}

// maxSeries bounds how many series' attributes a Middleware keeps ready
// (the OpenTelemetry SDK's default cardinality limit), and how many sets
// of span start options; past it, they are built anew each time.
const maxSeries = 2000

// A seriesKey names a series of the duration histogram: an attempt's
// request and outcome.
type seriesKey struct {
	route        *route
	scheme, host string // the URL's: host and port
	status       int    // 0 for no response
	errType      string // why the attempt has no response, or ""
}

// An outcome is what ends the span of an attempt of a series and records
// its duration.
type outcome struct {
	failed bool                 // the span's status is Error
	span   []attribute.KeyValue // http.response.status_code, error.type
	record []metric.RecordOption
}

// series keeps the outcome of each series seen, so that ending an attempt
// builds no attributes.
type series struct {
	mu sync.RWMutex
	m  map[seriesKey]*outcome
}

// lookup returns the outcome of k's series. A status of 400 or more
// without errType has the status code as error.type.
func (s *series) lookup(k seriesKey) *outcome {
	s.mu.RLock()
	o, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return o
	}
	errType := k.errType
	if errType == "" && k.status >= 400 {
		errType = strconv.Itoa(k.status)
	}
	o = &outcome{failed: errType != ""}
	if k.status > 0 {
		o.span = append(o.span, semconv.HTTPResponseStatusCode(k.status))
	}
	if errType != "" {
		o.span = append(o.span, semconv.ErrorTypeKey.String(errType))
	}
	a := append(requestAttributes(k.route, k.scheme, k.host), o.span...)
	o.record = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(a...))}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[seriesKey]*outcome)
	}
	if len(s.m) < maxSeries {
		s.m[k] = o
	}
	return o
}

// errorType names, in few values, why an attempt whose context is ctx has
// no complete response: "timeout" when a deadline passed (the attempt's or
// the caller's), "canceled" when the caller gave up, and otherwise the Go
// type of the error, as the conventions suggest ("*net.OpError").
func errorType(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err), isTimeout(context.Cause(ctx)):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return semconv.ErrorType(err).Value.AsString()
}

// isTimeout reports whether err is a net.Error that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redact returns an error message with req's URL, path and query taken
// out, so that no id reaches a span through a transport that names the URL
// in its errors.
func redact(msg string, req *http.Request) string {
	for _, s := range []string{req.URL.String(), req.URL.RawQuery, req.URL.EscapedPath(), req.URL.Path} {
		if s != "" && s != "/" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return msg
}
