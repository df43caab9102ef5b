package pgmirror_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
)

// server is the PostgreSQL the tests of this package share; each test works
// in a schema of its own. A test that stops its PostgreSQL has one of its
// own (ownPostgres), so that the others, running in parallel, never see it
// go.
var server *testservers.Postgres

// servers holds the PostgreSQL of the schemas that live on a server of
// their own (ownPostgres), by schema.
var servers sync.Map

// ownPostgres starts a PostgreSQL for schema alone, stopped with the test:
// the helpers that take the schema (openMirror, adminPool, the replicas)
// use it.
func ownPostgres(t testing.TB, schema string) *testservers.Postgres {
	t.Helper()
	pg, err := testservers.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		servers.Delete(schema)
		_ = pg.Close()
	})
	servers.Store(schema, pg)
	return pg
}

// postgresOf returns the PostgreSQL that holds schema.
func postgresOf(schema string) *testservers.Postgres {
	if pg, ok := servers.Load(schema); ok {
		return pg.(*testservers.Postgres)
	}
	return server
}

// binDir holds the invoicing-mirror binary the process tests build.
var binDir string

func TestMain(m *testing.M) {
	var err error
	server, err = testservers.StartPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "these tests need a real PostgreSQL:", err)
		os.Exit(1)
	}
	binDir, err = os.MkdirTemp("", "pgmirror-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	if err := server.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// mirrorBinary builds the invoicing-mirror command once per test binary
// (without the race detector: it runs as the replicas' separate processes)
// and returns its path.
func mirrorBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		builtBin = filepath.Join(binDir, "invoicing-mirror")
		out, err := exec.Command("go", "build", "-o", builtBin, "./cmd/invoicing-mirror").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building invoicing-mirror: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}
