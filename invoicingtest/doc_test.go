package invoicingtest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEverySeedIDIsListedByGoDoc: go doc's package summary shows one line
// per declaration, so a Seed* id declared in a group with others hides
// behind the first one's "...". Each is declared on its own, with its doc.
func TestEverySeedIDIsListedByGoDoc(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			require.NoError(t, err)
			files = append(files, f)
		}
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/invoicing-api/invoicing-go/invoicingtest")
	require.NoError(t, err)
	seeds := 0
	for _, v := range pkg.Consts {
		for _, name := range v.Names {
			if strings.HasPrefix(name, "Seed") {
				seeds++
				assert.Equal(t, []string{name}, v.Names, "%s is declared on its own", name)
				assert.True(t, strings.HasPrefix(v.Doc, name+" "), "%s has its own doc: %q", name, v.Doc)
			}
		}
	}
	assert.Equal(t, 23, seeds, "every Seed* id")
}
