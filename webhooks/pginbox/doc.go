// Package pginbox receives the Invoicing Service's webhooks into a
// PostgreSQL table and processes them afterwards: store, then acknowledge,
// then process. It suits receivers that run as several replicas and work
// that must not be lost or done twice.
//
// The Handler verifies each delivery (webhooks.Verifier.Read), inserts it in
// one statement that ignores a delivery id already stored, and answers 200
// only once that insert has committed. When the database fails, or has not
// stored the delivery within the Handler's limit (DefaultHandlerTimeout, 10
// seconds, or that of WithTimeout), it answers 500 and the service retries:
// a database that hangs costs an answer of 500 within the limit, well within
// the 30 seconds the service waits.
//
// Workers, any number on any replica, claim stored deliveries with SELECT
// ... FOR UPDATE SKIP LOCKED, parse them into typed events, call the
// callback and mark them processed; a failure is retried with a backoff,
// then parked as failed for inspection. A Worker that dies mid-processing
// loses nothing: its transaction, and so its row lock, ends with its
// connection, and another Worker processes the delivery.
//
// # Two pools
//
// A Worker holds a pool connection for each delivery in progress, for as
// long as its callback runs. Give the Handler and the Workers a pool each,
// so that the Handler's inserts never wait for a connection held by a slow
// callback: answering then takes one insert, however slow the processing.
// The Workers' pool needs a connection per delivery processed at once
// (Concurrency, summed over the Workers sharing it); the Handler's one a
// connection per request served at once, or requests wait for each other
// within the Handler's limit (pgxpool's default, the larger of 4 and the
// number of CPUs, suits most receivers). Each replica opens both pools: the
// database's max_connections must cover the replicas times the sum of the
// two MaxConns. The package's example is this setup whole, and its test
// runs it with callbacks that never return:
//
//	url := os.Getenv("DATABASE_URL")
//	inserts, err := pgxpool.New(ctx, url) // the Handler's pool: inserts only
//	...
//	cfg, err := pgxpool.ParseConfig(url)
//	...
//	cfg.MaxConns = 4 // the Worker's pool: a connection per delivery in progress
//	workers, err := pgxpool.NewWithConfig(ctx, cfg)
//	...
//	if err := pginbox.Migrate(ctx, inserts); err != nil { ... }
//	http.Handle("/webhooks", pginbox.Handler(inserts, verifier))
//	w := &pginbox.Worker{Pool: workers, Concurrency: 4,
//		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
//			e, ok := d.Event.(*webhooks.InvoicePaid)
//			if !ok {
//				return nil
//			}
//			_, err := tx.Exec(ctx, `UPDATE orders SET paid_at = $1 WHERE invoice_id = $2`, e.PaidAt, e.InvoiceID)
//			return err
//		}}
//	go w.Run(ctx) // returns once ctx ends and the deliveries in progress are done
//
// A callback writes through tx (ProcessTx), or through a pool other than
// the Workers': with every connection of the Workers' pool held by a
// callback, one more from it would wait until the callback's Timeout.
//
// # Many businesses
//
// BusinessHandler serves one endpoint for many businesses (an accounting
// practice's clients, a platform's customers): the business comes from
// the URL, each business's endpoint registered in the service with its own
// (/webhooks/acme, /webhooks/globex), and each delivery is verified only
// with its business's secrets, from a webhooks.VerifierFunc the caller
// provides. A delivery signed for one business is refused on another's
// URL. Rows carry their business: a delivery id is stored once per
// business, and the Workers, the same for every business, give the
// callback the delivery's Business ("" for Handler's rows). Handler and
// BusinessHandler can share one table.
//
//	http.Handle("POST /webhooks/{business}", pginbox.BusinessHandler(inserts,
//		func(ctx context.Context, business string) (*webhooks.Verifier, error) {
//			return verifiers.Get(ctx, business) // wraps webhooks.ErrUnknownBusiness when unknown
//		}))
//
// # Backpressure
//
// With WithBackpressure, the Handler answers 503 with a Retry-After header,
// before reading the request, while the Workers are behind: while
// MaxPending deliveries are due (DefaultMaxPending, 10,000), or the oldest
// due one has waited MaxPendingAge for a Worker (DefaultMaxPendingAge, 5
// minutes). The service retries (after a minute, then 5, 30, 2 hours and
// 24 hours), and the Handler accepts deliveries again by itself once the
// Workers have caught up. It reads the backlog once a CheckInterval (a
// second), in the background, with one query through the partial index
// of the pending deliveries that counts at most MaxPending of them, and
// counts what it let through since: a request pays a few atomic
// operations, and a flood between two checks does not overshoot the
// limit. A delivery waiting out its backoff after a failure is not
// waiting for a Worker and does not count.
//
//	http.Handle("/webhooks", pginbox.Handler(inserts, verifier,
//		pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: 50000})))
//
// # Inspecting and requeueing
//
// An Inbox (NewInbox) lists the deliveries, newest first, a page at a
// time (all of them, the failed ones, a business's, those received since
// a time) with their attempts, failures and last error; shows one with its
// body (Get, or Find by id in whichever business); and has the Workers
// process deliveries again: Requeue by id, RequeueFailed every failed one
// a Filter selects. Its statements read through the table's indexes and
// hold a page at most in memory, for inboxes of millions of deliveries:
//
//	inbox := pginbox.NewInbox(pool)
//	for d, err := range inbox.List(ctx, pginbox.ListParams{Status: pginbox.StatusFailed}) {
//		if err != nil { ... }
//		fmt.Println(d.Business, d.ID, d.EventType, d.Failures, d.LastError)
//	}
//	n, err := inbox.RequeueFailed(ctx, pginbox.Filter{Since: outageStart})
//
// # Metrics
//
// NewMetrics returns a prometheus.Collector of the inbox's figures, named
// invoicing_pginbox_...: deliveries by outcome, deliveries in flight, the
// Workers' database errors, and the pending deliveries and the age of the
// oldest, read from the table at each scrape. Register it, and give it to
// the Handler (WithMetrics) and to the Workers (Worker.Metrics). Its
// figures are not per business (a label per business would grow without
// bound); the table has them:
//
//	SELECT business, count(*), now() - min(received_at) AS oldest
//	FROM invoicing_webhook_inbox WHERE status = 'pending' GROUP BY business
//
// # The table
//
// Migrate (or MigrationSQL, for a migration tool) creates the table
// invoicing_webhook_inbox: delivery_id, event_type, signed_at, body (the
// raw bytes as verified), received_at, status (StatusPending,
// StatusProcessed or StatusFailed), attempts, failures, last_error,
// next_attempt_at, processed_at and business ("" for Handler's rows), with
// the primary key (business, delivery_id), a partial index on the pending
// rows, and the indexes of the Inbox's listings: by time of receipt, by
// business and time, and of the failed rows by time. A table of an
// earlier version gets the listings' indexes when Migrate runs: building
// them holds inserts back meanwhile (about 3 seconds per million rows on
// a 2-core machine; inbox.sql says how to build them beforehand,
// concurrently). A table created by an earlier version, without business,
// is upgraded in place: its rows get the business "" and keep everything
// else. Building the new primary key locks the table (6 seconds for a
// million rows on a 2-core machine); replicas of the earlier version
// answer 500 to deliveries from then until they are replaced (the service
// retries them; nothing is lost). Upgrade every replica before serving
// BusinessHandler. Its times are the database's clock: processed_at is when
// the callback's success was recorded, just after it returned, and after a
// failure next_attempt_at is the Backoff counted from then. Rows are kept after processing: they are what makes a
// retry of the service a duplicate. Delete old ones at leisure, after the
// service's retries are over (about 27 hours), for instance:
//
//	DELETE FROM invoicing_webhook_inbox WHERE status = 'processed' AND processed_at < now() - interval '7 days'
package pginbox
