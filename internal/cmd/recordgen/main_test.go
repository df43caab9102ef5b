package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The generated files of the repository are what the generator writes from
// the struct definitions as they are now (CI also runs go generate and
// fails on a difference).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, dir := range []string{"../../..", "../../../webhooks", "../../codec/testrecords"} {
		want, err := generate(dir, "records_gen.go")
		require.NoError(t, err, dir)
		got, err := os.ReadFile(filepath.Join(dir, "records_gen.go"))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s/records_gen.go is stale: run go generate", dir)
	}
	want, err := generateServices("../../..", "services_gen.go")
	require.NoError(t, err)
	got, err := os.ReadFile("../../../services_gen.go")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "services_gen.go is stale: run go generate")
}

// A field of a type the codec does not know is an error, never skipped.
func TestUnknownFieldTypeIsAnError(t *testing.T) {
	for name, field := range map[string]string{
		"channel":         "C chan int `json:\"c\"`",
		"slice of string": "S []string `json:\"s\"`",
		"float":           "F float64 `json:\"f\"`",
		"extra untagged":  "X Extra",
	} {
		dir := filepath.Join(t.TempDir(), "p")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		src := "package p\n\nimport \"github.com/invoicing-api/invoicing-go/internal/codec\"\n\n" +
			"//codec:extra\ntype Extra map[string]any\n\n//codec:record\ntype R struct {\n\t" + field +
			"\n\tE Extra `json:\",embed\"`\n\tmeta codec.Meta\n}\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "go.mod"), []byte("module github.com/invoicing-api/invoicing-go/internal/x\n"), 0o644))
		_, err := generate(dir, "records_gen.go")
		assert.Error(t, err, name)
	}
}
