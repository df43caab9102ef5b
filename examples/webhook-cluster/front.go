package main

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// front is a round-robin load balancer over the replicas. A replica that
// cannot be reached is answered 502 and taken out of the rotation, as a load
// balancer's health check would.
type front struct {
	mu       sync.Mutex
	backends []*backend
	next     int
}

type backend struct {
	proxy *httputil.ReverseProxy
	up    bool
}

// add puts the replica at rawURL in the rotation.
func (f *front) add(rawURL string) {
	target, err := url.Parse(rawURL)
	if err != nil {
		panic(err) // serve made the URL
	}
	b := &backend{proxy: httputil.NewSingleHostReverseProxy(target), up: true}
	b.proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) {
		f.mu.Lock()
		b.up = false
		f.mu.Unlock()
		http.Error(w, http.StatusText(http.StatusBadGateway), http.StatusBadGateway)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backends = append(f.backends, b)
}

// ServeHTTP passes the request to the next replica that is up.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b := f.pick(); b != nil {
		b.proxy.ServeHTTP(w, r)
		return
	}
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
}

// pick returns the next backend that is up, or nil.
func (f *front) pick() *backend {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range f.backends {
		b := f.backends[f.next%len(f.backends)]
		f.next++
		if b.up {
			return b
		}
	}
	return nil
}
