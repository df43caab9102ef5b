package testservers

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Redis is a redis-server started by StartRedis. It keeps its data in
// memory only: nothing survives Stop.
type Redis struct {
	// Addr is the server's host:port on 127.0.0.1.
	Addr string

	bin  string
	dir  string
	proc *process
}

// StartRedis starts redis-server (found on PATH) on a free loopback port,
// without persistence, and waits until it answers PING. The error says what
// to install when redis-server is missing. Call Close when done.
func StartRedis() (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("testservers: redis-server is not on PATH; install it with `apt-get install redis-server` (as .ci/install-tools does): %w", err)
	}
	dir, err := os.MkdirTemp("", "testservers-redis-")
	if err != nil {
		return nil, fmt.Errorf("testservers: %w", err)
	}
	r := &Redis{bin: bin, dir: dir}
	// Another process may take the free port before the server binds it:
	// try a few ports.
	for range 3 {
		var port int
		if port, err = freePort(); err != nil {
			break
		}
		r.Addr = addr(port)
		if err = r.Start(); err == nil {
			return r, nil
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

// Start starts the server again at the same address after Stop, with an
// empty data set. It returns an error if the server is already running.
func (r *Redis) Start() error {
	if r.proc != nil {
		return fmt.Errorf("testservers: redis-server at %s is already running", r.Addr)
	}
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return err
	}
	args := []string{
		"--bind", host, "--port", port, "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
	}
	proc, err := startProcess(r.bin, args, r.dir, filepath.Join(r.dir, "redis.log"), nil, syscall.SIGTERM)
	if err != nil {
		return err
	}
	if err := proc.waitReady(r.ping); err != nil {
		_ = proc.stop(syscall.SIGKILL)
		return err
	}
	r.proc = proc
	return nil
}

// Stop shuts the server down, as a crash or a maintenance would: clients get
// connection errors until Start. Stopping a stopped server does nothing.
func (r *Redis) Stop() error {
	if r.proc == nil {
		return nil
	}
	err := r.proc.stop(syscall.SIGTERM)
	r.proc = nil
	return err
}

// Close stops the server and removes its directory.
func (r *Redis) Close() error {
	err := r.Stop()
	if rerr := os.RemoveAll(r.dir); err == nil {
		err = rerr
	}
	return err
}

// ping returns nil when the server answers PING with PONG.
func (r *Redis) ping() error {
	conn, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
