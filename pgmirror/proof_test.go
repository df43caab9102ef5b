package pgmirror_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The proof of issue 18: a backfill of a business of thousands of records,
// random mutations through the fake's helpers and API during and after it,
// their webhooks delivered with duplicates, reordering, delays and losses
// (the fake's retry schedule, run on its fake clock), one reconciliation,
// and then the mirror equals the service row for row and field for field
// (compareMirror, written apart from the mirror's code), and its change
// feed, replayed from empty, rebuilds the tables (requireFeedReplays). A
// mirror of many businesses also has one business's Selection narrowed
// during the mutations and widened after them.

// proof is one run of the scenario.
type proof struct {
	invoices, quotes, mutations int
	replicas                    int
	businesses                  int  // more than one: a mirror of many businesses, each its own service
	processes                   bool // replicas are invoicing-mirror processes
	kill                        bool // SIGKILL the replica backfilling the invoices in the middle of its walk
	restartPostgres             bool // stop PostgreSQL in the middle of the mutations, start it again
	seed                        uint64
}

// proofBusiness is one business of a proof: its fake service, the records
// seeded, its mutations, its webhook endpoint.
type proofBusiness struct {
	name  string
	srv   *invoicingtest.Server
	clock *invoicingtest.FakeClock
	mut   *mutator
	ep    *invoicingtest.WebhookEndpoint
}

