package webhooks_test

import (
	"go/ast"
	"go/doc"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/invoicing-api/invoicing-go/internal/godoc"
)

// TestExportedDocsSpeakToUsers checks the documentation users read (go doc,
// pkg.go.dev): it must not send them to a file they do not have, nor guess.
func TestExportedDocsSpeakToUsers(t *testing.T) {
	pkg := godoc.Read(t, ".", "github.com/invoicing-api/invoicing-go/webhooks")

	check := func(where, text string) {
		for _, banned := range []string{"API.md", "guess"} {
			assert.NotContains(t, strings.ToLower(text), strings.ToLower(banned), where)
		}
	}
	checkGroup := func(c *ast.CommentGroup, where string) {
		if c != nil {
			check(where, c.Text())
		}
	}
	checkValues := func(values []*doc.Value) {
		for _, v := range values {
			check(strings.Join(v.Names, ", "), v.Doc)
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				checkGroup(vs.Doc, vs.Names[0].Name)
				checkGroup(vs.Comment, vs.Names[0].Name)
			}
		}
	}
	checkFuncs := func(funcs []*doc.Func) {
		for _, f := range funcs {
			check(f.Name, f.Doc)
		}
	}

	check("package doc", pkg.Doc)
	checkValues(pkg.Consts)
	checkValues(pkg.Vars)
	checkFuncs(pkg.Funcs)
	for _, typ := range pkg.Types {
		check(typ.Name, typ.Doc)
		checkValues(typ.Consts)
		checkValues(typ.Vars)
		checkFuncs(typ.Funcs)
		checkFuncs(typ.Methods)
		// Exported struct fields and interface methods are shown with the type.
		ast.Inspect(typ.Decl, func(n ast.Node) bool {
			if f, ok := n.(*ast.Field); ok && len(f.Names) > 0 && f.Names[0].IsExported() {
				checkGroup(f.Doc, typ.Name+"."+f.Names[0].Name)
				checkGroup(f.Comment, typ.Name+"."+f.Names[0].Name)
			}
			return true
		})
	}
}
