package webhooktest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A Sender sends fresh deliveries to a receiver's replicas over loopback
// HTTP, as the service does, in turn to each replica; it is the body of
// paired benchmarks (internal/benchpair), where two receivers are measured
// in one loop. Create it with NewSender.
type Sender struct {
	urls   []string
	client *http.Client
	next   atomic.Int64
}

// SenderConcurrency is how many requests a Sender, and Throughput, keep in
// flight.
const SenderConcurrency = 32

// NewSender serves each of handlers over loopback HTTP until tb ends and
// returns a Sender to them.
func NewSender(tb testing.TB, handlers []http.Handler) *Sender {
	s := &Sender{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * SenderConcurrency}}}
	for _, h := range handlers {
		srv := httptest.NewServer(h)
		tb.Cleanup(srv.Close)
		s.urls = append(s.urls, srv.URL)
	}
	tb.Cleanup(s.client.CloseIdleConnections)
	return s
}

// Send sends n fresh deliveries, SenderConcurrency at a time, and returns
// once all are answered: an error for the first that was not answered 200.
func (s *Sender) Send(n int) error {
	var first atomic.Pointer[error]
	parallel(SenderConcurrency, n, func(int) bool {
		if err := s.sendOne(); err != nil {
			first.CompareAndSwap(nil, &err)
			return false
		}
		return true
	})
	if err := first.Load(); err != nil {
		return *err
	}
	return nil
}

// sendOne sends one fresh delivery to the next replica.
func (s *Sender) sendOne() error {
	req, err := Deliveries(1)[0].Request(s.urls[s.next.Add(1)%int64(len(s.urls))])
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body) // so that the connection is reused
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhooktest: delivery %s answered %d", req.Header.Get(webhooks.HeaderDelivery), resp.StatusCode)
	}
	return nil
}
