package pginbox_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// Every replica of the receiver runs the same code: the Handler stores and
// acknowledges, the Worker processes, and marking a delivery processed
// commits together with the receiver's own writes.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pginbox.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	v, err := webhooks.NewVerifier(os.Getenv("INVOICING_WEBHOOK_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/webhooks", pginbox.Handler(pool, v))

	w := &pginbox.Worker{Pool: pool, Concurrency: 4,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			e, ok := d.Event.(*webhooks.InvoicePaid)
			if !ok {
				return nil // not interested: marked processed all the same
			}
			_, err := tx.Exec(ctx, `UPDATE orders SET paid_at = $1 WHERE invoice_id = $2`, e.PaidAt, e.InvoiceID)
			return err
		}}
	go func() {
		if err := w.Run(ctx); err != nil { // returns when ctx ends
			log.Fatal(err)
		}
	}()
}
