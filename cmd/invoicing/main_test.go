package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive the built binary as a user would: TestMain builds it
// once, and each test runs it with os/exec, reading what it prints. Every
// server involved listens on 127.0.0.1.

// binary is the path of the built tool.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "invoicing-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "invoicing")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the invoicing command:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is how a run of the tool ended.
type result struct {
	code           int
	stdout, stderr string
}

// baseEnv is the environment of every run: the test process's, without
// the tool's own variables, so that a developer's settings cannot leak in.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INVOICING_") && !strings.HasPrefix(kv, "COLUMNS=") {
			env = append(env, kv)
		}
	}
	return env
}

// toolCommand returns the tool's command line with env added to baseEnv.
func toolCommand(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(baseEnv(), env...)
	return cmd
}

// run runs the tool to its end (within 20 seconds). When env sets
// INVOICING_API_KEY (or a business's INVOICING_API_KEY_NAME), it also
// checks that the key appears in none of the output, whatever the outcome.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runIn(t, "", env, args...)
}

// runIn is run in the directory dir ("" for the test's).
func runIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := toolCommand(ctx, env, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	r := result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	for _, kv := range env {
		if name, key, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "INVOICING_API_KEY") && key != "" {
			assert.NotContains(t, r.stdout, key, "invoicing %v printed the API key on stdout", args)
			assert.NotContains(t, r.stderr, key, "invoicing %v printed the API key on stderr", args)
		}
	}
	return r
}

// requireCode fails with the run's output when its exit code differs.
func (r result) requireCode(t *testing.T, want int) result {
	t.Helper()
	require.Equal(t, want, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	return r
}

// proc is the tool running in the background (mock or listen).
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string // stdout, line by line; closed at EOF
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// start starts the tool in the background; it is killed when the test ends
// if it is still running.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: toolCommand(context.Background(), env, args...), lines: make(chan string, 1000), done: make(chan struct{})}
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	p.cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	require.NoError(t, p.cmd.Start())
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// waitFor reads stdout lines until one contains s and returns it; the
// lines before it are returned too.
func (p *proc) waitFor(s string) (line string, before []string) {
	p.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("invoicing %v ended before printing %q; read:\n%s\nstderr:\n%s", p.cmd.Args[1:], s, strings.Join(before, "\n"), p.stderrText())
			}
			if strings.Contains(l, s) {
				return l, before
			}
			before = append(before, l)
		case <-timeout:
			p.t.Fatalf("invoicing %v did not print %q within 10s; read:\n%s", p.cmd.Args[1:], s, strings.Join(before, "\n"))
		}
	}
}

// stop interrupts the process as Ctrl-C would and returns its exit code and
// the rest of its stdout.
func (p *proc) stop() (int, string) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(os.Interrupt))
	var rest []string
	for l := range p.lines {
		rest = append(rest, l)
	}
	err := p.cmd.Wait()
	close(p.done)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(p.t, err)
	}
	return p.cmd.ProcessState.ExitCode(), strings.Join(rest, "\n")
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}
