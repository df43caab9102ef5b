package testservers

import (
	"fmt"
	"net"
	"sync"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of a server, for tests of
// replies lost on the network: it forwards bytes both ways, and when armed
// with DropReply it lets one request reach the server, then cuts the
// connection before the reply reaches the client. The server has then done
// what was asked, and the client knows only that its connection dropped.
type Proxy struct {
	// Addr is where clients connect, host:port on 127.0.0.1.
	Addr string

	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex
	match   func(request []byte) bool // armed by DropReply; nil when not
	dropped chan struct{}             // closed once match's reply is dropped
	conns   map[net.Conn]struct{}
	closed  bool
}

// StartProxy starts a proxy to target (host:port) on a free loopback port.
// Call Close when done.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testservers: proxy: %w", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// DropReply arms the proxy for one lost reply: the next request for which
// match returns true is forwarded to the server, and as soon as the server
// answers, the proxy closes both sides of that connection instead of
// forwarding the answer. match gets what the client sent in one write (for
// Redis, one command or one pipeline of commands, in RESP). The returned
// channel is closed once a reply was dropped. Arming again replaces a match
// that has not fired yet.
func (p *Proxy) DropReply(match func(request []byte) bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match = match
	p.dropped = make(chan struct{})
	return p.dropped
}

// Close stops accepting, closes every connection and returns once the
// proxy's goroutines have ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close() // as the server refusing the connection
			continue
		}
		if !p.track(client, server) {
			return
		}
		p.wg.Add(2)
		cut := make(chan chan struct{}, 1) // the request whose reply to drop was sent
		go p.requests(client, server, cut)
		go p.replies(server, client, cut)
	}
}

// track remembers the connections for Close, or closes them and returns
// false when the proxy is closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if p.closed {
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
	}
	return !p.closed
}

// requests copies the client's requests to the server. Before forwarding
// the request an armed match picks, it tells replies to drop the reply.
func (p *Proxy) requests(client, server net.Conn, cut chan<- chan struct{}) {
	defer p.wg.Done()
	defer p.hangUp(client, server)
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if dropped := p.take(buf[:n]); dropped != nil {
				cut <- dropped
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies copies the server's replies to the client, until a reply is to
// be dropped: then it hangs up both sides without forwarding it.
func (p *Proxy) replies(server, client net.Conn, cut <-chan chan struct{}) {
	defer p.wg.Done()
	defer p.hangUp(client, server)
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			select {
			case dropped := <-cut:
				p.hangUp(client, server)
				close(dropped)
				return
			default:
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take returns the channel to close once request's reply is dropped when
// request is the one the armed match waits for, and disarms it; nil
// otherwise.
func (p *Proxy) take(request []byte) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.match == nil || !p.match(request) {
		return nil
	}
	p.match = nil
	return p.dropped
}

// hangUp closes both sides of a proxied connection.
func (p *Proxy) hangUp(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}
