package readmes

import (
	"fmt"
	"io"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mock's default address, which a block that runs 'invoicing mock'
// without --addr listens on: moved with the variable that sets it.
const (
	mockPort    = "4010"
	envMockAddr = "INVOICING_MOCK_ADDR"
)

// loopbackAddr is an address a block names on the loopback interface; its
// port is moved.
var loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:([0-9]{1,5})\b`)

// portMap maps each port the READMEs name to the free port it runs on.
type portMap map[string]string

// movePorts picks a free loopback port for each port the blocks name on
// 127.0.0.1 (but 0) and for the mock's default port, and holds the ports
// the READMEs name (those free now) until the test ends: a block that
// still reached one would fail, whatever else runs on the machine (a
// user's own mock on 4010 or listener on 8080 included). It returns the
// ports moved, and the named ports it holds.
func movePorts(t *testing.T, readmes map[string][]block) (ports portMap, held []string) {
	named := map[string]bool{mockPort: true}
	for _, blocks := range readmes {
		for _, b := range blocks {
			for _, s := range append([]string{b.text}, slices.Collect(maps.Values(b.attrs))...) {
				for _, m := range loopbackAddr.FindAllStringSubmatch(s, -1) {
					if m[1] != "0" {
						named[m[1]] = true
					}
				}
			}
		}
	}
	ports = portMap{}
	var free []net.Listener // held until every port is picked: no port twice
	for _, p := range slices.Sorted(maps.Keys(named)) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		free = append(free, l)
		ports[p] = fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		if l, err := net.Listen("tcp", "127.0.0.1:"+p); err == nil {
			go refuse(l)
			t.Cleanup(func() { l.Close() })
			held = append(held, p)
		}
	}
	for _, l := range free {
		l.Close()
	}
	t.Logf("the READMEs' loopback ports run moved: %v; held meanwhile: %v", map[string]string(ports), held)
	return ports, held
}

// refuse closes every connection l accepts, until l is closed: a client
// that reached a port the READMEs name fails at once.
func refuse(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// rewrite returns b with the loopback ports it names moved.
func (m portMap) rewrite(b block) block {
	move := func(s string) string {
		return loopbackAddr.ReplaceAllStringFunc(s, func(addr string) string {
			port := strings.TrimPrefix(addr, "127.0.0.1:")
			if moved, ok := m[port]; ok {
				return "127.0.0.1:" + moved
			}
			return addr
		})
	}
	b.text = move(b.text)
	attrs := make(map[string]string, len(b.attrs))
	for k, v := range b.attrs {
		attrs[k] = move(v)
	}
	b.attrs = attrs
	return b
}

func TestPortsMoveEverywhereAndTheNamedOnesAreHeld(t *testing.T) {
	blocks := map[string][]block{"README.md": {
		{lang: "sh", attrs: map[string]string{"background": "", "wait": "127.0.0.1:8080"}, text: "invoicing listen --addr 127.0.0.1:8080\n"},
		{lang: "sh", attrs: map[string]string{}, text: "invoicing trigger test --to http://127.0.0.1:8080/hooks --addr 127.0.0.1:0 # 10.0.0.1:8080\n"},
	}}
	ports, held := movePorts(t, blocks)
	require.Len(t, ports, 2, "8080 and the mock's 4010")
	moved := ports["8080"]
	assert.NotEqual(t, "8080", moved)
	assert.NotEqual(t, ports[mockPort], moved)

	b := ports.rewrite(blocks["README.md"][0])
	assert.Equal(t, "127.0.0.1:"+moved, b.attrs["wait"])
	assert.Equal(t, "invoicing listen --addr 127.0.0.1:"+moved+"\n", b.text)
	assert.Equal(t, "127.0.0.1:8080", blocks["README.md"][0].attrs["wait"], "the block parsed is left as it was")
	b = ports.rewrite(blocks["README.md"][1])
	assert.Equal(t, "invoicing trigger test --to http://127.0.0.1:"+moved+"/hooks --addr 127.0.0.1:0 # 10.0.0.1:8080\n", b.text)

	// The ports named are taken while the test runs (those another program
	// holds already stay its), and a connection to one is closed at once.
	for _, p := range []string{"8080", mockPort} {
		l, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err == nil {
			l.Close()
			t.Fatalf("127.0.0.1:%s is free while the READMEs run", p)
		}
	}
	for _, p := range held {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
		require.NoError(t, err)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
		assert.ErrorIs(t, err, io.EOF, "a connection to held port %s ends at once", p)
	}
}
