package pgmirror_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A replica is one mirror process (or, in-process, its equivalent): its
// webhook endpoint, workers, fetchers, backfill and reconciler.
type replica interface {
	webhookURL() string
	// stop stops the replica cleanly and checks that it stopped cleanly.
	stop(t testing.TB)
}

// inProcess is a replica running in the test's process: a Mirror with a
// pool of its own and its Handler served on a loopback port.
type inProcess struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	server *httptest.Server
}

// startInProcess starts a replica of the mirror in schema, reading the
// service at baseURL, verifying deliveries signed with secret.
func startInProcess(t testing.TB, baseURL, key, schema, secret string) *inProcess {
	t.Helper()
	c, err := newClientAt(baseURL, key)
	require.NoError(t, err)
	m := openMirror(t, testConfig(c, schema))
	v, err := webhooks.NewVerifier(secret)
	require.NoError(t, err)
	r := &inProcess{done: make(chan error, 1), server: httptest.NewServer(m.Handler(v))}
	r.url = r.server.URL + "/webhooks"
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- m.Run(ctx) }()
	return r
}

// startInProcessBusinesses starts a replica in the test's process serving
// the businesses of the database (sealed with keys), its webhook endpoints
// at its webhookURL()+"/NAME".
func startInProcessBusinesses(t testing.TB, baseURL, schema string, keys *pgmirror.Keyring) *inProcess {
	t.Helper()
	c, err := newClientAt(baseURL, "unused-each-business-has-its-key")
	require.NoError(t, err)
	cfg := testConfig(c, schema)
	cfg.Keys = keys
	m := openMirror(t, cfg)
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", m.BusinessHandler())
	r := &inProcess{done: make(chan error, 1), server: httptest.NewServer(mux)}
	r.url = r.server.URL + "/webhooks"
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- m.Run(ctx) }()
	return r
}

func (r *inProcess) webhookURL() string { return r.url }

func (r *inProcess) stop(t testing.TB) {
	r.server.Close()
	r.cancel()
	require.NoError(t, <-r.done)
}

// process is a replica running as an invoicing-mirror process.
type process struct {
	name string
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan error
}

var listening = regexp.MustCompile(`webhook endpoint listening" addr=(\S+) path=(\S+)`)

// startProcess starts the invoicing-mirror binary as a replica named name
// (also its connections' application_name) and waits until it listens.
func startProcess(t testing.TB, name, baseURL, key, schema, secret string) *process {
	t.Helper()
	return startProcessWith(t, name, schema, "INVOICING_BASE_URL="+baseURL, "INVOICING_API_KEY="+key, "INVOICING_WEBHOOK_SECRET="+secret)
}

// startProcessWith starts a replica named name, mirroring into schema, with
// env added to the test's environment.
func startProcessWith(t testing.TB, name, schema string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(mirrorBinary(t), "--listen", "127.0.0.1:0", "--schema", schema, "--coalesce", "20ms",
		"--fetch-lease", "3s", "--reconcile-interval", "1h", "--log-level", "info", "--budget", "10000",
		"--partitions", strconv.Itoa(testPartitions()))
	cmd.Env = append(append(os.Environ(), env...), "DATABASE_URL="+postgresOf(schema).URL+"&application_name="+name)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &process{name: name, cmd: cmd, logs: &syncBuffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.logs, line)
			if m := listening.FindStringSubmatch(line); m != nil {
				found <- "http://" + m[1] + m[2]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("replica %s's log:\n%s", name, tail(p.logs.String(), 40))
		}
	})
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("replica %s exited before listening (%v):\n%s", name, err, p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s not listening after 30s:\n%s", name, p.logs.String())
	}
	return p
}

func (p *process) webhookURL() string { return p.url }

// stop sends SIGTERM and checks that the process exits with status 0.
func (p *process) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "replica %s's exit after SIGTERM:\n%s", p.name, tail(p.logs.String(), 20))
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s did not stop within a minute of SIGTERM", p.name)
	}
}

