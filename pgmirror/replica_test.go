package pgmirror_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
