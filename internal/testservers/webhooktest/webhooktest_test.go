package webhooktest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The deliveries are distinct contact.created events that webhooks.Handler
// accepts, through Send and through Request over HTTP.
func TestDeliveriesAreSignedContactCreatedEvents(t *testing.T) {
	var seen Counter
	h := webhooks.Handler(NewVerifier(t), func(_ context.Context, d *webhooks.Delivery) error {
		e, ok := d.Event.(*webhooks.ContactCreated)
		if !ok || e.ContactID != d.ID {
			return fmt.Errorf("event %#v of delivery %s", d.Event, d.ID)
		}
		seen.Add(d.ID)
		return nil
	})
	deliveries := Deliveries(3)
	for _, d := range deliveries {
		if s := d.Send(h); s != http.StatusOK {
			t.Errorf("Send: status %d", s)
		}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := deliveries[0].Request(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Request: status %d", resp.StatusCode)
	}
	if seen.Len() != 3 {
		t.Errorf("%d distinct deliveries processed, want 3", seen.Len())
	}
	if n := seen.Count(deliveries[0].ID); n != 2 {
		t.Errorf("the first delivery processed %d times, want 2 (no Deduper)", n)
	}
}

// Storm sends 409s again only when told to.
func TestStormRetriesConflictsWhenAsked(t *testing.T) {
	var mu sync.Mutex
	tries := map[string]int{}
	conflictFirst := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // odd tries of an id: 409
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get(webhooks.HeaderDelivery)
		if tries[id]++; tries[id]%2 == 1 {
			w.WriteHeader(http.StatusConflict)
		}
	})
	attempts := Attempts(Deliveries(10), 2)
	if len(attempts) != 20 {
		t.Fatalf("%d attempts, want 20", len(attempts))
	}
	statuses, conflicts := Storm{Handlers: []http.Handler{conflictFirst}, Concurrency: 4, RetryConflicts: true}.Run(attempts)
	if conflicts != 20 || strings.Count(fmt.Sprint(statuses), "200") != 20 {
		t.Errorf("with RetryConflicts: %d conflicts, statuses %v", conflicts, statuses)
	}
	statuses, conflicts = Storm{Handlers: []http.Handler{conflictFirst}, Concurrency: 4}.Run(attempts)
	if conflicts != 0 || strings.Count(fmt.Sprint(statuses), "409") != 10 {
		t.Errorf("without: %d conflicts, statuses %v", conflicts, statuses)
	}
}

// Outage passes a receiver that answers 500 while its store is down, and
// fails one that acknowledges a delivery then. No request is in flight
// while the store stops, and every delivery acknowledged is sent again
// before Answered is called.
func TestOutage(t *testing.T) {
	var down atomic.Bool
	var inFlight atomic.Int64
	var received Counter
	receiver := func(lies bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlight.Add(1)
			defer inFlight.Add(-1)
			received.Add(r.Header.Get(webhooks.HeaderDelivery))
			if down.Load() && !lies {
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
	}
	outage := func(lies bool) Outage {
		return Outage{Handlers: []http.Handler{receiver(false), receiver(lies)}, Store: "the fake store",
			Stop: func() error {
				if n := inFlight.Load(); n != 0 {
					t.Errorf("the store stopped with %d requests in flight", n)
				}
				down.Store(true)
				return nil
			},
			Start: func() error { down.Store(false); return nil }}
	}

	var answered atomic.Int64
	o := outage(false)
	o.Answered = func(d Delivery, status int) {
		answered.Add(1)
		want := map[int]int{http.StatusOK: 2, http.StatusInternalServerError: 1}[status] // a copy of each one acknowledged
		if n := received.Count(d.ID); n != want {
			t.Errorf("delivery %s answered %d was received %d times before Answered, want %d", d.ID, status, n, want)
		}
	}
	sent := o.Run(t, Deliveries(1000))
	if len(sent) < 200 || int(answered.Load()) != len(sent) {
		t.Errorf("%d deliveries sent, %d answered", len(sent), answered.Load())
	}

	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { // Run may end r's goroutine with Fatalf
		defer close(done)
		outage(true).Run(r, Deliveries(1000))
	}()
	<-done
	if got := r.errors.String(); !strings.Contains(got, "acknowledged while the fake store was down") ||
		!strings.Contains(got, "every one should fail") {
		t.Errorf("a receiver that acknowledges while its store is down passes; errors:\n%s", got)
	}
}

// Outage fails a receiver that does not acknowledge a copy of a delivery it
// acknowledged before the outage.
func TestOutageSendsCopiesOfAcknowledgedDeliveries(t *testing.T) {
	var down, restarted atomic.Bool
	var acknowledged sync.Map // delivery ids acknowledged before the outage
	refusesCopies := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(webhooks.HeaderDelivery)
		_, copied := acknowledged.Load(id)
		switch {
		case down.Load(), restarted.Load() && copied:
			w.WriteHeader(http.StatusInternalServerError)
		case !restarted.Load():
			acknowledged.Store(id, true)
		}
	})
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Outage{Handlers: []http.Handler{refusesCopies}, Store: "the fake store",
			Stop:     func() error { down.Store(true); return nil },
			Start:    func() error { down.Store(false); restarted.Store(true); return nil },
			Recovery: 50 * time.Millisecond}.Run(r, Deliveries(300))
	}()
	<-done
	if got := r.errors.String(); !strings.Contains(got, "acknowledged before the fake store stopped, still not acknowledged 50ms after it came back") {
		t.Errorf("copies were not checked; errors:\n%s", got)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors testkit.Buffer
}

func (r *recorder) Errorf(format string, args ...any) { fmt.Fprintf(&r.errors, format+"\n", args...) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Logf(string, ...any) {}
