package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertCurrent asserts that the file at path is want, what the generator
// (which returned err) writes now.
func assertCurrent(t *testing.T, path string, want []byte, err error, stale string) {
	t.Helper()
	require.NoError(t, err, path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), stale)
}

// writePackage writes src as package p in root/p, in a module of its own
// (root/go.mod), and returns root/p.
func writePackage(t *testing.T, root, src string) string {
	t.Helper()
	dir := filepath.Join(root, "p")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/invoicing-api/invoicing-go/internal/x\n"), 0o644))
	return dir
}

// The generated files of the repository are what the generator writes from
// the struct definitions as they are now (CI also runs go generate and
// fails on a difference).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, dir := range []string{"../../..", "../../../webhooks", "../../codec/testrecords"} {
		want, err := generate(dir, "records_gen.go")
		assertCurrent(t, filepath.Join(dir, "records_gen.go"), want, err, dir+"/records_gen.go is stale: run go generate")
	}
	want, err := generateServices("../../..", "services_gen.go")
	assertCurrent(t, "../../../services_gen.go", want, err, "services_gen.go is stale: run go generate")
}

// pgmirror's tables_gen.go is what the generator writes from the SDK's
// records as they are now (CI also runs go generate and fails on a
// difference).
func TestTheMirrorsTablesAreCurrent(t *testing.T) {
	want, err := generateMirror("../../..", "../../../pgmirror", "tables_gen.go")
	assertCurrent(t, "../../../pgmirror/tables_gen.go", want, err, "pgmirror/tables_gen.go is stale: run go generate in pgmirror")
}

// A field of a type the codec does not know is an error, never skipped.
func TestUnknownFieldTypeIsAnError(t *testing.T) {
	for name, field := range map[string]string{
		"channel":         "C chan int `json:\"c\"`",
		"slice of string": "S []string `json:\"s\"`",
		"float":           "F float64 `json:\"f\"`",
		"extra untagged":  "X Extra",
	} {
		src := "package p\n\nimport \"github.com/invoicing-api/invoicing-go/internal/codec\"\n\n" +
			"//codec:extra\ntype Extra map[string]any\n\n//codec:record\ntype R struct {\n\t" + field +
			"\n\tE Extra `json:\",embed\"`\n\tmeta codec.Meta\n}\n"
		_, err := generate(writePackage(t, t.TempDir(), src), "records_gen.go")
		assert.Error(t, err, name)
	}
}

// A mirrored record whose field has no column type, or whose directive is
// incomplete or names no service, is an error: never a table that silently
// lacks a column.
func TestAMirroredRecordThatCannotBeATableIsAnError(t *testing.T) {
	const service = "//gen:service path=/things key=things record=R noun=thing list=P get\ntype ThingService struct{}\n\ntype P struct{}\n\n" +
		"type Client struct {\n\tThings *ThingService\n}\n\n"
	for name, c := range map[string]struct{ directive, field string }{
		"valid (the control)": {"//mirror:table name=things order=1", "S string `json:\"s\"`"},
		"a slice of strings":  {"//mirror:table name=things order=1", "S []string `json:\"s\"`"},
		"a map":               {"//mirror:table name=things order=1", "M map[string]jsontext.Value `json:\"m\"`"},
		"no order":            {"//mirror:table name=things", "S string `json:\"s\"`"},
		"no service":          {"//mirror:table name=others order=1", "S string `json:\"s\"`"},
		"lines without them":  {"//mirror:table name=things order=1 lines=thing_lines parent=thing_id", "S string `json:\"s\"`"},
		"an unknown field":    {"//mirror:table name=things order=1 colour=red", "S string `json:\"s\"`"},
		"updated alone":       {"//mirror:table name=things order=1", "U *time.Time `json:\"updated_at\"`"},
	} {
		root := t.TempDir()
		src := "package p\n\nimport (\n\t\"time\"\n\n\t\"github.com/go-json-experiment/json/jsontext\"\n\n\t\"github.com/invoicing-api/invoicing-go/internal/codec\"\n)\n\n" +
			"var _ time.Time\nvar _ jsontext.Value\n\n" + service +
			"//codec:extra\ntype Extra map[string]any\n\n//codec:record\n" + c.directive + "\ntype R struct {\n\tID string `json:\"id\"`\n\t" + c.field +
			"\n\tE Extra `json:\",embed\"`\n\tmeta codec.Meta\n}\n"
		dir := writePackage(t, root, src)
		out := filepath.Join(root, "m")
		require.NoError(t, os.MkdirAll(out, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, "m.go"), []byte("package m\n"), 0o644))
		got, err := generateMirror(dir, out, "tables_gen.go")
		if name == "valid (the control)" {
			require.NoError(t, err)
			assert.Contains(t, string(got), `{Name: "s", Type: store.Text}`)
			assert.Contains(t, string(got), "func rRow(v *invoicing.R) store.Row")
			continue
		}
		assert.Error(t, err, name)
	}
}
