package redisdedup_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// Every replica of the receiver builds the same Handler; the Deduper makes
// them share which deliveries were processed.
func Example() {
	v, err := webhooks.NewVerifier(os.Getenv("INVOICING_WEBHOOK_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	dedupe := redisdedup.New(rdb,
		redisdedup.WithKeyPrefix("billing:webhooks:"), // one prefix per receiver
		redisdedup.WithLease(time.Minute),             // processing takes less
	)
	http.Handle("/webhooks", webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			log.Println("paid:", e.InvoiceNumber)
		}
		return nil
	}, webhooks.WithDeduper(dedupe)))
}
