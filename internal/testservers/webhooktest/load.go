package webhooktest

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Storm sends attempts to a receiver's replicas, as the service does behind a
// load balancer: Concurrency at a time, each to a random one of Handlers.
type Storm struct {
	// Handlers are the replicas.
	Handlers []http.Handler
	// Concurrency is how many attempts are in flight at a time.
	Concurrency int
	// RetryConflicts sends an attempt answered 409 Conflict (in flight on
	// another replica) again a millisecond later, as the service retries it,
	// until it is answered otherwise.
	RetryConflicts bool
}

// Run sends every attempt and returns the final answers in the order of
// attempts, and how many 409s were sent again.
func (s Storm) Run(attempts []Delivery) (statuses []int, conflicts int) {
	statuses = make([]int, len(attempts))
	var conflicted atomic.Int64
	parallel(s.Concurrency, len(attempts), func(i int) bool {
		for {
			statuses[i] = attempts[i].Send(s.Handlers[rand.IntN(len(s.Handlers))])
			if !s.RetryConflicts || statuses[i] != http.StatusConflict {
				return true
			}
			conflicted.Add(1)
			time.Sleep(time.Millisecond)
		}
	})
	return statuses, int(conflicted.Load())
}

// An Outage run's numbers: after outageStopAfter answers the senders are
// held, the store stops, and outageAfterStop more requests are sent.
const (
	outageSenders   = 8
	outageStopAfter = 100
	outageAfterStop = 100
)

// Outage sends deliveries to a receiver's replicas while the store they
// depend on goes away mid-run, and checks the receiver's promise to the
// service: no delivery is acknowledged (2xx) unless it was made safe, so that
// the service's retries, once the store is back, leave nothing undone, and a
// copy of a delivery already acknowledged is not processed again.
type Outage struct {
	// Handlers are the replicas; delivery i is sent to
	// Handlers[i%len(Handlers)].
	Handlers []http.Handler
	// Stop stops the store mid-run and must return only once the store is
	// down (it no longer answers); Start starts it again after the run.
	Stop, Start func() error
	// Store names the store in messages, such as "Redis".
	Store string
	// Answered, when not nil, is called with each delivery answered 200 or
	// 500 and its answer, once the store is back and copies of the
	// deliveries acknowledged were sent again, and before the service's
	// retries: the store's own checks of what the answer means (such as
	// "processed exactly once").
	Answered func(d Delivery, status int)
	// Recovery is how long after Start the receiver may take to acknowledge
	// the deliveries sent again (its store client may need a moment to
	// reconnect); 10s when zero.
	Recovery time.Duration
}

