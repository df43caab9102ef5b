package redisdedup_test

import (
	"bufio"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
)

// The figures of the outage test: how long Redis is down, the replicas'
// lease (longer than the outage, as the default lease is: the claims held
// when Redis went down are still in Redis when it comes back), and how many
// requests are in flight at a time.
const (
	outage      = 12 * time.Second
	outageLease = 15 * time.Second
	outageSends = 16
)

// Redis crashes (SIGKILL) under load and stays down for 12 seconds, longer
// than a release used to go on trying, while three replica processes
// release the deliveries they were processing. Each release goes on in the
// background until Redis is back, so once the claims' leases have ended,
// the service's copies of the deliveries acknowledged are not processed
// again and its retries of the others are processed once: no delivery is
// processed twice. The effects are counted from files the replicas append
// to, which Redis going away does not touch.
func TestOutageDuringReleasesProcessesNothingTwice(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := prefix(t)
	dir := t.TempDir()
	var urls, effects []string
	for i := range 3 {
		path := filepath.Join(dir, string(rune('a'+i)))
		effects = append(effects, path)
		urls = append(urls, startReplica(t, srv.Addr, p, outageLease, path).url)
	}
	client := &http.Client{Timeout: 30 * time.Second} // as the service waits
	t.Cleanup(client.CloseIdleConnections)
	send := func(d webhooktest.Delivery) int {
		req, err := d.Request(urls[rand.IntN(len(urls))])
		if err != nil {
			t.Error(err)
			return 0
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0 // no answer: the service retries
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	l := startLoad(outageSends, send)
	killed, back := l.through(t, outageSends, srv.Kill, outage, srv.Start) // Redis crashes while deliveries are processed and released
	all := l.end()

	statuses := map[int]int{}
	var took []time.Duration
	for _, a := range all {
		statuses[a.status]++
		took = append(took, a.took)
	}
	slices.Sort(took)
	t.Logf("%d requests, %d sent while Redis was down for %v: answers by status %v; answer time max %v, p99 %v",
		len(all), len(sentBetween(all, killed, back)), outage, statuses, took[len(took)-1].Round(time.Millisecond), took[len(took)*99/100].Round(time.Millisecond))

	// The claims held when Redis went down end with their lease (or their
	// release); then the service sends a copy of each delivery
	// acknowledged, and retries the others until they are.
	rdb := clientOf(t, srv.Addr)
	require.Eventually(t, func() bool {
		n, err := claimsHeld(rdb, p)
		return err == nil && n == 0
	}, outageLease+10*time.Second, 100*time.Millisecond, "the claims held when Redis went down end")
	deadline := time.Now().Add(30 * time.Second)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range outageSends {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(all); i = int(next.Add(1)) - 1 {
				if status := resend(func() int { return send(all[i].d) }, deadline); status != http.StatusOK {
					t.Errorf("delivery %s still answered %d", all[i].d.ID, status)
					return
				}
			}
		})
	}
	wg.Wait()

	processed := map[string]int{}
	for _, path := range effects {
		f, err := os.Open(path)
		require.NoError(t, err)
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			processed[lines.Text()]++
		}
		require.NoError(t, lines.Err())
		f.Close()
	}
	twice := 0
	for _, a := range all {
		switch n := processed[a.d.ID]; {
		case n > 1:
			twice++
		case n == 0:
			t.Errorf("delivery %s acknowledged, never processed", a.d.ID)
		}
	}
	t.Logf("%d deliveries (%d acknowledged before the copies), %d processed more than once", len(all), statuses[http.StatusOK], twice)
	assert.Zero(t, twice, "deliveries processed more than once")
	assert.Positive(t, statuses[http.StatusInternalServerError], "requests failed while Redis was down")
}
