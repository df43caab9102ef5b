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
// Worker, with a connection pool of its own as a separate process has.
type replica struct {
	number     int
	appName    string // the application_name of its connections
	url        string
	pool       *pgxpool.Pool
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
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 8
	cfg.ConnConfig.RuntimeParams["application_name"] = r.appName
	if r.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, err
	}

	handler := pginbox.Handler(r.pool, v)
	if refusing {
		handler = refuseFirst(handler)
	}
	if r.url, r.closeHTTP, err = serve(handler); err != nil {
		r.pool.Close()
		return nil, err
	}

	w := &pginbox.Worker{Pool: r.pool, Concurrency: 2, PollInterval: 20 * time.Millisecond,
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

// stop stops the replica's Worker and server and closes its pool.
func (r *replica) stop() {
	r.stopOnce.Do(func() {
		r.stopWorker()
		<-r.workerDone
		r.closeHTTP()
		r.pool.Close()
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
