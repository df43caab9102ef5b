package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// effectsSQL creates the table where the Workers record their work.
const effectsSQL = `CREATE TABLE IF NOT EXISTS webhook_cluster_effects (
    run_id      text        NOT NULL,
    delivery_id text        NOT NULL,
    replica     integer     NOT NULL,
    done_at     timestamptz NOT NULL DEFAULT now()
)`

// run starts the replicas and the fake service, raises cfg.events events,
// crashes the last replica halfway, runs the service's retries, waits for
// the Workers to finish and writes the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (report, error) {
	if cfg.replicas < 3 || cfg.events < 1 {
		return report{}, errors.New("need at least 3 replicas and 1 event")
	}
	admin, err := pgxpool.New(ctx, cfg.databaseURL)
	if err != nil {
		return report{}, err
	}
	defer admin.Close()
	if err := pginbox.Migrate(ctx, admin); err != nil {
		return report{}, err
	}
	if _, err := admin.Exec(ctx, effectsSQL); err != nil {
		return report{}, fmt.Errorf("creating webhook_cluster_effects: %w", err)
	}
	runID := rand.Text() // tells this run's rows from earlier runs'

	clock := invoicingtest.NewFakeClock(time.Now().UTC().Truncate(time.Second))
	service := invoicingtest.NewServer(invoicingtest.WithClock(clock))
	defer service.Close()
	f := &front{}
	frontURL, closeFront, err := serve(f)
	if err != nil {
		return report{}, err
	}
	defer closeFront()
	endpoint := service.AddWebhookEndpoint(frontURL)
	verifier, err := webhooks.NewVerifier(endpoint.Secret(), webhooks.WithClock(clock.Now))
	if err != nil {
		return report{}, err
	}

	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for n := 1; n <= cfg.replicas; n++ {
		r, err := startReplica(ctx, cfg.databaseURL, runID, n, verifier, n == 2, n == cfg.replicas)
		if err != nil {
			return report{}, err
		}
		replicas = append(replicas, r)
		f.add(r.url)
	}

	interrupted := false
	for i := range cfg.events {
		if i == cfg.events/2 {
			if interrupted, err = replicas[len(replicas)-1].crash(ctx, admin); err != nil {
				return report{}, err
			}
		}
		service.AddClient(invoicingtest.Contact{Name: fmt.Sprintf("Cluster client %d", i+1)}) // fires contact.created
	}
	for _, wait := range invoicingtest.RetrySchedule() {
		clock.Advance(wait) // the retries that fall due run now
	}

	deliveries := endpoint.Deliveries()
	if err := waitProcessed(ctx, admin, deliveries); err != nil {
		return report{}, err
	}
	rep, err := count(ctx, admin, runID, deliveries)
	if err != nil {
		return report{}, err
	}
	rep.crashInterrupted = interrupted
	rep.print(out, cfg.replicas)
	return rep, nil
}

// ids returns the delivery ids.
func ids(deliveries []invoicingtest.Delivery) []string {
	out := make([]string, len(deliveries))
	for i, d := range deliveries {
		out[i] = d.ID
	}
	return out
}

// waitProcessed waits until none of the deliveries is pending in the inbox,
// for at most a minute.
func waitProcessed(ctx context.Context, db *pgxpool.Pool, deliveries []invoicingtest.Delivery) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		var pending int
		err := db.QueryRow(ctx, `SELECT count(*) FROM invoicing_webhook_inbox WHERE delivery_id = ANY($1) AND status = 'pending'`,
			ids(deliveries)).Scan(&pending)
		if err != nil {
			return fmt.Errorf("waiting for the Workers: %w", err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the Workers: %d deliveries still pending: %w", pending, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// count builds the report from the service's delivery log and the effects
// the Workers recorded.
func count(ctx context.Context, db *pgxpool.Pool, runID string, deliveries []invoicingtest.Delivery) (report, error) {
	rep := report{sent: len(deliveries), perReplica: map[int]int{}}
	for _, d := range deliveries {
		rep.attempts += len(d.Attempts)
		if len(d.Attempts) > 1 {
			rep.retried++
		}
		if d.Status == invoicingtest.DeliverySucceeded {
			rep.acknowledged++
		}
	}
	rows, err := db.Query(ctx, `SELECT delivery_id, count(*), min(replica) FROM webhook_cluster_effects
		WHERE run_id = $1 GROUP BY delivery_id`, runID)
	if err != nil {
		return report{}, fmt.Errorf("counting effects: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var times, replica int
		if err := rows.Scan(&id, &times, &replica); err != nil {
			return report{}, err
		}
		if times == 1 {
			rep.processedOnce++
			rep.perReplica[replica]++
		} else {
			rep.processedMore++
		}
	}
	return rep, rows.Err()
}
