package testservers

import (
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedisStartStopStartClose(t *testing.T) {
	r, err := StartRedis()
	require.NoError(t, err)
	require.NoError(t, r.ping(), "a started server answers PING")

	require.NoError(t, r.Stop())
	assert.Error(t, r.ping(), "a stopped server does not answer")
	require.NoError(t, r.Stop(), "stopping twice is harmless")

	require.NoError(t, r.Start())
	assert.NoError(t, r.ping(), "the server answers again at the same address")
	assert.Error(t, r.Start(), "a running server cannot be started twice")

	require.NoError(t, r.Close())
	assert.NoDirExists(t, r.dir)
	assert.Error(t, r.ping())
}

func TestPostgresStartStopStartClose(t *testing.T) {
	p, err := StartPostgres()
	require.NoError(t, err)
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname())
	assert.Equal(t, "postgres", u.User.Username())
	assert.Equal(t, "disable", u.Query().Get("sslmode"))
	requireDial(t, u.Host)

	require.NoError(t, p.Stop())
	_, err = net.DialTimeout("tcp", u.Host, time.Second)
	assert.Error(t, err, "a stopped server does not listen")
	assert.DirExists(t, p.dataDir(), "Stop keeps the data")

	require.NoError(t, p.Start())
	requireDial(t, u.Host)

	require.NoError(t, p.Close())
	assert.NoDirExists(t, p.dir)
}

func TestPostgresRunsUnprivilegedAsRoot(t *testing.T) {
	cred, err := postgresCredential()
	require.NoError(t, err)
	if os.Geteuid() == 0 {
		require.NotNil(t, cred, "as root, PostgreSQL must run as another user")
		assert.NotZero(t, cred.Uid)
	} else {
		assert.Nil(t, cred, "as a normal user, PostgreSQL runs as that user")
	}
}

func TestFindPostgres(t *testing.T) {
	dir, err := findPostgres()
	require.NoError(t, err)
	assert.FileExists(t, dir+"/initdb")
	assert.FileExists(t, dir+"/postgres")
	assert.Greater(t, majorOf("/usr/lib/postgresql/16/bin"), majorOf("/usr/lib/postgresql/9.6/bin"))
}

// startRedis starts a Redis server for the test, closed when it ends.
func startRedis(t *testing.T, options ...string) *Redis {
	t.Helper()
	r, err := StartRedis(options...)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// startPostgres starts a PostgreSQL server for the test, closed when it
// ends, and returns it with its URL parsed.
func startPostgres(t *testing.T) (*Postgres, *url.URL) {
	t.Helper()
	p, err := StartPostgres()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	return p, u
}

func requireDial(t *testing.T, hostPort string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostPort, time.Second)
	require.NoError(t, err)
	conn.Close()
}
