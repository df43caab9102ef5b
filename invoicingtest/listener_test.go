package invoicingtest

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithListenerServesOnTheGivenListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(WithListener(l))
	assert.Equal(t, "http://"+l.Addr().String()+BasePath, srv.URL)
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)

	srv.Close()
	_, err = net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "Close closes the listener")
}

func TestRootURLNamesUnspecifiedAddressesByLoopback(t *testing.T) {
	for addr, want := range map[*net.TCPAddr]string{
		{IP: net.IPv4(192, 0, 2, 1), Port: 4010}: "http://192.0.2.1:4010",
		{IP: net.IPv4zero, Port: 4010}:           "http://127.0.0.1:4010",
		{IP: net.IPv6unspecified, Port: 4010}:    "http://[::1]:4010",
		{IP: net.IPv6loopback, Port: 80}:         "http://[::1]:80",
	} {
		assert.Equal(t, want, rootURL(addr), "%v", addr)
	}
}
