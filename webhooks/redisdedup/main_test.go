package redisdedup_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
)

// server is the redis-server every test of this package uses; each test
// keeps to keys of its own prefix.
var server *testservers.Redis

func TestMain(m *testing.M) {
	var err error
	server, err = testservers.StartRedis()
	webhooktest.Main(m, server, err)
}

// newClient returns a client of the test server, closed with the test: one
// per replica, as separate processes would have. It dials once per attempt
// (the default is five times, 100ms apart), so that the tests where Redis is
// down fail their requests quickly.
func newClient(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: server.Addr, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// prefix returns a key prefix of the test's own.
func prefix(t testing.TB) string {
	return "test:" + strings.ReplaceAll(t.Name(), "/", ":") + ":" + uuid.NewString()[:8] + ":"
}