func (p proof) run(t *testing.T) {
	// Under -short, and in one process under the race detector (where the
	// mirror, the fake and the comparison are all instrumented), a third of
	// the size; the process variants keep the full size under -race, their
	// replicas being separate programs.
	if testing.Short() || (raceDetector && !p.processes) {
		p.invoices, p.quotes, p.mutations = 1500, 300, 600
	}
	multi := p.businesses > 1 // a mirror of many businesses (Config.Keys); else of one (Config.Client)
	if !multi {
		p.businesses = 1
	}
	// The faults' gate holds business 0's invoices' walk at page 13 (see
	// holdFrom): it keeps 15 pages at least, half of a mirror of many.
	if multi && (p.kill || p.restartPostgres) && p.invoices < 3000 {
		p.invoices, p.quotes, p.mutations = 3000, 600, 1000
	}
	began := time.Now()
	var laps []string
	lap := func(phase string) {
		laps = append(laps, fmt.Sprintf("%s %v", phase, time.Since(began).Round(time.Millisecond)))
	}
	// Each business its own fake service, its share of the records and of
	// the mutations; the mirror reaches them all at one base URL, the key
	// choosing the business.
	var bs []*proofBusiness
	keys := map[string]string{}   // API key → the business's service URL
	share := func(n, i int) int { // business 0 has half (its invoices' walk is the one the faults cut), the others the rest
		if p.businesses == 1 {
			return n
		}
		if i == 0 {
			return n / 2
		}
		return n / 2 / (p.businesses - 1)
	}
	for i := range p.businesses {
		srv, clock := newFake(t)
		ids := seed(t, srv, sizes{invoices: share(p.invoices, i), quotes: share(p.quotes, i), bills: share(p.invoices/25, i),
			clients: 100, suppliers: 25, items: 40, bankTransactions: 200}, p.seed, uint64(1+i))
		name := pgmirror.DefaultBusiness
		if multi {
			name = fmt.Sprintf("business%d", i)
		}
		bs = append(bs, &proofBusiness{name: name, srv: srv, clock: clock, mut: newMutator(srv, ids)})
		keys[srv.FullKey] = srv.URL
	}
	holdFrom := 0
	if p.kill || p.restartPostgres {
		holdFrom = 13 // stop the invoices' walks with two batches written, the third in memory
	}
	api := bs[0].srv.URL
	if multi {
		api = newKeyRouter(t, keys)
	}
	gate, apiURL := newGate(t, api, holdFrom)
	net, hookURL := newNetwork(t, p.seed)
	if multi {
		net.secrets = map[string]string{}
	}
	for _, b := range bs {
		if multi {
			b.ep = b.srv.AddWebhookEndpoint(hookURL + "/" + b.name)
			net.secrets[b.name] = b.ep.Secret()
		} else {
			b.ep = b.srv.AddWebhookEndpoint(hookURL)
			net.secret = b.ep.Secret()
		}
	}

	schema := newSchemaName()
	pg := server
	if p.restartPostgres { // the others, running meanwhile, keep theirs
		pg = ownPostgres(t, schema)
	}
	keyText := ""
	if multi {
		keyText = newKeyText(t, "k1")
		db := adminPool(t, schema)
		require.NoError(t, pgmirror.MigrateSchema(context.Background(), db, schema, ""))
		for _, b := range bs {
			require.NoError(t, pgmirror.NewBusinesses(db, schema, keyring(t, keyText)).Add(context.Background(),
				pgmirror.BusinessConfig{Name: b.name, APIKey: b.srv.FullKey, WebhookSecrets: []string{b.ep.Secret()}, Budget: 10000}))
		}
	}
	var replicas []replica
	var processes []*process
	for i := range p.replicas {
		var r replica
		switch name := fmt.Sprintf("%s_replica_%d", schema, i); {
		case p.processes && multi:
			pr := startProcessWith(t, name, schema, "INVOICING_BASE_URL="+apiURL, pgmirror.EnvKeys+"="+keyText)
			processes = append(processes, pr)
			r = pr
		case p.processes:
			pr := startProcess(t, name, apiURL, bs[0].srv.FullKey, schema, bs[0].ep.Secret())
			processes = append(processes, pr)
			r = pr
		case multi:
			r = startInProcessBusinesses(t, apiURL, schema, keyring(t, keyText))
		default:
			r = startInProcess(t, apiURL, bs[0].srv.FullKey, schema, bs[0].ep.Secret())
		}
		replicas = append(replicas, r)
		net.route(r.webhookURL())
	}
	db := adminPool(t, schema)
	lap("seeded and started")

	// The mutations start with the replicas, during the backfill, in every
	// business at once.
	mutated := make(chan error, 1)
	mutations := func() int64 {
		n := int64(0)
		for _, b := range bs {
			n += b.mut.count.Load()
		}
		return n
	}
	// The last tenth of the mutations waits for every backfill to be
	// complete: some changes surely happen after the backfill walked their
	// records, for the reconciliation to correct those that raise no event,
	// however fast the backfill ran. With PostgreSQL restarted, the
	// mutations from the seventh tenth wait for the outage too: some
	// surely happen while it is down.
	outage, backfilled := make(chan struct{}), make(chan struct{})
	var startOutage, endBackfill sync.Once
	t.Cleanup(func() {
		startOutage.Do(func() { close(outage) })
		endBackfill.Do(func() { close(backfilled) })
	})
	for i, b := range bs {
		if p.restartPostgres {
			b.mut.holdAfter(int64(share(p.mutations, i)*7/10), outage)
		}
		b.mut.holdAfter(int64(share(p.mutations, i)*9/10), backfilled)
	}
	go func() { // waitAllBackfilled, below, fails the test if it never is
		poll(3*time.Minute, func() (bool, string) {
			done, err := backfillsComplete(db, len(bs))
			return err == nil && done, ""
		})
		endBackfill.Do(func() { close(backfilled) })
	}()
	go func() {
		var wg sync.WaitGroup
		errs := make([]error, len(bs))
		for i, b := range bs {
			wg.Go(func() {
				workers := 4
				switch {
				case multi && i == 0:
					workers = 2
				case multi:
					workers = 1
				}
				errs[i] = b.mut.run(share(p.mutations, i), workers, p.seed+uint64(i), func(int) {
					b.clock.Advance(time.Minute) // the retries due run now: late, out of order, some duplicated
				})
			})
		}
		wg.Wait()
		mutated <- errors.Join(errs...)
	}()

	// Of a mirror of many businesses, business1's Selection is narrowed
	// while the mutations run (its clients' emails and invoices' notes
	// left out, its phones hashed: what is held rewritten, by whichever
	// replica loads it first), and widened after them (walks fill them
	// in): the comparisons below see the service whole.
	narrowed := pgmirror.Selection{Exclude: []string{"clients.email", "invoices.notes"}, Hash: []string{"clients.phone"}}
	if multi {
		waitUntil(t, 2*time.Minute, func() (bool, string) { // something to rewrite
			return count(t, db, `SELECT count(*) FROM clients WHERE business = $1 AND email IS NOT NULL`, bs[1].name) > 0, "clients with emails"
		})
		proofSelection(t, db, schema, keyText, bs[1], narrowed)
		assert.Zero(t, count(t, db, `SELECT count(*) FROM clients WHERE business = $1 AND (email IS NOT NULL OR raw ? 'email')`, bs[1].name),
			"emails left out, once the narrowed selection is recorded")
	}

	first := bs[0] // the business whose invoices' walk a fault cuts
	var killed *process
	requestsBeforeKill := 0
	if p.kill {
		holder := waitMidBackfill(t, db, schema, first.name)
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
		requestsBeforeKill = len(first.srv.Requests())
		gate.release()
	}
	if p.restartPostgres {
		waitMidBackfill(t, db, schema, first.name)
		require.NoError(t, pg.Stop()) // the backfill, the Handlers, the Workers and the fetchers lose it at once
		gate.release()
		stoppedAt := mutations()
		startOutage.Do(func() { close(outage) })
		waitUntil(t, 2*time.Minute, func() (bool, string) {
			return mutations() >= stoppedAt+int64(p.mutations/10), "mutations while PostgreSQL is down"
		})
		require.NoError(t, pg.Start())
	}
	require.NoError(t, <-mutated)
	lap("mutated")
	if multi {
		proofSelection(t, db, schema, keyText, bs[1], pgmirror.Selection{})
		lap("selection widened")
	}

	// The service's last retries, over a day and more of its clock; then
	// every delivery has succeeded or failed for good.
	var deliveries, retried, failed, refused int
	for _, b := range bs {
		b.clock.Advance(27 * time.Hour)
		for _, d := range b.ep.Deliveries() {
			deliveries++
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
	}
	lap("retries run")
	waitAllBackfilled(t, db, 2*time.Minute, len(bs))
	waitDrained(t, db, 2*time.Minute)
	lap("drained")
	// A change that raises no event, after every walk (a bank
	// transaction moves its account's balance): the reconciliation has one
	// to correct, however many of the mutator's the backfill's walks saw.
	for _, b := range bs {
		b.srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: invoicingtest.SeedSavingsBankAccountID, Date: t0,
			Description: "After the walks", Amount: decimal.NewFromInt(1)})
	}

	// One reconciliation, by a mirror of its own (a replica would run it
	// on its interval).
	var reconciler *pgmirror.Mirror
	if multi {
		c, err := newClientAt(apiURL, bs[0].srv.FullKey)
		require.NoError(t, err)
		cfg := testConfig(c, schema)
		cfg.Keys = keyring(t, keyText)
		reconciler = openMirror(t, cfg)
	} else {
		reconciler = openMirror(t, testConfig(sdkClient(bs[0].srv), schema))
	}
	corrected, err := reconciler.Reconcile(context.Background())
	require.NoError(t, err)
	waitDrained(t, db, 2*time.Minute)
	lap("reconciled")

	// Every business equals its service, and no row is under a business
	// that is not one of them.
	records := 0
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.name
		diffs, n := compareScope(t, scope{URL: b.srv.URL, Key: b.srv.FullKey, Business: b.name}, db)
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
		}
		require.Empty(t, diffs, "business %s differs from its service", b.name)
		records += n
	}
	for _, table := range mirrorTables {
		assert.Zero(t, count(t, db, `SELECT count(*) FROM `+table+` WHERE business <> ALL($1)`, names), "rows of %s under no business of the proof", table)
	}
	lap("compared")
	// The change feed, replayed from empty, rebuilds each business's
	// tables: no change missing, none duplicated, none under another
	// business, whatever the faults.
	causes := requireFeedReplays(t, reconciler, db)
	lap("feed replayed")
	// The history, whatever the faults: each record's versions follow one
	// another, and the books as of now are the tables.
	versions := requireVersionsInOrder(t, db)
	for _, b := range bs {
		diffs, _ := compareScope(t, scope{URL: b.srv.URL, Key: b.srv.FullKey, Business: b.name}, asOf{db, time.Now().Add(time.Hour)})
		require.Empty(t, diffs, "business %s as of now differs from its service", b.name)
	}
	lap("history checked")
	for _, r := range replicas {
		if r != replica(killed) {
			r.stop(t) // cleanly: a clean exit
		}
	}
	if p.kill {
		after := listPages(first.srv.Requests()[requestsBeforeKill:], "/invoices")
		require.NotEmpty(t, after)
		assert.Equal(t, 11, after[0], "another replica goes on from the killed one's checkpoint")
	}
	var summaries []string
	for _, b := range bs {
		summaries = append(summaries, b.name+": "+b.mut.summary())
	}
	t.Logf("%d records of %d business(es) compared equal after %d mutations (%s) in %v", records, len(bs), mutations(),
		strings.Join(summaries, "; "), time.Since(began).Round(time.Millisecond))
	t.Logf("deliveries: %d, retried %d, failed for good %d, attempts refused by a replica %d; network: %d attempts, %d lost, %d replies lost, %d duplicated, %d never delivered, %d to a dead replica",
		deliveries, retried, failed, refused, net.attempts.Load(), net.lost.Load(), net.lostReplies.Load(), net.duplicated.Load(),
		net.neverDelivered.Load(), net.unreachable.Load())
	t.Logf("the reconciliation corrected %v", corrected)
	t.Logf("the change feed replayed to the tables: changes by cause %v", causes)
	t.Logf("the history: %d versions, each record's in order; as of now, every business equals its service", versions)
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

