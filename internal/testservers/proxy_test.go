package testservers

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The proxy forwards requests and replies; an armed DropReply lets its
// request reach the server and cuts the connection before the reply.
func TestProxyDropsOneReply(t *testing.T) {
	r := startRedis(t)
	p, err := StartProxy(r.Addr)
	require.NoError(t, err)
	defer p.Close()

	reply, err := redisDo(p.Addr, "SET a 1")
	require.NoError(t, err)
	assert.Equal(t, "+OK", reply, "forwarded both ways")

	dropped := p.DropReply(func(req []byte) bool { return bytes.Contains(req, []byte("INCR a")) })
	conn, err := net.DialTimeout("tcp", p.Addr, time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	rd := bufio.NewReader(conn)
	_, err = conn.Write([]byte("PING\r\n"))
	require.NoError(t, err)
	_, err = rd.ReadString('\n')
	require.NoError(t, err, "a request that does not match is answered")
	_, err = conn.Write([]byte("INCR a\r\n"))
	require.NoError(t, err)
	_, err = rd.ReadString('\n')
	assert.Error(t, err, "the connection is cut before the reply")
	<-dropped

	reply, err = redisDo(r.Addr, "GET a")
	require.NoError(t, err)
	assert.Equal(t, "2", reply, "the server did what the lost request asked")
	reply, err = redisDo(p.Addr, "INCR a")
	require.NoError(t, err)
	assert.Equal(t, ":3", reply, "the proxy drops one reply, then forwards again")
}
