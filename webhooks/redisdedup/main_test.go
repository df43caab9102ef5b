package redisdedup_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// server is the redis-server every test of this package uses; each test
// keeps to keys of its own prefix.
var server *testservers.Redis

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" { // this process is a replica started by startReplica
		runReplica()
		return
	}
	var err error
	server, err = testservers.StartRedis()
	webhooktest.Main(m, server, err)
}

// newClient returns a client of the test server, closed with the test: one
// per replica, as separate processes would have.
func newClient(t testing.TB) *redis.Client {
	return clientOf(t, server.Addr)
}

// clientOf returns a client of the Redis at addr (a server or a proxy),
// closed with the test. It dials once per attempt (the default is five
// times, 100ms apart), so that the tests where Redis is down fail their
// requests quickly.
func clientOf(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// newServer starts a redis-server of the test's own, stopped with the test,
// for the tests that stop, kill or restart it. options are more
// redis-server options (see testservers.StartRedis).
func newServer(t testing.TB, options ...string) *testservers.Redis {
	srv, err := testservers.StartRedis(options...)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

// prefix returns a key prefix of the test's own.
func prefix(t testing.TB) string {
	return "test:" + strings.ReplaceAll(t.Name(), "/", ":") + ":" + uuid.NewString()[:8] + ":"
}

// eventuallyClaimsNew waits until d claims id as new: until the claim
// before has run out of lease, say, or the success before been forgotten.
func eventuallyClaimsNew(t *testing.T, d *redisdedup.Deduper, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, err := d.Claim(context.Background(), id)
		return err == nil && s == webhooks.ClaimNew
	}, 5*time.Second, 10*time.Millisecond)
}

// replicas returns Dedupers of the prefix p, each with a Redis client of
// its own, as replicas: slow, whose claims have a 50 ms lease, and then n
// others with the default lease.
func replicas(t *testing.T, p string, n int) (slow *redisdedup.Deduper, others []*redisdedup.Deduper) {
	slow = redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p), redisdedup.WithLease(50*time.Millisecond))
	for range n {
		others = append(others, redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p)))
	}
	return slow, others
}

// requireClaim claims id with d and checks what the claim says.
func requireClaim(t *testing.T, d *redisdedup.Deduper, id string, want webhooks.ClaimStatus, msgAndArgs ...any) {
	t.Helper()
	s, err := d.Claim(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, want, s, msgAndArgs...)
}

// cluster is a receiver running as replicas that share one Redis under one
// key prefix; each replica has a Redis client and a Deduper of its own, as
// separate processes would. It counts the successful runs of its callback.
type cluster struct {
	replicas  []http.Handler
	dedupers  []*redisdedup.Deduper // replica i's Deduper
	processed webhooktest.Counter   // delivery id -> successful callback runs
}

// newCluster starts n replicas of the Redis at addr that verify with v
// (nil: the tests' secret) and whose callback is fn (nil: succeed after a
// pause of up to 2ms, so that claims overlap).
func newCluster(t testing.TB, addr string, v *webhooks.Verifier, n int, fn func(ctx context.Context, d *webhooks.Delivery) error, opts ...redisdedup.Option) *cluster {
	if fn == nil {
		fn = func(context.Context, *webhooks.Delivery) error {
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			return nil
		}
	}
	c := &cluster{}
	record := func(ctx context.Context, d *webhooks.Delivery) error {
		if err := fn(ctx, d); err != nil {
			return err
		}
		c.processed.Add(d.ID)
		return nil
	}
	if v == nil {
		v = webhooktest.NewVerifier(t)
	}
	opts = append([]redisdedup.Option{redisdedup.WithKeyPrefix(prefix(t))}, opts...)
	for range n {
		d := redisdedup.New(clientOf(t, addr), opts...)
		c.dedupers = append(c.dedupers, d)
		c.replicas = append(c.replicas, webhooks.Handler(v, record, webhooks.WithDeduper(d)))
	}
	return c
}

// replicaEnv, set in the environment of the test binary, makes it run as a
// replica (runReplica) instead of running the tests: its value is the
// replica's Redis address, key prefix and lease, and optionally the path of
// an effects file, separated by spaces.
const replicaEnv = "REDISDEDUP_TEST_REPLICA"

// replicaWork is how long the callback of a replica with an effects file
// works after its effect, before it returns.
const replicaWork = 50 * time.Millisecond

// runReplica serves webhooks.Handler with a Deduper on 127.0.0.1 until it
// is killed, and says "listening <addr>" on stdout once it serves. Without
// an effects file, its callback has an effect (it appends the delivery id
// to the list "<prefix>effects" in Redis), says "processing <id>" on
// stdout, and then hangs, so that the test can kill the replica between the
// effect and the release. With one, its callback appends the delivery id
// and a newline to the file (the effect, kept whatever Redis does), works
// for replicaWork, and succeeds.
func runReplica() {
	fields := strings.Fields(os.Getenv(replicaEnv))
	if len(fields) < 3 {
		fmt.Fprintln(os.Stderr, "replica: want address, prefix and lease in", replicaEnv)
		os.Exit(2)
	}
	addr, prefix := fields[0], fields[1]
	lease, err := time.ParseDuration(fields[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(2)
	}
	v, err := webhooks.NewVerifier(webhooktest.Secret)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(2)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	fn := func(ctx context.Context, d *webhooks.Delivery) error {
		if err := rdb.RPush(ctx, prefix+"effects", d.ID).Err(); err != nil {
			return err
		}
		fmt.Println("processing", d.ID)
		select {} // the replica is killed here, before Release
	}
	if len(fields) > 3 {
		effects, err := os.OpenFile(fields[3], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replica:", err)
			os.Exit(2)
		}
		fn = func(_ context.Context, d *webhooks.Delivery) error {
			if _, err := effects.WriteString(d.ID + "\n"); err != nil {
				return err
			}
			time.Sleep(replicaWork)
			return nil
		}
	}
	h := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(rdb, redisdedup.WithKeyPrefix(prefix), redisdedup.WithLease(lease))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(2)
	}
	fmt.Println("listening", ln.Addr())
	fmt.Fprintln(os.Stderr, "replica:", http.Serve(ln, h))
	os.Exit(2)
}

// replica is a replica process started by startReplica.
type replica struct {
	cmd   *exec.Cmd
	url   string
	lines *bufio.Scanner // what it says on stdout
}

// startReplica starts the test binary as a replica process (runReplica)
// and returns once it serves; it is killed with the test. effects is the
// path of its effects file, or "" for none.
func startReplica(t *testing.T, redisAddr, prefix string, lease time.Duration, effects string) *replica {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), strings.TrimSpace(fmt.Sprintf("%s=%s %s %v %s", replicaEnv, redisAddr, prefix, lease, effects)))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the tests
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	r := &replica{cmd: cmd, lines: bufio.NewScanner(stdout)}
	addr, ok := r.waitFor("listening ")
	require.True(t, ok, "the replica process did not start")
	r.url = "http://" + addr
	return r
}

// waitFor reads what the replica says until a line starting with prefix,
// and returns the rest of that line; false if the replica exited first.
func (r *replica) waitFor(prefix string) (string, bool) {
	for r.lines.Scan() {
		if rest, ok := strings.CutPrefix(r.lines.Text(), prefix); ok {
			return rest, true
		}
	}
	return "", false
}
