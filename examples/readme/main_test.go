package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The README's quickstart runs as written against the in-memory service.
func TestQuickstartRunsAgainstTheInMemoryService(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), srv.URL, srv.FullKey, &out))
	first := out.String()
	assert.Regexp(t, `^\S+ \d+\.\d\d created: true\n$`, first)

	out.Reset()
	require.NoError(t, run(context.Background(), srv.URL, srv.FullKey, &out))
	assert.Equal(t, strings.Replace(first, "created: true", "created: false", 1), out.String(), "the reference makes the create idempotent")
}

// The README shows this program, word for word.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	// The README shows the program from its package clause on.
	program := string(src[bytes.Index(src, []byte("package main")):])
	assert.Contains(t, string(readme), "```go\n"+program+"```\n", "README.md's quickstart must be examples/readme/main.go")
}
