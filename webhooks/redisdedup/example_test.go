package redisdedup_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// The Deduper's figures join the replica's other metrics, served on
// /metrics by promhttp.Handler().
func ExampleDeduper_Collector() {
	dedupe := redisdedup.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"}))
	prometheus.MustRegister(dedupe.Collector())
}

// At shutdown, once the HTTP server has stopped taking requests, Flush
// waits for the releases Redis did not answer in time, so that none is
// lost with the process.
func ExampleDeduper_Flush() {
	dedupe := redisdedup.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"}))
	srv := &http.Server{Addr: ":8080"}
	// ... srv.Handler is a webhooks.Handler WithDeduper(dedupe), and
	// srv.ListenAndServe runs until a signal calls:
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Print(err)
	}
	if err := dedupe.Flush(ctx); err != nil {
		log.Print(err) // their claims end with the lease
	}
}
