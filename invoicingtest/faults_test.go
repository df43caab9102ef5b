package invoicingtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitNext(t *testing.T) {
	srv, _ := newServer(t)
	srv.RateLimitNext(2, 3*time.Second)
	for range 2 {
		r := get(t, srv, "/invoices").requireStatus(t, http.StatusTooManyRequests)
		assert.Equal(t, "3", r.header.Get("Retry-After"))
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Equal(t, "Rate limit exceeded", r.detail(t))
	}
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)

	srv.RateLimitNext(1, 1500*time.Millisecond)
	assert.Equal(t, "2", get(t, srv, "/invoices").header.Get("Retry-After"), "rounded up to whole seconds")
	srv.RateLimitNext(1, 0)
	assert.Equal(t, "0", get(t, srv, "/invoices").header.Get("Retry-After"))
}

func TestFaultsComeBeforeAuthAndHaveNoSideEffects(t *testing.T) {
	srv, _ := newServer(t)
	srv.FailNext(1, http.StatusServiceUnavailable)
	r := call(t, srv, http.MethodPost, "/invoices", "", invoiceBody(nil)).requireStatus(t, http.StatusServiceUnavailable)
	assert.Equal(t, "Service Unavailable", r.detail(t))
	assert.Empty(t, r.header.Get("Retry-After"))
	assert.Equal(t, num("0"), get(t, srv, "/invoices").object(t)["total"])

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.True(t, reqs[0].Fault)
	assert.Equal(t, http.StatusServiceUnavailable, reqs[0].Status)
	assert.False(t, reqs[1].Fault)
}

func TestProxyErrorNext(t *testing.T) {
	srv, _ := newServer(t)
	srv.ProxyErrorNext(1)
	r := get(t, srv, "/items").requireStatus(t, http.StatusBadGateway)
	assert.Equal(t, "text/html", r.header.Get("Content-Type"))
	assert.Equal(t, ProxyErrorPage, string(r.body))
	get(t, srv, "/items").requireStatus(t, http.StatusOK)
}

func TestScopedFault(t *testing.T) {
	srv, _ := newServer(t)
	srv.InjectFault(Fault{Status: http.StatusInternalServerError, Method: "POST", Path: "/invoices", Count: 2, RetryAfter: time.Second})
	srv.InjectFault(Fault{Status: http.StatusBadGateway, Path: "/quotes/*", Body: "upstream gone", ContentType: "text/plain"})

	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)
	get(t, srv, "/quotes").requireStatus(t, http.StatusOK)
	r := post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusInternalServerError)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusInternalServerError)
	post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusCreated)

	r = get(t, srv, "/quotes/anything").requireStatus(t, http.StatusBadGateway)
	assert.Equal(t, "upstream gone", string(r.body))
	assert.Equal(t, "text/plain", r.header.Get("Content-Type"))
	get(t, srv, "/quotes/anything").requireStatus(t, http.StatusNotFound)

	srv.FailNext(5, http.StatusInternalServerError)
	srv.ClearFaults()
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)
}