// kill SIGKILLs the process and waits for it to be gone.
func (p *process) kill(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// network carries the fake service's webhook deliveries to the mirror's
// replicas as a poor network and load balancer would: each attempt goes to
// a random replica (dead ones included), and some attempts are lost
// (answered 503 without reaching a replica: the service retries on its
// schedule, later and out of order), some replies are lost (the replica
// stored the delivery, the service sees 503 and sends it again), some
// attempts are duplicated, and about 2% of the deliveries never get
// through (their every attempt is lost; only the reconciliation can make up
// for them).
//
// The fake service signs each attempt at its fake clock's time, which the
// test moves hours ahead to run the retry schedule; the network signs each
// attempt again, body and delivery id untouched, at the wall clock's time,
// so that the replicas verify deliveries with the default 5-minute
// tolerance, as in production.
type network struct {
	secret string
	// secrets, for a mirror of many businesses, are the secrets by
	// business: an attempt to /webhooks/NAME goes to a replica's
	// /webhooks/NAME, signed with NAME's secret. Set before the first
	// delivery.
	secrets map[string]string
	client  *http.Client

	mu      sync.Mutex
	rng     *rand.Rand
	targets []string

	attempts, lost, lostReplies, duplicated, neverDelivered, unreachable atomic.Int64
}

func newNetwork(t testing.TB, seed uint64) (*network, string) {
	n := &network{rng: rand.New(rand.NewPCG(seed, seed+1)), client: &http.Client{Timeout: 30 * time.Second}}
	s := httptest.NewServer(n)
	t.Cleanup(s.Close)
	return n, s.URL + "/webhooks"
}

// route adds a replica's webhook URL.
func (n *network) route(url string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.targets = append(n.targets, url)
}

// neverGetsThrough picks the deliveries that are lost for good.
func neverGetsThrough(deliveryID string) bool {
	h := sha256.Sum256([]byte(deliveryID))
	return h[0] < 5 // 5 in 256
}

func (n *network) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.attempts.Add(1)
	secret, suffix := n.secret, ""
	if n.secrets != nil {
		business := strings.TrimPrefix(r.URL.Path, "/webhooks/")
		secret, suffix = n.secrets[business], "/"+business
	}
	d := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventType(r.Header.Get(webhooks.HeaderEvent)),
		DeliveryID: r.Header.Get(webhooks.HeaderDelivery), Body: body}
	if neverGetsThrough(d.DeliveryID) {
		n.neverDelivered.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	n.mu.Lock()
	roll := n.rng.Float64()
	target := n.targets[n.rng.IntN(len(n.targets))] + suffix
	n.mu.Unlock()
	switch {
	case roll < 0.10:
		n.lost.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case roll < 0.15:
		n.forward(target, d)
		n.lostReplies.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case roll < 0.20:
		n.duplicated.Add(1)
		n.forward(target, d)
	}
	w.WriteHeader(n.forward(target, d))
}

// forward signs d now and sends it to target, and returns the status (502
// when the replica does not answer).
func (n *network) forward(target string, d webhooks.TestDelivery) int {
	d.Timestamp = time.Now()
	req, err := d.Request(target)
	if err != nil {
		return http.StatusBadGateway
	}
	resp, err := n.client.Do(req)
	if err != nil {
		n.unreachable.Add(1)
		return http.StatusBadGateway
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// gate is a proxy in front of the fake's API that can hold the invoice
// list's pages from a given page on, until released: it stops a backfill in
// the middle of its walk so that the test can kill the replica walking.
type gate struct {
	proxy    *httputil.ReverseProxy
	holdFrom int
	released chan struct{}
	once     sync.Once
	holding  atomic.Int64 // requests held now
}

// newGate returns a gate in front of the service at target (a base URL
// such as an invoicingtest.Server's URL) holding invoice pages from
// holdFrom on (0: holding nothing) and the API base URL to use through it.
func newGate(t testing.TB, target string, holdFrom int) (*gate, string) {
	g := &gate{proxy: proxyTo(t, target), holdFrom: holdFrom, released: make(chan struct{})}
	if holdFrom == 0 {
		g.release()
	}
	s := httptest.NewServer(g)
	t.Cleanup(s.Close)
	t.Cleanup(g.release)
	return g, s.URL + invoicingtest.BasePath
}

// proxyTo returns a reverse proxy to the host of target (a base URL such as
// an invoicingtest.Server's URL), which does not log the requests that
// fail (those of a killed replica).
func proxyTo(t testing.TB, target string) *httputil.ReverseProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	return proxy
}

func (g *gate) release() { g.once.Do(func() { close(g.released) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	if r.URL.Path == invoicingtest.BasePath+"/invoices" && q.Get("page_size") == "100" && page >= g.holdFrom {
		g.holding.Add(1)
		select {
		case <-g.released:
			g.holding.Add(-1)
		case <-r.Context().Done(): // the replica went away
			g.holding.Add(-1)
			return
		}
	}
	g.proxy.ServeHTTP(w, r)
}
