package testservers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Postgres is a PostgreSQL cluster started by StartPostgres. Its data
// survives Stop or Kill and Start, not Close.
type Postgres struct {
	// URL connects to the database "postgres" as the superuser "postgres",
	// without a password (trust authentication on 127.0.0.1) and without
	// TLS, e.g. postgres://postgres@127.0.0.1:41234/postgres?sslmode=disable.
	URL string

	binDir string
	dir    string // the temporary directory; the cluster is in dir/data
	port   int
	cred   *syscall.Credential // nil: run as the current user
	proc   *process
	paused bool // Pause stopped its processes; Resume resumes them
}

// installPostgres is the hint given when PostgreSQL cannot be found or run.
const installPostgres = "install the PostgreSQL server with `apt-get install postgresql-15` (as .ci/install-tools does)"

// StartPostgres creates a cluster with initdb in a new temporary directory
// and starts postgres on a free loopback port, with fsync off (the data are
// thrown away). It returns once the server accepts connections. The error
// says what to install when the binaries, or the unprivileged user needed to
// run them as root, are missing. Call Close when done.
func StartPostgres() (*Postgres, error) {
	binDir, err := findPostgres()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "testservers-postgres-")
	if err != nil {
		return nil, fmt.Errorf("testservers: %w", err)
	}
	p := &Postgres{binDir: binDir, dir: dir, cred: cred}
	if err := p.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Another process may take the free port before the server binds it:
	// try a few ports.
	for range 3 {
		if p.port, err = freePort(); err != nil {
			break
		}
		p.URL = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr(p.port))
		if err = p.Start(); err == nil {
			return p, nil
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

// initdb creates the cluster in p.dir/data, owned by the user it runs as.
func (p *Postgres) initdb() error {
	if p.cred != nil {
		if err := os.Chown(p.dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return fmt.Errorf("testservers: giving %s to the postgres user: %w", p.dir, err)
		}
	}
	cmd := exec.Command(filepath.Join(p.binDir, "initdb"),
		"-D", p.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testservers: initdb failed (%w); %s; its output:\n%s", err, installPostgres, out)
	}
	return nil
}

// Start starts the server again on the same port after Stop, with the data
// it had. It returns an error if the server is already running.
func (p *Postgres) Start() error {
	if p.proc != nil {
		return fmt.Errorf("testservers: postgres on port %d is already running", p.port)
	}
	args := []string{
		"-D", p.dataDir(), "-p", strconv.Itoa(p.port), "-F",
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		// The tests of a package share one server and run in parallel,
		// each with its pools (and replicas' processes with theirs).
		"-c", "max_connections=400",
	}
	proc, err := startProcess(filepath.Join(p.binDir, "postgres"), args, p.dir, filepath.Join(p.dir, "postgres.log"), p.cred, syscall.SIGQUIT)
	if err != nil {
		return err
	}
	if err := proc.waitReady(func() error { return p.ready(proc.cmd.Process.Pid) }); err != nil {
		_ = proc.stop(syscall.SIGQUIT)
		return err
	}
	p.proc = proc
	return nil
}

// Stop shuts the server down at once (a fast shutdown: open transactions are
// rolled back and clients are disconnected), as a crash or a failover would
// look to them; a paused server is resumed first. Stopping a stopped server
// does nothing.
func (p *Postgres) Stop() error {
	if p.proc == nil {
		return nil
	}
	if err := p.Resume(); err != nil {
		return err
	}
	err := p.proc.stop(syscall.SIGINT)
	p.proc = nil
	return err
}

// Close stops the server and removes its directory.
func (p *Postgres) Close() error {
	err := p.Stop()
	if rerr := os.RemoveAll(p.dir); err == nil {
		err = rerr
	}
	return err
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }

// ready returns nil once postmaster.pid says that the postmaster pid
// accepts connections: its first line is the postmaster's pid (a server
// killed by Kill leaves its own file behind), its eighth its status.
func (p *Postgres) ready(pid int) error {
	b, err := os.ReadFile(filepath.Join(p.dataDir(), "postmaster.pid"))
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 8 || strings.TrimSpace(lines[0]) != strconv.Itoa(pid) || strings.TrimSpace(lines[7]) != "ready" {
		return errors.New("postmaster.pid does not say ready yet")
	}
	return nil
}

// findPostgres returns a directory holding both initdb and postgres: the one
// initdb on PATH lives in, else the newest /usr/lib/postgresql/<major>/bin.
func findPostgres() (string, error) {
	var dirs []string
	if path, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return majorOf(debian[i]) > majorOf(debian[j]) })
	for _, dir := range append(dirs, debian...) {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("testservers: initdb and postgres are neither on PATH nor under /usr/lib/postgresql/*/bin; %s", installPostgres)
}

// majorOf returns the major version in /usr/lib/postgresql/<major>/bin.
func majorOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// postgresCredential returns nil when the tests do not run as root, and the
// credentials of the "postgres" user when they do: PostgreSQL refuses to run
// as root.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("testservers: PostgreSQL refuses to run as root and there is no postgres user to run it as (%w); %s, which creates that user", err, installPostgres)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("testservers: postgres user's uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("testservers: postgres user's gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
