package redisdedup_test

import (
	"context"
	"testing"

	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// BenchmarkThreeReplicas measures deliveries acknowledged per second by
// three replicas sharing Redis, over loopback HTTP, 32 requests at a time.
// With a Deduper the callback runs before the answer, so every delivery
// acknowledged is also processed.
func BenchmarkThreeReplicas(b *testing.B) {
	c := newCluster(b, nil, 3, func(ctx context.Context, d *webhooks.Delivery) error { return nil })
	webhooktest.Throughput(b, c.replicas)
	if n := c.processed.Len(); n != b.N {
		b.Fatalf("%d deliveries processed, %d sent", n, b.N)
	}
}
