package pgmirror_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The proof of issue 18: a backfill of a business of thousands of records,
// random mutations through the fake's helpers and API during and after it,
// their webhooks delivered with duplicates, reordering, delays and losses
// (the fake's retry schedule, run on its fake clock), one reconciliation,
// and then the mirror equals the service row for row and field for field
// (compareMirror, written apart from the mirror's code), and its change
// feed, replayed from empty, rebuilds the tables (requireFeedReplays).

// proof is one run of the scenario.
type proof struct {
	invoices, quotes, mutations int
	replicas                    int
	processes                   bool // replicas are invoicing-mirror processes
	kill                        bool // SIGKILL the replica backfilling the invoices in the middle of its walk
	restartPostgres             bool // stop PostgreSQL in the middle of the mutations, start it again
	seed                        uint64
}

func (p proof) run(t *testing.T) {
	// Under -short, and in one process under the race detector (where the
	// mirror, the fake and the comparison are all instrumented), a third of
	// the size; the process variants keep the full size under -race, their
	// replicas being separate programs.
	if testing.Short() || (raceDetector && !p.processes) {
		p.invoices, p.quotes, p.mutations = 1500, 300, 600
	}
	began := time.Now()
	var laps []string
	lap := func(phase string) {
		laps = append(laps, fmt.Sprintf("%s %v", phase, time.Since(began).Round(time.Millisecond)))
	}
	srv, clock := newFake(t)
	ids := seed(t, srv, sizes{invoices: p.invoices, quotes: p.quotes, bills: p.invoices / 25, clients: 100, suppliers: 25,
		items: 40, bankTransactions: 200}, rand.New(rand.NewPCG(p.seed, 1)))
	holdFrom := 0
	if p.kill || p.restartPostgres {
		holdFrom = 13 // stop the invoices' walk with two batches written, the third in memory
	}
	gate, apiURL := newGate(t, srv, holdFrom)
	net, hookURL := newNetwork(t, p.seed)
	ep := srv.AddWebhookEndpoint(hookURL)
	net.secret = ep.Secret()

	schema := newSchemaName()
	var replicas []replica
	var processes []*process
	for i := range p.replicas {
		var r replica
		if p.processes {
			pr := startProcess(t, fmt.Sprintf("%s_replica_%d", schema, i), apiURL, srv.FullKey, schema, ep.Secret())
			processes = append(processes, pr)
			r = pr
		} else {
			r = startInProcess(t, apiURL, srv.FullKey, schema, ep.Secret())
		}
		replicas = append(replicas, r)
		net.route(r.webhookURL())
	}
	db := adminPool(t, schema)
	lap("seeded and started")

	// The mutations start with the replicas, during the backfill.
	mut := newMutator(srv, ids)
	mutated := make(chan error, 1)
	go func() {
		mutated <- mut.run(p.mutations, 4, p.seed, func(int) {
			clock.Advance(time.Minute) // the retries due run now: late, out of order, some duplicated
		})
	}()

	var killed *process
	requestsBeforeKill := 0
	if p.kill {
		holder := waitMidBackfill(t, db, schema)
		for _, pr := range processes {
			if pr.name == holder {
				killed = pr
			}
		}
		require.NotNil(t, killed, "no replica named %q holds the lock", holder)
		killed.kill(t)
		waitUntil(t, time.Minute, func() (bool, string) { // its requests held by the gate are gone with it
			return gate.holding.Load() == 0, "the killed replica's requests to end"
		})
		requestsBeforeKill = len(srv.Requests())
		gate.release()
	}
	if p.restartPostgres {
		waitMidBackfill(t, db, schema)
		require.NoError(t, server.Stop()) // the backfill, the Handlers, the Workers and the fetchers lose it at once
		restarted := false
		defer func() { // the package's other tests share the server: a failure below must not leave it down
			if !restarted {
				_ = server.Start()
			}
		}()
		gate.release()
		stoppedAt := mut.count.Load()
		waitUntil(t, 2*time.Minute, func() (bool, string) {
			return mut.count.Load() >= stoppedAt+int64(p.mutations/10), "mutations while PostgreSQL is down"
		})
		require.NoError(t, server.Start())
		restarted = true
	}
	require.NoError(t, <-mutated)
	lap("mutated")

	// The service's last retries, over a day and more of its clock; then
	// every delivery has succeeded or failed for good.
	clock.Advance(27 * time.Hour)
	deliveries := ep.Deliveries()
	var retried, failed, refused int
	for _, d := range deliveries {
		require.NotEqual(t, invoicingtest.DeliveryPending, d.Status, "delivery %s", d.ID)
		if len(d.Attempts) > 1 {
			retried++
		}
		for _, a := range d.Attempts {
			if a.StatusCode == http.StatusInternalServerError {
				refused++ // a replica could not store it
			}
		}
		if d.Status == invoicingtest.DeliveryFailed {
			failed++
		}
	}
	lap("retries run")
	waitBackfilled(t, db, 2*time.Minute)
	waitDrained(t, db, 2*time.Minute)
	lap("drained")

	// One reconciliation, by a mirror of its own (a replica would run it
	// on its interval).
	reconciler := openMirror(t, testConfig(sdkClient(srv), schema))
	corrected, err := reconciler.Reconcile(context.Background())
	require.NoError(t, err)
	waitDrained(t, db, 2*time.Minute)
	lap("reconciled")

	records := requireMirrorEqual(t, srv, schema)
	lap("compared")
	// The change feed, replayed from empty, rebuilds the tables: no change
	// missing, none duplicated, whatever the faults.
	causes := requireFeedReplays(t, reconciler, db)
	lap("feed replayed")
	for _, r := range replicas {
		if r != replica(killed) {
			r.stop(t) // cleanly: a clean exit
		}
	}
	if p.kill {
		after := listPages(srv.Requests()[requestsBeforeKill:], "/invoices")
		require.NotEmpty(t, after)
		assert.Equal(t, 11, after[0], "another replica goes on from the killed one's checkpoint")
	}
	t.Logf("%d records compared equal after %d mutations (%s) in %v", records, mut.count.Load(), mut.summary(),
		time.Since(began).Round(time.Millisecond))
	t.Logf("deliveries: %d, retried %d, failed for good %d, attempts refused by a replica %d; network: %d attempts, %d lost, %d replies lost, %d duplicated, %d never delivered, %d to a dead replica",
		len(deliveries), retried, failed, refused, net.attempts.Load(), net.lost.Load(), net.lostReplies.Load(), net.duplicated.Load(),
		net.neverDelivered.Load(), net.unreachable.Load())
	t.Logf("the reconciliation corrected %v", corrected)
	t.Logf("the change feed replayed to the tables: changes by cause %v", causes)
	t.Logf("time: %s", strings.Join(laps, ", "))

	// The run exercised what it claims to.
	assert.Positive(t, net.lost.Load())
	assert.Positive(t, net.lostReplies.Load())
	assert.Positive(t, net.duplicated.Load())
	assert.Positive(t, failed, "deliveries lost for good, for the reconciliation to make up")
	assert.Positive(t, corrected["quotes"]+corrected["bills"]+corrected["bank_accounts"], "event-less changes corrected")
	if p.restartPostgres {
		assert.Positive(t, refused, "deliveries refused (500) while PostgreSQL was down")
	}
	if p.kill {
		assert.Positive(t, net.unreachable.Load(), "deliveries sent to the dead replica")
	}
}

