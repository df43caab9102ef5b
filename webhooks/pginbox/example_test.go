package pginbox_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// Every replica of the receiver runs the same code: the Handler stores and
// acknowledges, the Worker processes, and marking a delivery processed
// commits together with the receiver's own writes. Prometheus scrapes the
// inbox's metrics at /metrics.
func Example() {
	ctx := context.Background()
	v, err := webhooks.NewVerifier(os.Getenv("INVOICING_WEBHOOK_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	r, err := newReceiver(ctx, os.Getenv("DATABASE_URL"), v, markPaid)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := r.worker.Run(ctx); err != nil { // returns when ctx ends
			log.Fatal(err)
		}
	}()
	http.Handle("/webhooks", r.handler)
	prometheus.MustRegister(r.metrics)
	http.Handle("/metrics", promhttp.Handler())
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// One endpoint for every business: each business's endpoint is registered
// in the service with its own URL, /webhooks/{business}, and its secret is
// looked up here (in a table read at start-up; a receiver whose businesses
// change reloads it). The Workers run as in Example, for every business:
// the callback reads the delivery's Business.
func ExampleBusinessHandler() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL")) // the Handler's pool
	if err != nil {
		log.Fatal(err)
	}
	if err := pginbox.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	verifiers := map[string]*webhooks.Verifier{}
	var business, secret string
	rows, _ := pool.Query(ctx, `SELECT business, webhook_secret FROM businesses`)
	_, err = pgx.ForEachRow(rows, []any{&business, &secret}, func() error {
		v, err := webhooks.NewVerifier(secret)
		if err != nil {
			return fmt.Errorf("the webhook secret of business %s: %w", business, err)
		}
		verifiers[business] = v
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	lookup := func(_ context.Context, business string) (*webhooks.Verifier, error) {
		if v, ok := verifiers[business]; ok {
			return v, nil
		}
		return nil, webhooks.ErrUnknownBusiness // answered 404
	}
	http.Handle("POST /webhooks/{business}", pginbox.BusinessHandler(pool, lookup))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// markPaid is the processing: it runs in the transaction that marks the
// delivery processed.
func markPaid(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
	e, ok := d.Event.(*webhooks.InvoicePaid)
	if !ok {
		return nil // not interested: marked processed all the same
	}
	_, err := tx.Exec(ctx, `UPDATE orders SET paid_at = $1 WHERE invoice_id = $2`, e.PaidAt, e.InvoiceID)
	return err
}

// receiver is one replica: its Handler, its Worker, their Metrics, and
// close, which closes their pools.
type receiver struct {
	handler http.Handler
	worker  *pginbox.Worker
	metrics *pginbox.Metrics
	close   func()
}

// concurrency is how many deliveries the Worker processes at once.
const concurrency = 4

// newReceiver creates the inbox table if needed and builds the Handler and
// the Worker, each with a pool of its own: the Worker holds a connection
// for every delivery in progress, as long as process runs, and the
// Handler's inserts must never wait for those.
func newReceiver(ctx context.Context, databaseURL string, v *webhooks.Verifier,
	process func(context.Context, pgx.Tx, *webhooks.Delivery) error) (*receiver, error) {
	inserts, err := pgxpool.New(ctx, databaseURL) // the Handler's pool: inserts only
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		inserts.Close()
		return nil, err
	}
	cfg.MaxConns = concurrency // the Worker's pool: a connection per delivery in progress
	workers, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		inserts.Close()
		return nil, err
	}
	closePools := func() { inserts.Close(); workers.Close() }
	if err := pginbox.Migrate(ctx, inserts); err != nil {
		closePools()
		return nil, err
	}
	m := pginbox.NewMetrics(inserts) // one short query per scrape, on the Handler's pool
	return &receiver{
		handler: pginbox.Handler(inserts, v, pginbox.WithMetrics(m)),
		worker:  &pginbox.Worker{Pool: workers, Concurrency: concurrency, ProcessTx: process, Metrics: m},
		metrics: m,
		close:   closePools,
	}, nil
}
