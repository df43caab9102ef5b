//go:build unix

package pgmirror_test

import (
	"context"
	"syscall"
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
// in records/s and rate-ratio (with/without: 1 means no cost, below 1 a
// cost), and the test process's CPU time per record both ways and
// cpu-ratio (with/without: above 1 a cost; the fake service's CPU
// included, PostgreSQL's not). On a busy machine the CPU time varies less
// than the rate.
//
//	go test -run '^$' -bench MetricsOverhead -benchtime 6x ./pgmirror
func BenchmarkMetricsOverhead(b *testing.B) {
	const invoices = 5_000
	srv, _ := newFake(b)
	seed(b, srv, sizes{invoices: invoices}, 61, 62)
	backfill := func(withMetrics bool) (took, cpu time.Duration) {
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
		start, cpuStart := time.Now(), cpuTime(b)
		require.NoError(b, m.Backfill(context.Background()))
		return time.Since(start), cpuTime(b) - cpuStart
	}
	backfill(false) // warm up: the fake's caches, the database's

	var took, cpu [2]time.Duration // without, with
	for i := range b.N {
		for j := range 2 { // alternating which goes first
			v := (i + j) % 2
			t, c := backfill(v == 1)
			took[v] += t
			cpu[v] += c
		}
	}
	records := float64(invoices * b.N)
	b.ReportMetric(records/took[0].Seconds(), "records/s-without")
	b.ReportMetric(records/took[1].Seconds(), "records/s-with")
	b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "rate-ratio")
	b.ReportMetric(float64(cpu[0].Microseconds())/records, "cpu-µs/record-without")
	b.ReportMetric(float64(cpu[1].Microseconds())/records, "cpu-µs/record-with")
	b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-ratio")
}

// cpuTime is the CPU time the test process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
