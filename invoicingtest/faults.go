package invoicingtest

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// Fault is an injected failure: matching requests are answered with Status
// and Body before they reach the API (no authentication, no side effects),
// as a rate limiter or a proxy in front of the service would.
type Fault struct {
	// Status is the HTTP status to answer with, e.g. 429, 500, 502, 503.
	Status int
	// RetryAfter is sent as the Retry-After header in whole seconds (rounded
	// up). A 429 always carries the header, "0" when RetryAfter is zero;
	// other statuses carry it only when RetryAfter is positive.
	RetryAfter time.Duration
	// Body is the response body; default {"detail": "<status text>"}.
	Body string
	// ContentType is the Content-Type of Body; default application/json
	// when Body is empty, text/html otherwise.
	ContentType string
	// Method limits the fault to one HTTP method; empty matches any.
	Method string
	// Path limits the fault to request paths matching this path.Match
	// pattern, relative to the base URL, e.g. "/invoices" or "/invoices/*";
	// empty matches any path.
	Path string
	// Count is how many matching requests get the fault; default 1.
	Count int
}

// ProxyErrorPage is the HTML body ProxyErrorNext sends, like a reverse
// proxy's 502 page.
const ProxyErrorPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

type activeFault struct {
	Fault
	left int
}

// InjectFault queues a fault. Faults are matched in the order injected;
// each matching request uses up one of the first matching fault's Count.
func (s *Server) InjectFault(f Fault) {
	if f.Count <= 0 {
		f.Count = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &activeFault{Fault: f, left: f.Count})
}

// RateLimitNext answers the next n requests with 429 and a Retry-After of
// retryAfter (whole seconds).
func (s *Server) RateLimitNext(n int, retryAfter time.Duration) {
	s.InjectFault(Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Count: n})
}

// FailNext answers the next n requests with status (a 5xx) and a JSON
// {detail} body.
func (s *Server) FailNext(n, status int) {
	s.InjectFault(Fault{Status: status, Count: n})
}

// ProxyErrorNext answers the next n requests with a 502 and the HTML body
// ProxyErrorPage.
func (s *Server) ProxyErrorNext(n int) {
	s.InjectFault(Fault{Status: http.StatusBadGateway, Body: ProxyErrorPage, Count: n})
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// takeFault uses up one request of the first fault matching r, if any.
func (s *Server) takeFault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	rel, underAPI := strings.CutPrefix(r.URL.Path, BasePath)
	for i, f := range s.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if f.Path != "" {
			if !underAPI {
				continue
			}
			if ok, _ := path.Match(f.Path, rel); !ok {
				continue
			}
		}
		f.left--
		if f.left == 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		fault := f.Fault
		return &fault
	}
	return nil
}

// write answers with the fault.
func (f *Fault) write(w http.ResponseWriter) {
	body, ctype := f.Body, f.ContentType
	if body == "" {
		body = string(errorJSON(faultDetail(f.Status)))
		if ctype == "" {
			ctype = "application/json"
		}
	}
	if ctype == "" {
		ctype = "text/html"
	}
	w.Header().Set("Content-Type", ctype)
	if f.Status == http.StatusTooManyRequests || f.RetryAfter > 0 {
		secs := (f.RetryAfter + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(body))
}

func faultDetail(status int) string {
	if status == http.StatusTooManyRequests {
		return "Rate limit exceeded"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "Error " + strconv.Itoa(status)
}

// Request is a request the server received, as logged by Requests.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path relative to the base URL (e.g. "/invoices"), or
	// the full path for requests outside it.
	Path string
	// RawQuery is the query string without '?'.
	RawQuery string
	// Header is a copy of the request headers without Authorization.
	Header http.Header
	// Status is the status code of the answer.
	Status int
	// Fault reports whether an injected fault answered.
	Fault bool
	// At is when the request arrived, on the server's clock.
	At time.Time
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) logRequest(r *http.Request, status int, fault bool) {
	h := r.Header.Clone()
	h.Del("Authorization")
	p := r.URL.Path
	if rel, ok := strings.CutPrefix(p, BasePath); ok {
		p = rel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: p, RawQuery: r.URL.RawQuery, Header: h,
		Status: status, Fault: fault, At: s.clock.Now(),
	})
}
