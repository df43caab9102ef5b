package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// BenchmarkMetricsOverhead backfills 5,000 invoices (and the fake's seed
// data) with no request latency, the case where the metrics' cost shows
// most, alternately without and with Metrics (the SDK middleware counting
// every request, a registry gathered every second), and reports both rates
// in records/s and their ratio (with/without; 1 means no cost).
//
//	go test -run '^$' -bench MetricsOverhead -benchtime 6x ./pgmirror
func BenchmarkMetricsOverhead(b *testing.B) {
	const invoices = 5_000
	srv, _ := newFake(b)
	seed(b, srv, sizes{invoices: invoices}, rand.New(rand.NewPCG(61, 62)))
	backfill := func(withMetrics bool) time.Duration {
		var opts []invoicing.Option
		cfg := testConfig(nil, newSchemaName())
		cfg.BatchSize = pgmirror.DefaultBatchSize
		if withMetrics {
			x := pgmirror.NewMetrics()
			reg := prometheus.NewRegistry()
			reg.MustRegister(x)
			opts = append(opts, invoicing.WithMiddleware(x.Middleware))
			cfg.Metrics = x
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
						_, err := reg.Gather()
						require.NoError(b, err)
					}
				}
			}()
		}
		cfg.Client = srv.Client(opts...)
		m := openMirror(b, cfg)
		start := time.Now()
		require.NoError(b, m.Backfill(context.Background()))
		return time.Since(start)
	}
	backfill(false) // warm up: the fake's caches, the database's
	var without, with time.Duration
	for i := range b.N { // alternating which goes first
		if i%2 == 0 {
			without += backfill(false)
			with += backfill(true)
		} else {
			with += backfill(true)
			without += backfill(false)
		}
	}
	rate := func(d time.Duration) float64 { return float64(invoices*b.N) / d.Seconds() }
	b.ReportMetric(rate(without), "records/s-without")
	b.ReportMetric(rate(with), "records/s-with")
	b.ReportMetric(rate(with)/rate(without), "ratio")
}
