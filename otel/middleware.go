package invoicingotel

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing-api/invoicing-go"
)

// ScopeName is the instrumentation scope of the spans and metrics the
// middleware records (its tracer's and meter's name).
const ScopeName = "github.com/invoicing-api/invoicing-go/otel"

// An Option configures Middleware.
type Option func(*config)

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider records the spans with tp instead of the global
// TracerProvider (otel.GetTracerProvider). A nil tp means the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider records the request duration histogram with mp instead
// of the global MeterProvider (otel.GetMeterProvider). A nil mp means the
// global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithPropagator sends each attempt's span context in the headers p writes
// (propagation.TraceContext{} writes traceparent and tracestate) instead of
// those of the global TextMapPropagator (otel.GetTextMapPropagator, which
// writes nothing until a program sets one). A nil p means the global one.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.prop = p }
}

// Middleware returns an invoicing.Middleware, for invoicing.WithMiddleware,
// that records a client span and a duration for every attempt of every
// call (see the package documentation for their names and attributes).
//
// A span starts when the attempt is handed to the transport, after any
// wait for a 429 pause or the rate limit, and ends when the response body
// has been read to its end or closed, or when the attempt fails; the
// duration recorded in http.client.request.duration, in seconds, is the
// same interval. A span's status is Error for a response of 400 or more,
// with error.type the status code ("429"), and for an attempt that got no
// complete response, with error.type "timeout" (the attempt's deadline or
// the caller's), "canceled" (the caller's context) or the Go type of the
// error ("*net.OpError"), and the error's message as the status
// description, with the request's path and query taken out. Each attempt
// sends its span's context in the propagator's headers, sampled or not.
//
// Use one Middleware for all the Clients of a program: each holds the
// attributes of the routes and series it has seen. A histogram the
// MeterProvider refuses to create is reported to otel.Handle and replaced
// by a no-op one: the Client works regardless.
func Middleware(opts ...Option) invoicing.Middleware {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if cfg.prop == nil {
		cfg.prop = otel.GetTextMapPropagator()
	}
	duration, err := httpconv.NewClientRequestDuration(cfg.mp.Meter(ScopeName,
		metric.WithInstrumentationVersion(invoicing.Version), metric.WithSchemaURL(semconv.SchemaURL)))
	if err != nil {
		otel.Handle(err) // duration is a no-op histogram then
	}
	m := &middleware{
		tracer: cfg.tp.Tracer(ScopeName,
			trace.WithInstrumentationVersion(invoicing.Version), trace.WithSchemaURL(semconv.SchemaURL)),
		duration: duration.Inst(),
		prop:     cfg.prop,
	}
	return m.attempt
}

type middleware struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	prop     propagation.TextMapPropagator
	routes   routes
	starts   starts
	series   series
}

// attempt is the Middleware: it starts the attempt's span, sends the
// request with the span's context in its headers, and leaves the span to
// end with the response body, or ends it at once when the attempt fails.
func (m *middleware) attempt(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	start := time.Now()
	r := m.routes.lookup(req.Method, invoicing.Route(req))
	ctx, span := m.tracer.Start(req.Context(), r.spanName,
		m.starts.options(startKey{route: r, scheme: req.URL.Scheme, host: req.URL.Host, resends: invoicing.Attempt(req) - 1})...)
	out := req.WithContext(ctx)
	// Into the SDK's headers, which the middleware may change: a retry
	// sends them again, with its own span's context written over this one.
	m.prop.Inject(ctx, headerCarrier(out.Header))
	if !span.IsRecording() && !m.duration.Enabled(ctx) {
		return next(out) // nothing to record: no-op providers
	}
	a := &attempt{m: m, ctx: ctx, span: span, start: start, req: req, route: r}
	resp, err := next(out)
	if err != nil {
		a.finish(err)
		return nil, err
	}
	a.body, a.status = resp.Body, resp.StatusCode
	resp.Body = a
	return resp, nil
}

// An attempt is one attempt whose span has not ended, and the body of its
// response, which ends the span when it has been read to its end, when
// reading it fails, or when it is closed, whichever comes first.
type attempt struct {
	m     *middleware
	ctx   context.Context
	span  trace.Span
	start time.Time
	req   *http.Request
	route *route

	body   io.ReadCloser
	status int
	ended  atomic.Bool
}

func (a *attempt) Read(p []byte) (int, error) {
	n, err := a.body.Read(p)
	switch err {
	case nil:
	case io.EOF:
		a.end(nil)
	default:
		a.end(err)
	}
	return n, err
}

func (a *attempt) Close() error {
	err := a.body.Close()
	a.end(nil)
	return err
}

// end finishes the attempt the first time it is called.
func (a *attempt) end(err error) {
	if a.ended.CompareAndSwap(false, true) {
		a.finish(err)
	}
}

// finish ends the attempt's span with its outcome and records its
// duration; err is why the attempt has no complete response (nil if it
// has).
func (a *attempt) finish(err error) {
	d := time.Since(a.start)
	var errType string
	if err != nil {
		errType = errorType(a.req.Context(), err)
	}
	recording, enabled := a.span.IsRecording(), a.m.duration.Enabled(a.ctx)
	var o *outcome
	if recording || enabled {
		o = a.m.series.lookup(seriesKey{route: a.route, scheme: a.req.URL.Scheme, host: a.req.URL.Host, status: a.status, errType: errType})
	}
	if recording {
		if o.failed {
			msg := "" // a status code says it all
			if err != nil {
				msg = redact(err.Error(), a.req)
			}
			a.span.SetStatus(codes.Error, msg)
		}
		a.span.SetAttributes(o.span...)
	}
	a.span.End()
	if enabled {
		a.m.duration.Record(a.ctx, d.Seconds(), o.record...)
	}
}
