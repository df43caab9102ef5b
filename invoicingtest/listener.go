package invoicingtest

import (
	"net"
	"strconv"
)

// WithListener makes the server accept connections on l instead of a new
// listener on a random loopback port, so that a program can serve the fake
// on an address of its choosing (invoicing mock does, on 127.0.0.1:4010 by
// default):
//
//	l, err := net.Listen("tcp", "127.0.0.1:4010")
//	if err != nil {
//		return err
//	}
//	srv := invoicingtest.NewServer(invoicingtest.WithListener(l))
//
// Server.URL names l's address; an unspecified address (0.0.0.0, [::]) is
// named by the loopback address of its family, which reaches it from the
// same machine. The server owns l from then on: Close closes it.
func WithListener(l net.Listener) Option {
	return func(cfg *config) { cfg.listener = l }
}

// rootURL is the http URL of a listener's address, with an unspecified IP
// replaced by the loopback address of its family.
func rootURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	ip := tcp.IP
	switch {
	case ip.Equal(net.IPv4zero):
		ip = net.IPv4(127, 0, 0, 1)
	case ip.Equal(net.IPv6unspecified):
		ip = net.IPv6loopback
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}
