package redisdedup_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// benchBatch is how many deliveries one iteration sends to each receiver:
// enough for the start and the end of a batch, when fewer than
// webhooktest.SenderConcurrency requests are in flight, to weigh little.
const benchBatch = 100 * webhooktest.SenderConcurrency

// BenchmarkThreeReplicas compares three replicas of webhooks.Handler with a
// redisdedup.Deduper (redisdedup) with three replicas of the receiver a
// careful user would write by hand (setnx: the same HMAC and timestamp
// checks, then one SET NX of the delivery id, before processing), all
// sharing one Redis (appendonly yes, appendfsync everysec, as production
// usually runs it), over loopback HTTP, 32 requests at a time. Each
// iteration sends 3,200 fresh deliveries to each, rotating which goes first
// (internal/benchpair); redisdedup/setnx is the ratio of their times, so
// 1/ratio is redisdedup's share of setnx's deliveries per second:
//
//	go test -run '^$' -bench ThreeReplicas -count 10 . | tee bench.txt
//	benchstat bench.txt
func BenchmarkThreeReplicas(b *testing.B) {
	var setnxRuns, dedupRuns atomic.Int64
	var setnx, dedup []http.Handler
	srv := newServer(b, "--appendfsync", "everysec")
	p := prefix(b)
	v := webhooktest.NewVerifier(b)
	for range 3 {
		setnx = append(setnx, setnxHandler(clientOf(b, srv.Addr), p+"setnx:", func() { setnxRuns.Add(1) }))
		dedup = append(dedup, webhooks.Handler(v, func(context.Context, *webhooks.Delivery) error {
			dedupRuns.Add(1)
			return nil
		}, webhooks.WithDeduper(redisdedup.New(clientOf(b, srv.Addr), redisdedup.WithKeyPrefix(p+"dedup:")))))
	}
	toSetnx, toDedup := webhooktest.NewSender(b, setnx), webhooktest.NewSender(b, dedup)

	benchpair.Run(b, 1,
		benchpair.Variant{Name: "setnx", Run: func() error { return toSetnx.Send(benchBatch) }},
		benchpair.Variant{Name: "redisdedup", Run: func() error { return toDedup.Send(benchBatch) }})

	if s, d := setnxRuns.Load(), dedupRuns.Load(); s != d || s%benchBatch != 0 {
		b.Fatalf("setnx processed %d deliveries and redisdedup %d; each was sent the same multiple of %d", s, d, benchBatch)
	}
}

// setnxHandler is the hand-written baseline: it verifies the delivery as
// webhooks.Verifier does by default (the signature over "<timestamp>.<body>",
// a timestamp within 5 minutes), claims its id with one SET NX for the
// Deduper's default TTL, and calls process when the id was new.
func setnxHandler(rdb *redis.Client, prefix string, process func()) http.Handler {
	key := []byte(webhooktest.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if _, err := benchpair.BaselineVerify(key, r.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(webhooks.HeaderDelivery)
		if id == "" {
			http.Error(w, "no delivery id", http.StatusBadRequest)
			return
		}
		isNew, err := rdb.SetNX(r.Context(), prefix+id, "done", redisdedup.DefaultTTL).Result()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if isNew {
			process()
		}
		w.WriteHeader(http.StatusOK)
	})
}

// BenchmarkCollectorGather is the cost of one scrape of a Deduper's
// Collector (a fixed set of series, whatever the traffic): what a
// Prometheus registry spends on it at each scrape.
func BenchmarkCollectorGather(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(redisdedup.New(newClient(b), redisdedup.WithKeyPrefix(prefix(b))).Collector())
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
