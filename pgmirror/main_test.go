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

// server is the PostgreSQL every test of this package uses; each test works
// in a schema of its own.
var server *testservers.Postgres

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
