package testservers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startTimeout bounds how long a server may take to become ready, and
// stopTimeout how long it may take to exit once asked to.
const (
	startTimeout = 30 * time.Second
	stopTimeout  = 30 * time.Second
)

// process is a server started as a child of the test binary.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited
	waitErr error         // the result of cmd.Wait, set before done closes
}

// startProcess starts bin with args in dir, writing its output to logPath, as
// the user cred names (nil: the current user). stopSignal is also sent to the
// server if the test binary dies without stopping it.
func startProcess(bin string, args []string, dir, logPath string, cred *syscall.Credential, stopSignal syscall.Signal) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: stopSignal}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testservers: starting %s: %w", bin, err)
	}
	p := &process{name: filepath.Base(bin), cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady calls ready until it returns nil, the process exits or
// startTimeout passes.
func (p *process) waitReady(ready func() error) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("testservers: %s exited before it was ready (%v); its log ends with:\n%s", p.name, p.waitErr, logTail(p.logPath))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.stop(syscall.SIGKILL)
			return fmt.Errorf("testservers: %s not ready after %v (%v); its log ends with:\n%s", p.name, startTimeout, err, logTail(p.logPath))
		}
	}
}

// stop sends sig and waits for the process to exit, killing it if it has
// not exited after stopTimeout.
func (p *process) stop(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("testservers: stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("testservers: %s did not stop within %v and was killed", p.name, stopTimeout)
	}
}

// signal sends sig to the process, which must be running.
func (p *process) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return fmt.Errorf("testservers: %s has exited (%v)", p.name, p.waitErr)
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("testservers: sending %v to %s: %w", sig, p.name, err)
	}
	return nil
}

// waitState waits until the kernel reports the process in one of states
// (the state letters of /proc/<pid>/stat: 'T' stopped, 'S' sleeping, 'R'
// running...), failing when it exits or after stopTimeout.
func (p *process) waitState(states string) error {
	path := fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)
	deadline := time.Now().Add(stopTimeout)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("testservers: reading the state of %s: %w", p.name, err)
		}
		// The state follows the command name, which is in parentheses
		// and may itself contain spaces or parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && strings.IndexByte(states, b[i+2]) >= 0 {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("testservers: %s exited (%v); its log ends with:\n%s", p.name, p.waitErr, logTail(p.logPath))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testservers: %s not in state %q after %v", p.name, states, stopTimeout)
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testservers: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns the last lines of the log at path, for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// addr is host:port on the loopback interface.
func addr(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
