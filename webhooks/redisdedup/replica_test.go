package redisdedup_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

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

// The window no deduper closes: a replica process killed (SIGKILL) after
// the callback's effect and before Release. Its claim holds until the lease
// ends (other replicas answer 409), and the service's next retry after that
// is processed again, so the effect happens twice. The package
// documentation says so, and what to do about it.
func TestReplicaKilledBetweenEffectAndReleaseLeavesTheEffectDoneTwice(t *testing.T) {
	p := prefix(t)
	const lease = time.Hour // ended by the test below, once it has seen the claim hold
	dying := startReplica(t, server.Addr, p, lease, "")
	rdb := newClient(t)
	survivor := webhooks.Handler(webhooktest.NewVerifier(t), func(ctx context.Context, d *webhooks.Delivery) error {
		return rdb.RPush(ctx, p+"effects", d.ID).Err()
	}, webhooks.WithDeduper(redisdedup.New(rdb, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))
	d := webhooktest.Deliveries(1)[0]

	req, err := d.Request(dying.url)
	require.NoError(t, err)
	sent := make(chan error, 1)
	go func() { // the service's first attempt; it gets no answer
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		sent <- err
	}()
	id, ok := dying.waitFor("processing ")
	require.True(t, ok)
	require.Equal(t, d.ID, id)
	require.NoError(t, dying.cmd.Process.Signal(syscall.SIGKILL))
	assert.Error(t, <-sent, "the killed replica never answers")

	assert.Equal(t, http.StatusConflict, d.Send(survivor), "the dead replica's claim holds until its lease ends")
	require.True(t, rdb.PExpire(context.Background(), p+d.ID, time.Millisecond).Val(), "the lease ends")
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), p+d.ID).Val() == 0 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, http.StatusOK, d.Send(survivor), "the service's retry, once the lease has ended")
	assert.Equal(t, []string{d.ID, d.ID}, rdb.LRange(context.Background(), p+"effects", 0, -1).Val(),
		"the effect was done by the killed replica, and again by the survivor")
	assert.Equal(t, http.StatusOK, d.Send(survivor))
	assert.Len(t, rdb.LRange(context.Background(), p+"effects", 0, -1).Val(), 2, "and not a third time")
}
