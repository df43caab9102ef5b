package testservers

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redisDo sends one inline command to the server at addr and returns its
// reply's first line.
func redisDo(addr, command string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "%s\r\n", command); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "$-1") { // a bulk string: its value
		line, err = r.ReadString('\n')
	}
	return strings.TrimSpace(line), err
}

// By default what the server acknowledged survives Stop and Kill;
// "--appendonly no" makes a server that forgets everything when it stops.
func TestRedisKeepsAcknowledgedWritesAcrossRestarts(t *testing.T) {
	r := startRedis(t)

	for _, restart := range []func() error{r.Stop, r.Kill} {
		v := fmt.Sprint(time.Now().UnixNano())
		reply, err := redisDo(r.Addr, "SET k "+v)
		require.NoError(t, err)
		require.Equal(t, "+OK", reply)
		require.NoError(t, restart())
		require.NoError(t, r.Start())
		reply, err = redisDo(r.Addr, "GET k")
		require.NoError(t, err)
		assert.Equal(t, v, reply, "an acknowledged write survives a restart")
	}

	volatile := startRedis(t, "--appendonly", "no")
	reply, err := redisDo(volatile.Addr, "SET k v")
	require.NoError(t, err)
	require.Equal(t, "+OK", reply)
	require.NoError(t, volatile.Kill())
	require.NoError(t, volatile.Start())
	reply, err = redisDo(volatile.Addr, "GET k")
	require.NoError(t, err)
	assert.Equal(t, "$-1", reply, "without persistence nothing survives")
}

// A paused server accepts connections but answers nothing until resumed.
func TestRedisPauseResume(t *testing.T) {
	r := startRedis(t)

	require.NoError(t, r.Pause())
	conn, err := net.DialTimeout("tcp", r.Addr, time.Second)
	require.NoError(t, err, "the kernel still accepts connections")
	defer conn.Close()
	_, err = conn.Write([]byte("PING\r\n"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err = conn.Read(make([]byte, 16))
	var nerr net.Error
	require.ErrorAs(t, err, &nerr)
	assert.True(t, nerr.Timeout(), "a paused server answers nothing")

	require.NoError(t, r.Resume())
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", line, "the request sent while paused is answered once resumed")

	require.NoError(t, r.Pause())
	require.NoError(t, r.Stop(), "a paused server can be stopped")
}
