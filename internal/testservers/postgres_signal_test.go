package testservers

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sslRequest is PostgreSQL's SSLRequest message: a server without TLS
// answers it with the single byte 'N', and nothing else is needed to get an
// answer, on a new connection or one already answered.
var sslRequest = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877103)

// askSSL sends an SSLRequest on conn and returns the answer byte, or an
// error when none came within wait.
func askSSL(conn net.Conn, wait time.Duration) (byte, error) {
	if err := conn.SetDeadline(time.Now().Add(wait)); err != nil {
		return 0, err
	}
	if _, err := conn.Write(sslRequest); err != nil {
		return 0, err
	}
	var b [1]byte
	_, err := conn.Read(b[:])
	return b[0], err
}

func TestPostgresPauseResume(t *testing.T) {
	p, u := startPostgres(t)

	open, err := net.Dial("tcp", u.Host) // a backend serves it from now on
	require.NoError(t, err)
	defer open.Close()
	require.Eventually(t, func() bool { // its backend has started
		children, err := childrenOf(p.proc.cmd.Process.Pid)
		return err == nil && len(children) > 0
	}, 10*time.Second, time.Millisecond)

	require.NoError(t, p.Pause())
	children, err := childrenOf(p.proc.cmd.Process.Pid)
	require.NoError(t, err)
	for _, pid := range append(children, p.proc.cmd.Process.Pid) {
		stopped, err := isStoppedOrGone(pid)
		require.NoError(t, err)
		assert.True(t, stopped, "process %d", pid)
	}
	// A paused server never answers: these cannot pass by luck.
	_, err = askSSL(open, 200*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the open connection's backend is paused")
	fresh, err := net.Dial("tcp", u.Host) // the kernel still accepts it
	require.NoError(t, err)
	defer fresh.Close()
	_, err = askSSL(fresh, 200*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the postmaster is paused")

	require.NoError(t, p.Resume())
	for name, conn := range map[string]net.Conn{"open": open, "fresh": fresh} {
		var b [1]byte
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err := conn.Read(b[:]) // the answer to the request sent while paused
		require.NoError(t, err, name)
		assert.Equal(t, byte('N'), b[0], name)
	}

	require.NoError(t, p.Pause())
	require.NoError(t, p.Stop(), "Stop resumes a paused server")
	require.NoError(t, p.Resume(), "resuming a stopped server does nothing")
}

func TestPostgresKillStart(t *testing.T) {
	p, u := startPostgres(t)
	postmaster := p.proc.cmd.Process.Pid
	children, err := childrenOf(postmaster)
	require.NoError(t, err)
	require.NotEmpty(t, children, "the background processes")

	require.NoError(t, p.Pause())
	require.NoError(t, p.Kill(), "a paused server can be killed")
	for _, pid := range append(children, postmaster) {
		gone, err := isGone(pid)
		require.NoError(t, err)
		assert.True(t, gone, "process %d", pid)
	}
	_, err = net.DialTimeout("tcp", u.Host, time.Second)
	assert.Error(t, err, "a killed server does not listen")
	assert.NoError(t, p.Kill(), "killing a stopped server does nothing")

	require.NoError(t, p.Start(), "Start after Kill")
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	answer, err := askSSL(conn, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, byte('N'), answer)
	log, err := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "automatic recovery in progress", "it recovered from the crash")
}
