package invoicing_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateAPI = flag.Bool("update-api", false, "rewrite testdata/api/*.txt from the current exported API")

// TestExportedAPIIsPinned compares the exported API of each public package
// (every exported declaration, without doc comments or bodies) with a
// golden file, so that a change to the public surface is a decision: a
// breaking change fails here. After an intended change, run
//
//	go test -run TestExportedAPIIsPinned -update-api .
//
// and record it in CHANGELOG.md.
func TestExportedAPIIsPinned(t *testing.T) {
	for _, pkg := range []string{".", "webhooks", "invoicingtest"} {
		name := filepath.Base(pkg)
		if pkg == "." {
			name = "invoicing"
		}
		t.Run(name, func(t *testing.T) {
			got := exportedAPI(t, pkg)
			golden := filepath.Join("testdata", "api", name+".txt")
			if *updateAPI {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden file: run with -update-api")
			assert.Equal(t, string(want), got, "the exported API of %s changed: if intended, run with -update-api and note it in CHANGELOG.md", name)
		})
	}
}

// exportedAPI lists the exported declarations of the package in dir, one a
// line (a struct or interface over several), sorted.
func exportedAPI(t *testing.T, dir string) string {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var decls []string
	print := func(node any) string {
		var b bytes.Buffer
		require.NoError(t, (&printer.Config{Mode: printer.TabIndent | printer.UseSpaces, Tabwidth: 8}).Fprint(&b, fset, node))
		return b.String()
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				d.Doc, d.Body = nil, nil
				decls = append(decls, print(d))
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						s.Doc, s.Comment = nil, nil
						stripUnexported(s.Type)
						decls = append(decls, "type "+print(s))
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if !n.IsExported() {
								continue
							}
							line := d.Tok.String() + " " + n.Name
							if s.Type != nil {
								line += " " + print(s.Type)
							}
							if d.Tok == token.CONST && i < len(s.Values) {
								line += " = " + print(s.Values[i])
							}
							decls = append(decls, line)
						}
					}
				}
			}
		}
	}
	sort.Strings(decls)
	return strings.Join(decls, "\n") + "\n"
}

func exportedRecv(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if idx, ok := typ.(*ast.IndexListExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// stripUnexported drops the comments and the unexported fields and methods
// of a struct or interface type, which are not part of the API. An
// interface's unexported methods are shown as one method named unexported:
// they seal it (no other package can implement it), which is part of the
// API, but their names and signatures are not.
func stripUnexported(typ ast.Expr) {
	var fields *ast.FieldList
	switch tt := typ.(type) {
	case *ast.StructType:
		fields = tt.Fields
	case *ast.InterfaceType:
		fields = tt.Methods
	default:
		return
	}
	kept := fields.List[:0]
	sealed := false
	for _, f := range fields.List {
		f.Doc, f.Comment = nil, nil
		if len(f.Names) == 0 { // embedded
			kept = append(kept, f)
			continue
		}
		names := f.Names[:0]
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			f.Names = names
			kept = append(kept, f)
		} else if _, ok := typ.(*ast.InterfaceType); ok {
			sealed = true
		}
	}
	if sealed {
		kept = append(kept, &ast.Field{Names: []*ast.Ident{ast.NewIdent("unexported")}, Type: &ast.FuncType{Params: &ast.FieldList{}}})
	}
	fields.List = kept
}
