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

// Redis is a redis-server started by StartRedis. By default it keeps its
// data the way a production Redis that must not forget does: in an
// append-only file written and fsynced before each write is answered, so
// that every write it acknowledged survives Stop, Kill and Start.
type Redis struct {
	// Addr is the server's host:port on 127.0.0.1.
	Addr string

	bin     string
	dir     string
	options []string
	proc    *process
}

// redisPersistence is the configuration StartRedis starts from: an
// append-only file fsynced at every write, no RDB snapshots.
var redisPersistence = []string{"--appendonly", "yes", "--appendfsync", "always", "--save", ""}

// StartRedis starts redis-server (found on PATH) on a free loopback port,
// with the append-only file on and fsynced at every write (appendonly yes,
// appendfsync always) and no RDB snapshots, and waits until it answers PING.
// options are more redis-server command-line options, given after those (a
// later option wins), such as "--appendonly", "no" for a server that forgets
// everything when it stops. The error says what to install when
// redis-server is missing. Call Close when done.
func StartRedis(options ...string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("testservers: redis-server is not on PATH; install it with `apt-get install redis-server` (as .ci/install-tools does): %w", err)
	}
	dir, err := os.MkdirTemp("", "testservers-redis-")
	if err != nil {
		return nil, fmt.Errorf("testservers: %w", err)
	}
	r := &Redis{bin: bin, dir: dir, options: options}
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

// Start starts the server again at the same address after Stop or Kill,
// with the data its configuration kept (all it acknowledged, unless options
// turned persistence off), and returns once it answers PING. It returns an
// error if the server is already running.
func (r *Redis) Start() error {
	if r.proc != nil {
		return fmt.Errorf("testservers: redis-server at %s is already running", r.Addr)
	}
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return err
	}
	args := append([]string{"--bind", host, "--port", port, "--dir", r.dir, "--daemonize", "no"}, redisPersistence...)
	args = append(args, r.options...)
	proc, err := startProcess(r.bin, args, r.dir, filepath.Join(r.dir, "redis.log"), nil, syscall.SIGKILL)
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

// Stop shuts the server down (SIGTERM), as a maintenance would, and returns
// once it has exited: from then on clients get connection errors until
// Start. Stopping a stopped server does nothing.
func (r *Redis) Stop() error {
	if r.proc == nil {
		return nil
	}
	_ = r.proc.signal(syscall.SIGCONT) // a paused server must run to exit
	err := r.proc.stop(syscall.SIGTERM)
	r.proc = nil
	return err
}

// Kill kills the server (SIGKILL), as a crash would: it saves nothing on the
// way out. It returns once the server has exited. Killing a stopped server
// does nothing.
func (r *Redis) Kill() error {
	if r.proc == nil {
		return nil
	}
	err := r.proc.stop(syscall.SIGKILL)
	r.proc = nil
	return err
}

// Pause freezes the server (SIGSTOP) and returns once the kernel reports it
// stopped: connections stay open and requests are accepted by the kernel,
// but nothing is answered until Resume, as with a server stalled by the
// machine it runs on.
func (r *Redis) Pause() error {
	if r.proc == nil {
		return fmt.Errorf("testservers: redis-server at %s is not running", r.Addr)
	}
	if err := r.proc.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return r.proc.waitState("tT")
}

// Resume lets a paused server go on (SIGCONT) and returns once it answers
// PING.
func (r *Redis) Resume() error {
	if r.proc == nil {
		return fmt.Errorf("testservers: redis-server at %s is not running", r.Addr)
	}
	if err := r.proc.signal(syscall.SIGCONT); err != nil {
		return err
	}
	return r.proc.waitReady(r.ping)
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
