package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// replica is one receiver: an HTTP server with the pginbox Handler, and a
// Worker, with connection pools of their own as a separate process has.
type replica struct {
	number     int
	appName    string // the application_name of its connections
	url        string
	inserts    *pgxpool.Pool // the Handler's pool
	workers    *pgxpool.Pool // the Worker's pool
	closeHTTP  func()
	stopWorker context.CancelFunc
	workerDone chan error
	busy       chan struct{} // slow replica: its Worker started a delivery
	crashed    chan struct{} // slow replica: closed when it crashes
	stopOnce   sync.Once
}

// startReplica starts replica number n. A refusing replica answers 503 to
// each delivery the first time it sees it; a slow one takes 20ms a delivery
// (and is the one that crashes).
func startReplica(ctx context.Context, databaseURL, runID string, n int, v *webhooks.Verifier, refusing, slow bool) (*replica, error) {
	r := &replica{number: n, appName: fmt.Sprintf("webhook-cluster-%s-%d", runID, n),
		busy: make(chan struct{}, 1), crashed: make(chan struct{})}
	// As pginbox documents: a pool for the Handler's inserts, and one for
	// the Worker with a connection per delivery in progress, so that the
	// inserts never wait for the Worker.
	const concurrency = 2
	var err error
	if r.inserts, err = newPool(ctx, databaseURL, r.appName, 4); err != nil {
		return nil, err
	}
	if r.workers, err = newPool(ctx, databaseURL, r.appName, concurrency); err != nil {
		r.inserts.Close()
		return nil, err
	}

	handler := pginbox.Handler(r.inserts, v)
	if refusing {
		handler = refuseFirst(handler)
	}
	if r.url, r.closeHTTP, err = serve(handler); err != nil {
		r.inserts.Close()
		r.workers.Close()
		return nil, err
	}

	w := &pginbox.Worker{Pool: r.workers, Concurrency: concurrency, PollInterval: 20 * time.Millisecond,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			// The work: here, a row that commits with "processed".
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_cluster_effects (run_id, delivery_id, replica) VALUES ($1, $2, $3)`,
				runID, d.ID, n); err != nil {
				return err
			}
			if slow {
				select {
				case r.busy <- struct{}{}:
				default:
				}
				select {
				case <-time.After(20 * time.Millisecond):
				case <-r.crashed:
				}
			}
			return nil
		}}
	workerCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stopWorker, r.workerDone = stop, make(chan error, 1)
	go func() { r.workerDone <- w.Run(workerCtx) }()
	return r, nil
}

// newPool opens a pool of at most maxConns connections named appName.
func newPool(ctx context.Context, databaseURL, appName string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["application_name"] = appName
	return pgxpool.NewWithConfig(ctx, cfg)
}

// crash kills the replica as a dying process would: its HTTP connections
// drop and its database sessions end while its Worker is in the middle of a
// delivery, whose transaction PostgreSQL then rolls back. It reports whether
// a delivery was in progress (there may have been no work left).
func (r *replica) crash(ctx context.Context, admin *pgxpool.Pool) (interrupted bool, err error) {
	r.closeHTTP()
	select { // wait for the Worker to be busy, if there is work left
	case <-r.busy:
		interrupted = true
	case <-time.After(2 * time.Second):
	}
	r.stopWorker() // it claims nothing more; the delivery in progress goes on
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, r.appName); err != nil {
		return false, fmt.Errorf("crashing replica %d: %w", r.number, err)
	}
	close(r.crashed) // its callback returns; recording the outcome fails
	r.stop()
	return interrupted, nil
}

// stop stops the replica's Worker and server and closes its pools.
func (r *replica) stop() {
	r.stopOnce.Do(func() {
		r.stopWorker()
		<-r.workerDone
		r.closeHTTP()
		r.inserts.Close()
		r.workers.Close()
	})
}

// refuseFirst answers 503 to each delivery the first time it sees its id.
func refuseFirst(h http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(webhooks.HeaderDelivery)
		mu.Lock()
		first := !seen[id]
		seen[id] = true
		mu.Unlock()
		if first {
			http.Error(w, "overloaded, try later", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serve serves h on a free loopback port and returns its URL and a function
// that closes the server and its connections at once.
func serve(h http.Handler) (url string, closeFn func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	var once sync.Once
	return "http://" + ln.Addr().String(), func() { once.Do(func() { srv.Close() }) }, nil
}