// Run sends deliveries from 8 senders, one at a time each. After the first
// 100 answers it holds the senders, waits for the requests in flight to be
// answered, stops the store, and lets the senders go on until 100 more
// requests were sent: every request is sent either before Stop was called
// or after it returned, whatever the timing. It then starts the store again
// and sends a copy of every delivery acknowledged, as the service may (a
// manual retry), until it is answered 200; a store that lost its record of
// one (it keeps nothing across a restart, or the record was never written)
// processes it again, which Answered and the caller's checks see. Last, as
// the service's retries, it sends every delivery not acknowledged again
// until it is, and returns the deliveries that were sent.
//
// It fails t if Stop or Start fails, if a delivery sent after the stop was
// acknowledged or any of those 100 was answered other than 500, if an
// answer was neither 200 nor 500, if fewer than 100 deliveries were
// acknowledged, or if a copy or a retry was still not acknowledged Recovery
// after Start. A cleanup of t starts the store, for the tests that follow,
// if Run ended early.
func (o Outage) Run(t testing.TB, deliveries []Delivery) (sent []Delivery) {
	t.Helper()
	t.Cleanup(func() { _ = o.Start() })
	type answer struct {
		status    int  // 0: not sent
		afterStop bool // the request was sent after the store had stopped
	}
	answers := make([]answer, len(deliveries))
	handler := func(i int) http.Handler { return o.Handlers[i%len(o.Handlers)] }
	var gate sync.RWMutex // held for reading by each send, for writing by the stop
	var stopped atomic.Bool
	var answered, sentAfterStop atomic.Int64
	parallel(outageSenders, len(deliveries), func(i int) bool {
		gate.RLock()
		afterStop := stopped.Load()
		if afterStop && sentAfterStop.Add(1) > outageAfterStop {
			gate.RUnlock()
			return false
		}
		answers[i] = answer{status: deliveries[i].Send(handler(i)), afterStop: afterStop}
		gate.RUnlock()
		if answered.Add(1) == outageStopAfter { // mid-run: hold the senders until the store is down
			gate.Lock()
			if err := o.Stop(); err != nil {
				t.Errorf("stopping %s: %v", o.Store, err)
			}
			stopped.Store(true)
			gate.Unlock()
		}
		return true
	})
	if err := o.Start(); err != nil {
		t.Fatalf("starting %s again: %v", o.Store, err)
	}
	recovery := o.Recovery
	if recovery == 0 {
		recovery = 10 * time.Second
	}
	deadline := time.Now().Add(recovery)

	var acknowledged, failedAfterStop int
	for i, a := range answers {
		d := deliveries[i]
		switch a.status {
		case 0: // not sent
			continue
		case http.StatusOK:
			acknowledged++
			if a.afterStop {
				t.Errorf("delivery %s acknowledged while %s was down", d.ID, o.Store)
			}
			if !sendUntilAcknowledged(d, handler(i+1), deadline) { // a copy, to another replica
				t.Fatalf("a copy of delivery %s, acknowledged before %s stopped, still not acknowledged %v after it came back", d.ID, o.Store, recovery)
			}
		case http.StatusInternalServerError:
			if a.afterStop {
				failedAfterStop++
			}
		default:
			t.Errorf("delivery %s answered %d", d.ID, a.status)
		}
		sent = append(sent, d)
	}
	if o.Answered != nil {
		for i, a := range answers {
			if a.status == http.StatusOK || a.status == http.StatusInternalServerError {
				o.Answered(deliveries[i], a.status)
			}
		}
	}
	t.Logf("%d acknowledged before %s stopped, %d answered 500 after", acknowledged, o.Store, failedAfterStop)
	if acknowledged < outageStopAfter {
		t.Errorf("%d deliveries acknowledged before %s stopped, want at least %d", acknowledged, o.Store, outageStopAfter)
	}
	if failedAfterStop != outageAfterStop {
		t.Errorf("%d of the %d requests sent after %s stopped answered 500: every one should fail", failedAfterStop, outageAfterStop, o.Store)
	}

	for i, a := range answers { // the service's retries, once the store is back
		if a.status != 0 && a.status != http.StatusOK && !sendUntilAcknowledged(deliveries[i], handler(i), deadline) {
			t.Fatalf("delivery %s still not acknowledged %v after %s came back", deliveries[i].ID, recovery, o.Store)
		}
	}
	return sent
}

// sendUntilAcknowledged sends d to h until it is answered 200, as the
// service retries it, and returns false if it was not by deadline.
func sendUntilAcknowledged(d Delivery, h http.Handler, deadline time.Time) bool {
	for ; d.Send(h) != http.StatusOK; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// Throughput is the body of a benchmark of deliveries acknowledged per
// second: it serves each of handlers over loopback HTTP and sends them b.N
// fresh deliveries in turn, 32 requests at a time, failing b on an answer
// other than 200, and reports deliveries/s. The caller then checks what the
// b.N deliveries left in its store.
func Throughput(b *testing.B, handlers []http.Handler) {
	var urls []string
	for _, h := range handlers {
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	var sent atomic.Int64

	b.SetParallelism(32 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, err := Deliveries(1)[0].Request(urls[sent.Add(1)%int64(len(urls))])
			if err != nil {
				b.Error(err)
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// parallel calls fn with every i below n, from workers goroutines, and
// returns when they are done; a goroutine stops early when fn returns false.
func parallel(workers, n int, fn func(i int) bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if !fn(i) {
					return
				}
			}
		}()
	}
	wg.Wait()
}
