package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics serves the mirror's collectors (its Metrics and its
// InboxMetrics), with the Go runtime's and the process's, at /metrics on
// addr, and returns the function that stops the server. The metrics have
// an address of their own, not the webhook endpoint's: that one faces the
// service (often the internet), this one only the scraper.
func serveMetrics(addr string, log *slog.Logger, mirror ...prometheus.Collector) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(append(mirror, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("invoicing-mirror: metrics server", "error", err.Error())
		}
	}()
	log.Info("invoicing-mirror: metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
