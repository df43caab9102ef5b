package invoicing

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// A Middleware sees every attempt the Client makes (a retried call passes
// through it once per try, and a redirect within an attempt too): it may
// read or add headers, time the attempt, record a span or a metric, and
// must call next to send the request (or answer without sending). Route and
// Attempt name the request's route template and attempt number, for span
// and metric names without raw ids.
//
// The request carries the API key in its Authorization header: never log
// it. The response next returns has its body unread, as any
// http.RoundTripper's: the SDK reads it after the middleware returns,
// within the attempt's deadline (wrap resp.Body to time the read too).
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// attemptContext is an attempt's context: its deadline, and the route and
// attempt number that Route and Attempt read.
type attemptContext struct {
	context.Context
	r *request
	n int
}

type attemptKey struct{}

func (a *attemptContext) Value(key any) any {
	if key == (attemptKey{}) {
		return a
	}
	return a.Context.Value(key)
}

// Route returns the route template of a request the SDK is sending, such as
// "GET /invoices/{id}": the method, then the path relative to the base URL
// with every UUID segment replaced by {id}. It returns "" for a request the
// SDK did not make.
func Route(req *http.Request) string {
	if a, ok := req.Context().Value(attemptKey{}).(*attemptContext); ok {
		return a.r.route()
	}
	return ""
}

// Attempt returns which attempt of its call a request the SDK is sending
// is: 1 for the first try, 2 for the first retry, and so on (a redirect
// keeps its attempt's number). It returns 0 for a request the SDK did not
// make.
func Attempt(req *http.Request) int {
	if a, ok := req.Context().Value(attemptKey{}).(*attemptContext); ok {
		return a.n
	}
	return 0
}

// route is the request's route template, e.g. "GET /invoices/{id}", built
// in one allocation.
func (r *request) route() string {
	var b strings.Builder
	b.Grow(len(r.method) + 1 + len(r.path))
	b.WriteString(r.method)
	b.WriteByte(' ')
	writeTemplate(&b, r.path)
	return b.String()
}

// routeTemplate replaces each UUID segment of path with {id}.
func routeTemplate(path string) string {
	if !strings.Contains(path, "-") {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	writeTemplate(&b, path)
	return b.String()
}

// writeTemplate writes path to b with each UUID segment replaced by {id}.
func writeTemplate(b *strings.Builder, path string) {
	for i := 0; ; i++ {
		seg, rest, more := strings.Cut(path, "/")
		if i > 0 {
			b.WriteByte('/')
		}
		if len(seg) == 36 && uuid.Validate(seg) == nil {
			b.WriteString("{id}")
		} else {
			b.WriteString(seg)
		}
		if !more {
			return
		}
		path = rest
	}
}
