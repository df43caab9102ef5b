package pginbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// BenchmarkAcknowledge measures deliveries stored and acknowledged per
// second by three replicas' Handlers sharing one database, over loopback
// HTTP, 32 requests at a time (no Worker runs).
func BenchmarkAcknowledge(b *testing.B) {
	schema := newSchema(b)
	v := webhooktest.NewVerifier(b)
	var handlers []http.Handler
	for range 3 {
		handlers = append(handlers, pginbox.Handler(newPool(b, schema, 16), v))
	}
	webhooktest.Throughput(b, handlers)
	if n := countRows(b, newPool(b, schema, 1), ""); n != b.N {
		b.Fatalf("%d deliveries stored, %d acknowledged", n, b.N)
	}
}

// BenchmarkProcess measures deliveries processed per second by three
// replicas' Workers (Concurrency 2 each) draining b.N stored deliveries;
// the callback does nothing.
func BenchmarkProcess(b *testing.B) {
	ctx := context.Background()
	schema := newSchema(b)
	pool := newPool(b, schema, 2)
	_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
		SELECT 'd' || i, 'contact.created', now(), convert_to(format(
			'{"contact_id":"c%s","contact_type":"client","name":"n","email":"e@example.com","created_at":"2026-01-02T03:04:05Z"}', i), 'UTF8')
		FROM generate_series(1, $1) AS i`, b.N)
	require.NoError(b, err)

	b.ResetTimer()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 3)
	for range 3 {
		w := &pginbox.Worker{Pool: newPool(b, schema, 4), Concurrency: 2, PollInterval: 5 * time.Millisecond,
			Process: func(context.Context, *webhooks.Delivery) error { return nil }}
		go func() { done <- w.Run(runCtx) }()
	}
	for countRows(b, pool, pginbox.StatusProcessed) < b.N {
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	stop()
	for range 3 {
		require.NoError(b, <-done)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