// proofSelection adds the business b of a proof's mirror again with the
// Selection sel, and waits until a replica applied it.
func proofSelection(t *testing.T, db *pgxpool.Pool, schema, keyText string, b *proofBusiness, sel pgmirror.Selection) {
	t.Helper()
	require.NoError(t, pgmirror.NewBusinesses(db, schema, keyring(t, keyText)).Add(context.Background(),
		pgmirror.BusinessConfig{Name: b.name, APIKey: b.srv.FullKey, WebhookSecrets: []string{b.ep.Secret()}, Budget: 10000, Selection: sel}))
	text, err := json.Marshal(sel)
	require.NoError(t, err)
	waitUntil(t, 2*time.Minute, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM mirror_selections WHERE business = $1 AND selection @> $2::jsonb AND $2::jsonb @> selection`,
			b.name, string(text)) == 1, "the selection of " + b.name + " applied: " + string(text)
	})
}

// newKeyRouter serves the services of keys (API key → an
// invoicingtest.Server's URL) at one base URL, each request going to the
// service of its key, as the real service scopes a request to the business
// owning its key; it returns the server's URL (without the API's path).
func newKeyRouter(t testing.TB, keys map[string]string) string {
	t.Helper()
	proxies := map[string]*httputil.ReverseProxy{}
	for key, target := range keys {
		proxies["Bearer "+key] = proxyTo(t, target)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy, ok := proxies[r.Header.Get("Authorization")]
		if !ok {
			http.Error(w, `{"detail":"Invalid or missing API key"}`, http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// waitMidBackfill waits until a replica has written two batches of the
// invoices of business (the checkpoint says page 11) and is held by the
// gate in the middle of its walk, and returns the application_name of the
// replica holding the invoices' backfill lock.
func waitMidBackfill(t *testing.T, db *pgxpool.Pool, schema, business string) string {
	t.Helper()
	var holder string
	waitUntil(t, 2*time.Minute, func() (bool, string) {
		var next int
		err := db.QueryRow(context.Background(), `SELECT next_page FROM mirror_backfill WHERE business = $1 AND resource = 'invoices'`,
			business).Scan(&next)
		if err != nil || next < 11 {
			return false, "two batches of invoices written"
		}
		err = db.QueryRow(context.Background(), `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
			"pgmirror:"+schema+":backfill:"+business+":invoices").Scan(&holder)
		return err == nil, "the invoices' backfill lock held"
	})
	require.Equal(t, 11, count(t, db, `SELECT next_page FROM mirror_backfill WHERE business = $1 AND resource = 'invoices'`, business))
	return holder
}

func TestProofInOneProcess(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 1, seed: 18}.run(t)
}

func TestProofWithThreeProcessesOneKilled(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 3, processes: true, kill: true, seed: 19}.run(t)
}

func TestProofWithPostgresRestarted(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 2, processes: true, restartPostgres: true, seed: 20}.run(t)
}

// The proofs with five businesses in one mirror: every business equal to
// its own service, no row of one under another, each one's change feed
// complete.
func TestProofOfFiveBusinessesInOneProcess(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 1, businesses: 5, seed: 25}.run(t)
}

func TestProofOfFiveBusinessesWithThreeProcessesOneKilled(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 3, processes: true, kill: true, businesses: 5, seed: 26}.run(t)
}

func TestProofOfFiveBusinessesWithPostgresRestarted(t *testing.T) {
	t.Parallel()
	proof{invoices: 5000, quotes: 1000, mutations: 2000, replicas: 2, processes: true, restartPostgres: true, businesses: 5, seed: 27}.run(t)
}
