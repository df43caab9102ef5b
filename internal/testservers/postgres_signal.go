package testservers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// signalTimeout bounds how long Pause and Kill wait for the server's
// processes to be stopped or gone.
const signalTimeout = 10 * time.Second

// Pause freezes every process of the server with SIGSTOP, as a server that
// hangs looks to its clients (a stalled disk, a paused VM, a machine
// swapping): connections stay open, new ones are accepted by the kernel,
// and nothing answers until Resume. It stops the postmaster first, so that
// it starts no new process, then every process it started (the backends of
// the open connections, whose queries would otherwise still be answered,
// and the background processes), and returns once the kernel reports all
// of them stopped (or exited meanwhile). When Pause fails it resumes what
// it stopped. Stop and Close resume a paused server first. It needs Linux's
// /proc.
func (p *Postgres) Pause() error {
	if p.proc == nil {
		return errors.New("testservers: Pause: postgres is not running")
	}
	p.paused = true
	if err := p.pause(); err != nil {
		return errors.Join(err, p.Resume())
	}
	return nil
}

// stopPostmaster stops the postmaster (SIGSTOP), waits until it is
// stopped, and lists its children (stopped, it starts no other), then
// sends each of them sig; doing names that in errors.
func (p *Postgres) stopPostmaster(sig syscall.Signal, doing string) ([]int, error) {
	postmaster := p.proc.cmd.Process.Pid
	if err := syscall.Kill(postmaster, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("testservers: stopping the postmaster: %w", err)
	}
	if err := waitPID(postmaster, isStopped); err != nil {
		return nil, err
	}
	children, err := childrenOf(postmaster)
	if err != nil {
		return nil, err
	}
	return children, signalAll(children, sig, doing)
}

// signalAll sends sig to each of pids that still exists; doing names that
// in errors.
func signalAll(pids []int, sig syscall.Signal, doing string) error {
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("testservers: %s postgres process %d: %w", doing, pid, err)
		}
	}
	return nil
}

// pause does the work of Pause.
func (p *Postgres) pause() error {
	children, err := p.stopPostmaster(syscall.SIGSTOP, "stopping")
	if err != nil {
		return err
	}
	for _, pid := range children {
		// A backend whose client has just gone may have exited: the
		// stopped postmaster does not reap it, and it stays a zombie.
		if err := waitPID(pid, isStoppedOrGone); err != nil {
			return err
		}
	}
	return nil
}

// Resume lets the processes Pause stopped go on (SIGCONT): the server
// answers again, on the connections that were open too. Resuming a server
// that is not paused does nothing.
func (p *Postgres) Resume() error {
	if p.proc == nil || !p.paused {
		return nil
	}
	postmaster := p.proc.cmd.Process.Pid
	children, err := childrenOf(postmaster) // the stopped postmaster started no other
	if err != nil {
		return err
	}
	if err := signalAll(append(children, postmaster), syscall.SIGCONT, "resuming"); err != nil {
		return err
	}
	p.paused = false
	return nil
}

// Kill kills every process of the server with SIGKILL, paused or not, as
// the kernel's OOM killer or a crash of its machine would: no shutdown, no
// checkpoint, and its clients' connections break. It returns once all of
// them are gone. Start then starts the server again, which recovers its
// data from the write-ahead log. Killing a stopped server does nothing. It
// needs Linux's /proc.
func (p *Postgres) Kill() error {
	if p.proc == nil {
		return nil
	}
	// Stopped, the postmaster starts no process between the listing and
	// the kill.
	children, err := p.stopPostmaster(syscall.SIGKILL, "killing")
	if err != nil {
		return err
	}
	err = p.proc.stop(syscall.SIGKILL) // waits for the postmaster to exit
	p.proc, p.paused = nil, false
	if err != nil {
		return err
	}
	for _, pid := range children { // orphans now: their new parent reaps them
		if err := waitPID(pid, isGone); err != nil {
			return err
		}
	}
	return nil
}

// childrenOf returns the processes whose parent is pid, read from /proc.
func childrenOf(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("testservers: listing processes: %w", err)
	}
	var children []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(child); ok && ppid == pid {
			children = append(children, child)
		}
	}
	return children, nil
}

// procStat returns the state letter and the parent of process pid from
// /proc/<pid>/stat, or ok false when there is no such process.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err == nil
}

// isStopped reports whether process pid is stopped by a signal.
func isStopped(pid int) (bool, error) {
	state, _, ok := procStat(pid)
	if !ok {
		return false, fmt.Errorf("testservers: postgres process %d exited instead of stopping", pid)
	}
	return state == 'T' || state == 't', nil
}

// isStoppedOrGone reports whether process pid is stopped or has exited.
func isStoppedOrGone(pid int) (bool, error) {
	if gone, _ := isGone(pid); gone {
		return true, nil
	}
	return isStopped(pid)
}

// isGone reports whether process pid has exited (a zombie has).
func isGone(pid int) (bool, error) {
	state, _, ok := procStat(pid)
	return !ok || state == 'Z' || state == 'X', nil
}

// waitState waits until reached reports true for pid, for at most
// signalTimeout.
func waitPID(pid int, reached func(pid int) (bool, error)) error {
	for deadline := time.Now().Add(signalTimeout); ; time.Sleep(time.Millisecond) {
		ok, err := reached(pid)
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			state, _, _ := procStat(pid)
			return fmt.Errorf("testservers: postgres process %d still in state %q after %v", pid, state, signalTimeout)
		}
	}
}
