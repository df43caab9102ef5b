package pginbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// One operation of BenchmarkAcknowledge sends ackBatch fresh deliveries,
// ackSenders at a time.
const (
	ackBatch   = 64
	ackSenders = 32
)

// BenchmarkAcknowledge measures how fast deliveries are stored and
// acknowledged by pginbox's Handler and by baselineHandler, a hand-written
// receiver doing the same HMAC check and INSERT … ON CONFLICT DO NOTHING.
// Each runs as three replicas (a pool of 8 connections each) sharing a
// table of their own, served over loopback HTTP; no Worker runs. Both run in one loop
// (internal/benchpair: every iteration sends a batch to each, rotating which
// goes first), and it reports each one's ns per batch of 64 deliveries and
// the ratio pginbox/baseline (below 1/0.95 = 1.053 means pginbox reaches
// 0.95× the baseline's throughput):
//
//	go test -run '^$' -bench Acknowledge -count 6 . | tee bench.txt
//	benchstat bench.txt
func BenchmarkAcknowledge(b *testing.B) {
	v := webhooktest.NewVerifier(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: ackSenders}}
	b.Cleanup(client.CloseIdleConnections)
	baseline := newReplicas(b, baselineHandler)
	inbox := newReplicas(b, func(pool *pgxpool.Pool) http.Handler { return pginbox.Handler(pool, v) })

	benchpair.Run(b, 4,
		benchpair.Variant{Name: "baseline", Run: func() error { return baseline.sendBatch(client) }},
		benchpair.Variant{Name: "pginbox", Run: func() error { return inbox.sendBatch(client) }})
	for name, r := range map[string]*replicas{"baseline": baseline, "pginbox": inbox} {
		if n := countRows(b, r.pool, ""); n != r.sent {
			b.Fatalf("%s: %d deliveries stored, %d acknowledged", name, n, r.sent)
		}
	}
}

// BenchmarkAcknowledgeMetrics measures what counting in a Metrics costs the
// Handler: BenchmarkAcknowledge's load on pginbox's Handler without
// metrics and with WithMetrics (the Metrics registered, as a user would),
// in one loop (internal/benchpair), reporting the ratio metrics/pginbox:
//
//	go test -run '^$' -bench AcknowledgeMetrics -count 6 .
func BenchmarkAcknowledgeMetrics(b *testing.B) {
	v := webhooktest.NewVerifier(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: ackSenders}}
	b.Cleanup(client.CloseIdleConnections)
	plain := newReplicas(b, func(pool *pgxpool.Pool) http.Handler { return pginbox.Handler(pool, v) })
	counted := newReplicas(b, func(pool *pgxpool.Pool) http.Handler {
		m := pginbox.NewMetrics(pool) // each replica's, as in separate processes
		require.NoError(b, prometheus.NewRegistry().Register(m))
		return pginbox.Handler(pool, v, pginbox.WithMetrics(m))
	})

	benchpair.Run(b, 4,
		benchpair.Variant{Name: "pginbox", Run: func() error { return plain.sendBatch(client) }},
		benchpair.Variant{Name: "metrics", Run: func() error { return counted.sendBatch(client) }})
}

