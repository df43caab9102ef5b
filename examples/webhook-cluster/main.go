// Command webhook-cluster runs a webhook receiver as several replicas that
// share one PostgreSQL inbox (package pginbox), feeds it the deliveries of
// the invoicingtest fake service with their retry schedule, and prints how
// many deliveries were sent, retried and processed exactly once.
//
//	INVOICING_EXAMPLE_DATABASE_URL=postgres://user:pass@localhost:5432/db go run . -replicas 3 -events 60
//
// The replicas are HTTP servers on loopback, each with the pginbox Handler
// and a Worker, behind a small round-robin front. Things go wrong on
// purpose: the second replica refuses each delivery the first time it sees
// it, as an overloaded replica would, and the last replica crashes halfway,
// its database connections cut while its Worker is busy. The service retries
// what was refused (after 1 min, 5 min, 30 min, 2 h and 24 h), on a fake
// clock that the program advances, so the run takes seconds. Each delivery
// must still be processed exactly once: the Workers record their work in the
// table webhook_cluster_effects in the transaction that marks the delivery
// processed, and the program counts it there.
//
// It creates the tables invoicing_webhook_inbox and webhook_cluster_effects
// if they do not exist, and needs a role that can end its own sessions
// (pg_terminate_backend) to simulate the crash.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// databaseEnv names the environment variable holding the database URL.
const databaseEnv = "INVOICING_EXAMPLE_DATABASE_URL"

func main() {
	replicas := flag.Int("replicas", 3, "number of receiver replicas (at least 3)")
	events := flag.Int("events", 60, "number of events the fake service raises")
	flag.Parse()

	url := os.Getenv(databaseEnv)
	if url == "" {
		fmt.Fprintf(os.Stderr, "webhook-cluster: %s is not set; set it to a PostgreSQL URL, e.g. postgres://user:pass@localhost:5432/db\n", databaseEnv)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, config{databaseURL: url, replicas: *replicas, events: *events}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-cluster:", err)
		os.Exit(1)
	}
}

// config is what run needs.
type config struct {
	databaseURL string
	replicas    int
	events      int
}

// report is what a run counted.
type report struct {
	sent          int         // deliveries the service made
	attempts      int         // attempts in all, first ones and retries
	retried       int         // deliveries that needed more than one attempt
	acknowledged  int         // deliveries the service saw succeed
	processedOnce int         // deliveries whose work was done exactly once
	processedMore int         // deliveries whose work was done more than once
	perReplica    map[int]int // replica number (from 1) -> deliveries it processed

	crashInterrupted bool // the crash cut a delivery in progress
}

// print writes the report for people.
func (r report) print(out io.Writer, replicas int) {
	crash := "with no delivery in progress"
	if r.crashInterrupted {
		crash = "in the middle of a delivery, which another replica redid"
	}
	fmt.Fprintf(out, "replicas: %d (replica 2 refuses each delivery the first time; replica %d crashed halfway, %s)\n", replicas, replicas, crash)
	fmt.Fprintf(out, "deliveries sent: %d\n", r.sent)
	fmt.Fprintf(out, "deliveries retried: %d (%d attempts in all)\n", r.retried, r.attempts)
	fmt.Fprintf(out, "deliveries acknowledged: %d\n", r.acknowledged)
	fmt.Fprintf(out, "processed exactly once: %d of %d (more than once: %d)\n", r.processedOnce, r.sent, r.processedMore)
	fmt.Fprint(out, "processed per replica:")
	for i := 1; i <= replicas; i++ {
		fmt.Fprintf(out, " %d=%d", i, r.perReplica[i])
	}
	fmt.Fprintln(out)
}
