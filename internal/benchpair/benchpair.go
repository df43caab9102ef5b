// Package benchpair measures several implementations of one operation in a
// single benchmark loop, for the repository's benchmarks that compare the
// SDK with a hand-written net/http baseline.
//
// go test -count repeats each sub-benchmark back to back, so separate
// sub-benchmarks let the machine's state favour whichever runs first (on a
// 2-core VM the second of two back-to-back runs is measurably slower).
// Run instead calls every variant in each iteration, rotating which goes
// first, and times each call: a slowdown of the shared machine weighs on
// all of them alike.
//
// The baselines are here, written once for every benchmark that compares
// with them: Baseline, the hand-written net/http + encoding/json client of
// the SDK's benchmarks (and otel's), and BaselineVerify, the hand-written
// webhook verifier of the webhook benchmarks. The package uses the standard
// library and the SDK's own field types; the nested modules' benchmarks
// import it through their replace of the SDK's module.
package benchpair

import (
	"runtime"
	"testing"
	"time"
)

// A Variant is one implementation of the operation under test.
type Variant struct {
	// Name labels its metrics: Name-ns/op, Name-B/op, Name-allocs/op.
	Name string
	// Run performs the operation once.
	Run func() error
}

// Run measures the variants in one loop and reports, for each, its ns/op
// and its B/op and allocs/op (measured over memCalls calls before the
// loop), and for every variant after the first its ratios to the first:
// Name/First (time) and Name/First-allocs. The built-in ns/op, the sum of
// all variants, is reported as 0.
func Run(b *testing.B, memCalls int, vs ...Variant) {
	b.Helper()
	bytes := make([]float64, len(vs))
	allocs := make([]float64, len(vs))
	for i, v := range vs {
		bytes[i], allocs[i] = memPerCall(b, memCalls, v.Run)
	}
	spent := make([]time.Duration, len(vs))
	n := 0
	for b.Loop() {
		for k := range vs {
			i := (n + k) % len(vs)
			start := time.Now()
			if err := vs[i].Run(); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
		n++
	}
	// Reported after the loop, whose start clears the metrics.
	b.ReportMetric(0, "ns/op")
	for i, v := range vs {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(n), v.Name+"-ns/op")
		b.ReportMetric(bytes[i], v.Name+"-B/op")
		b.ReportMetric(allocs[i], v.Name+"-allocs/op")
		if i > 0 {
			b.ReportMetric(float64(spent[i])/float64(spent[0]), v.Name+"/"+vs[0].Name)
			if allocs[0] > 0 {
				b.ReportMetric(allocs[i]/allocs[0], v.Name+"/"+vs[0].Name+"-allocs")
			}
		}
	}
}

// memPerCall returns the bytes and allocations of one call of run,
// averaged over calls calls after a warm-up call, as testing counts them.
// Allocations of other goroutines (an in-process server's) count too,
// equally for every variant.
func memPerCall(b *testing.B, calls int, run func() error) (bytes, allocs float64) {
	if err := run(); err != nil { // warm up
		b.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(calls), float64(after.Mallocs-before.Mallocs) / float64(calls)
}