// BenchmarkScrape measures one scrape of a Metrics (its query of the
// inbox's depth) on an inbox of 10,000 pending and 100,000 processed
// deliveries.
func BenchmarkScrape(b *testing.B) {
	ctx := context.Background()
	pool := newPool(b, newSchema(b), 1)
	_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, status)
		SELECT 'd' || i, 'contact.created', now(), '\x7b7d', CASE WHEN i <= 10000 THEN 'pending' ELSE 'processed' END
		FROM generate_series(1, 110000) AS i`)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `ANALYZE invoicing_webhook_inbox`)
	require.NoError(b, err)
	reg := prometheus.NewRegistry()
	reg.MustRegister(pginbox.NewMetrics(pool))
	for b.Loop() {
		mfs, err := reg.Gather()
		require.NoError(b, err)
		require.Len(b, mfs, 6, "every family, the pending ones too")
	}
}

// replicas are three replicas of one receiver, served over loopback HTTP,
// sharing a schema of their own.
type replicas struct {
	urls []string
	pool *pgxpool.Pool // a pool of their schema, for the final count
	sent int           // deliveries acknowledged
}

// newReplicas serves three replicas of the receiver handler builds, each
// with a pool of 8 connections.
func newReplicas(b *testing.B, handler func(*pgxpool.Pool) http.Handler) *replicas {
	schema := newSchema(b)
	r := &replicas{pool: newPool(b, schema, 1)}
	for range 3 {
		srv := httptest.NewServer(handler(newPool(b, schema, 8)))
		b.Cleanup(srv.Close)
		r.urls = append(r.urls, srv.URL)
	}
	return r
}

// sendBatch sends ackBatch fresh deliveries to the replicas in turn,
// ackSenders at a time, and returns an error for an answer other than 200.
func (r *replicas) sendBatch(client *http.Client) error {
	deliveries := webhooktest.Deliveries(ackBatch)
	if err := testkit.Concurrently(len(deliveries), ackSenders, func(i int) error {
		return send(client, r.urls[i%len(r.urls)], deliveries[i])
	}); err != nil {
		return err
	}
	r.sent += ackBatch
	return nil
}

// send posts d to url and returns an error unless it is answered 200.
func send(client *http.Client, url string, d webhooktest.Delivery) error {
	status, _, err := post(client, url, d)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("delivery %s answered %d", d.ID, status)
	}
	return err
}

// BenchmarkProcess measures deliveries processed per second by three
// replicas' Workers (Concurrency 2 each) draining b.N stored deliveries:
// with a Process callback that does nothing, and with a ProcessTx that
// inserts a row through the delivery's transaction.
func BenchmarkProcess(b *testing.B) {
	b.Run("callback=Process", func(b *testing.B) {
		benchProcess(b, func(w *pginbox.Worker) {
			w.Process = func(context.Context, *webhooks.Delivery) error { return nil }
		})
	})
	b.Run("callback=ProcessTx", func(b *testing.B) {
		benchProcess(b, func(w *pginbox.Worker) {
			w.ProcessTx = func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
				_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1)`, d.ID)
				return err
			}
		})
	})
}

// benchProcess is BenchmarkProcess with the callback set by callback.
func benchProcess(b *testing.B, callback func(*pginbox.Worker)) {
	ctx := context.Background()
	schema := newSchema(b)
	pool := newPool(b, schema, 2)
	_, err := pool.Exec(ctx, `CREATE TABLE effects (delivery_id text NOT NULL)`)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
		SELECT 'd' || i, 'contact.created', now(), convert_to(format(
			'{"contact_id":"c%s","contact_type":"client","name":"n","email":"e@example.com","created_at":"2026-01-02T03:04:05Z"}', i), 'UTF8')
		FROM generate_series(1, $1) AS i`, b.N)
	require.NoError(b, err)

	b.ResetTimer()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 3)
	for range 3 {
		w := &pginbox.Worker{Pool: newPool(b, schema, 4), Concurrency: 2, PollInterval: 5 * time.Millisecond}
		callback(w)
		go func() { done <- w.Run(runCtx) }()
	}
	waitFor(b, pool, pginbox.StatusProcessed, b.N)
	b.StopTimer()
	stop()
	for range 3 {
		require.NoError(b, <-done)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// baselineHandler is the receiver a careful user could write by hand, that
// BenchmarkAcknowledge measures pginbox's Handler against: it checks the
// HMAC signature and the timestamp as the API document describes, then
// stores the delivery with the same INSERT … ON CONFLICT DO NOTHING, and
// answers 200 or an error status. It does not parse the body.
func baselineHandler(pool *pgxpool.Pool) http.Handler {
	key := []byte(webhooktest.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, webhooks.DefaultMaxBodyBytes+1))
		if err != nil || len(body) > webhooks.DefaultMaxBodyBytes {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		signedAt, err := benchpair.BaselineVerify(key, r.Header, body, time.Now())
		if err != nil {
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
			return
		}
		id, event := r.Header.Get(webhooks.HeaderDelivery), r.Header.Get(webhooks.HeaderEvent)
		if id == "" || event == "" {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		if _, err := pool.Exec(r.Context(), `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
VALUES ($1, $2, $3, $4)
ON CONFLICT (business, delivery_id) DO NOTHING`, id, event, signedAt, body); err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
