package pgmirror_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These helpers run invoicing-mirror as a process of its own against a
// database the test chooses (the replica tests' startProcess uses the
// package's server).

// commandEnv is the environment of an invoicing-mirror process.
func commandEnv(baseURL, key, secret, databaseURL string) []string {
	return append(os.Environ(), "INVOICING_BASE_URL="+baseURL, "INVOICING_API_KEY="+key,
		"INVOICING_WEBHOOK_SECRET="+secret, "DATABASE_URL="+databaseURL)
}

// unbounded gives the command a request budget that never binds (the
// tests' fake answers at once), unless args run a subcommand or set one.
func unbounded(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || slices.Contains(args, "--budget") {
		return args
	}
	return append(slices.Clip(args), "--budget", "10000")
}

// runCommand runs invoicing-mirror with args to its end and returns its
// combined output and exit status.
func runCommand(t testing.TB, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(mirrorBinary(t), unbounded(args)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

// served is an invoicing-mirror process serving its webhook endpoint.
type served struct {
	cmd     *exec.Cmd
	base    string // http://host:port of --listen
	metrics string // http://host:port of --metrics, when given
	done    chan error

	mu    sync.Mutex
	lines []logLine
}

// logLine is a line the process wrote, and when the test read it.
type logLine struct {
	at   time.Time
	text string
}

var addrOf = regexp.MustCompile(`msg="invoicing-mirror: (webhook endpoint|metrics) listening" addr=(\S+)`)

// startServing starts invoicing-mirror in serve mode with args (which
// should include --listen 127.0.0.1:0) and waits until it listens (and
// serves its metrics, with --metrics).
func startServing(t testing.TB, env []string, args ...string) *served {
	t.Helper()
	withMetrics := false
	for _, a := range args {
		withMetrics = withMetrics || a == "--metrics"
	}
	p := &served{cmd: exec.Command(mirrorBinary(t), unbounded(args)...), done: make(chan error, 1)}
	p.cmd.Env = env
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	addrs := make(chan [2]string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, logLine{time.Now(), sc.Text()})
			p.mu.Unlock()
			if m := addrOf.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- [2]string{m[1], "http://" + m[2]}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("invoicing-mirror's log:\n%s", strings.Join(p.since(time.Time{}), "\n"))
		}
	})
	for p.base == "" || withMetrics && p.metrics == "" {
		select {
		case a := <-addrs:
			if a[0] == "metrics" {
				p.metrics = a[1]
			} else {
				p.base = a[1]
			}
		case err := <-p.done:
			t.Fatalf("invoicing-mirror exited before listening (%v):\n%s", err, strings.Join(p.since(time.Time{}), "\n"))
		case <-time.After(30 * time.Second):
			t.Fatal("invoicing-mirror not listening after 30s")
		}
	}
	return p
}

// since returns the lines the process wrote from t on.
func (p *served) since(t time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if !l.at.Before(t) {
			out = append(out, l.text)
		}
	}
	return out
}

// stop sends SIGTERM and checks that the process exits with status 0.
func (p *served) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("invoicing-mirror did not stop within a minute of SIGTERM")
	}
}

// get returns the status and body of a GET of url, or the error.
func get(url string) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitStatus waits until a GET of url answers status.
func waitStatus(t testing.TB, url string, status int, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, func() (bool, string) {
		got, body, err := get(url)
		return got == status, fmt.Sprintf("GET %s: %d %q %v", url, got, body, err)
	})
}