// waitMidBackfill waits until a replica has written two batches of the
// invoices (the checkpoint says page 11) and is held by the gate in the
// middle of its walk, and returns the application_name of the replica
// holding the invoices' backfill lock.
func waitMidBackfill(t *testing.T, db *pgxpool.Pool, schema string) string {
	t.Helper()
	var holder string
	waitUntil(t, 2*time.Minute, func() (bool, string) {
		var next int
		err := db.QueryRow(context.Background(), `SELECT next_page FROM mirror_backfill WHERE resource = 'invoices'`).Scan(&next)
		if err != nil || next < 11 {
			return false, "two batches of invoices written"
		}
		err = db.QueryRow(context.Background(), `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
			"pgmirror:"+schema+":backfill:invoices").Scan(&holder)
		return err == nil, "the invoices' backfill lock held"
	})
	require.Equal(t, 11, count(t, db, `SELECT next_page FROM mirror_backfill WHERE resource = 'invoices'`))
	return holder
}

func TestProofInOneProcess(t *testing.T) {
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 1, seed: 18}.run(t)
}

func TestProofWithThreeProcessesOneKilled(t *testing.T) {
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 3, processes: true, kill: true, seed: 19}.run(t)
}

func TestProofWithPostgresRestarted(t *testing.T) {
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 2, processes: true, restartPostgres: true, seed: 20}.run(t)
}
