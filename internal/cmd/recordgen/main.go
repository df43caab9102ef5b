// Command recordgen writes the code a package would otherwise repeat by
// hand, from its declarations: the JSON methods of its records, so that a
// struct is the single source of its JSON (adding a field is one line, then
// go generate), and the methods of its services, from one line each.
//
// It reads the non-test Go files of the package in the current directory
// (go generate runs it there) and, for each struct type whose doc comment
// holds a directive, writes records_gen.go:
//
//	//codec:record           decodeJSON, encodeJSON, UnmarshalJSON, MarshalJSON
//	//codec:record lenient   the same, decoding leniently, plus Has and MismatchedFields
//	//codec:params           encodeJSON and MarshalJSON (a request body; the
//	                         package defines marshalParams(func(*codec.Encoder)) ([]byte, error))
//
// A record holds a field `meta codec.Meta` and an Extra field tagged
// `json:",embed"` (of a type marked //codec:extra; map[string]any in
// params). Each field is written as its struct tag says (name, omitempty or
// omitzero, string for money written as a JSON string); an embedded struct
// without a tag has its fields inlined. The field types it knows: string and
// string types, bool, int, decimal.Decimal, time.Time and pointers to them;
// a type marked //codec:date; jsontext.Value and map[string]jsontext.Value;
// a type with its own MarshalJSON and UnmarshalJSON; and records (a record,
// a pointer to one, a slice of them). Any other type is an error, so that a
// field is never silently skipped.
//
// For each service type whose doc comment holds a //gen:service directive,
// it writes services_gen.go: the methods the directive names, each a line
// over the package's generic helpers (list, listPage, get, create, and the
// Client's downloadPDF):
//
//	//gen:service path=/invoices key=invoices record=Invoice noun=invoice list=InvoiceListParams get pdf=Invoice create=P
//
// list=P gives List and ListPage with params P (the records under key or
// "items"), get gives Get, pdf=Name gives PDF ("Name-<number>.pdf"),
// create=P a Create that sends P as it is. noun names one record in the
// godoc, with _ for a space; its plural adds an s.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("recordgen: ")
	out := flag.String("o", "records_gen.go", "the file to write the records' methods to")
	services := flag.String("services", "services_gen.go", "the file to write the services' methods to, when the package has any")
	mirror := flag.String("mirror", "", "write tables_gen.go, the mirror's tables, from the //mirror:table records of the package in `DIR`")
	flag.Parse()
	if *mirror != "" {
		src, err := generateMirror(*mirror, ".", "tables_gen.go")
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile("tables_gen.go", src, 0o644); err != nil {
			log.Fatal(err)
		}
		return
	}
	src, err := generate(".", *out)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
	if src, err = generateServices(".", *services); err != nil {
		log.Fatal(err)
	}
	if src != nil {
		if err := os.WriteFile(*services, src, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// pkg is a parsed package: its types, their directives and methods.
type pkg struct {
	name    string
	dir     string
	types   map[string]*ast.TypeSpec
	dirs    map[string][]string        // directives by type name: "record", "lenient", ...
	gens    map[string][]string        // //gen:service directives by type name: "service", "path=/x", ...
	mirrors map[string][]string        // //mirror:table lines by type name, one string a line
	methods map[string]map[string]bool // method names by receiver type
	imports map[*ast.File]map[string]string
	fileOf  map[string]*ast.File // the file declaring each type
}

// loader parses the packages of one module on demand.
type loader struct {
	modDir, modPath string
	pkgs            map[string]*pkg // by directory
}

func generate(dir, out string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{pkgs: map[string]*pkg{}}
	if l.modDir, l.modPath, err = findModule(abs); err != nil {
		return nil, err
	}
	p, err := l.load(abs, filepath.Base(out))
	if err != nil {
		return nil, err
	}
	g := &gen{l: l, p: p}
	names := make([]string, 0, len(p.types))
	for name := range p.types {
		names = append(names, name)
	}
	// One file set, files parsed in name order: positions order the types.
	slices.SortFunc(names, func(a, b string) int { return int(p.types[a].Pos() - p.types[b].Pos()) })
	for _, name := range names {
		d := p.dirs[name]
		switch {
		case slices.Contains(d, "record"):
			err = g.record(name, slices.Contains(d, "lenient"))
		case slices.Contains(d, "params"):
			err = g.params(name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	head := fmt.Sprintf("// Code generated by recordgen from the struct definitions; DO NOT EDIT.\n\npackage %s\n\nimport (\n\t\"github.com/go-json-experiment/json/jsontext\"\n\n\t%q\n)\n\n", p.name, l.modPath+"/internal/codec")
	src, err := format.Source(append([]byte(head), g.buf.Bytes()...))
	if err != nil {
		return nil, fmt.Errorf("formatting the output: %w\n%s", err, g.buf.Bytes())
	}
	return src, nil
}

func findModule(dir string) (string, string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return d, strings.Trim(strings.TrimSpace(rest), `"`), nil
				}
			}
			return "", "", fmt.Errorf("%s/go.mod has no module line", d)
		}
		if filepath.Dir(d) == d {
			return "", "", errors.New("no go.mod above " + dir)
		}
	}
}

func (l *loader) load(dir, skip string) (*pkg, error) {
	if p, ok := l.pkgs[dir]; ok {
		return p, nil
	}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &pkg{dir: dir, types: map[string]*ast.TypeSpec{}, dirs: map[string][]string{}, gens: map[string][]string{}, mirrors: map[string][]string{}, methods: map[string]map[string]bool{},
		imports: map[*ast.File]map[string]string{}, fileOf: map[string]*ast.File{}}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == skip {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.name = f.Name.Name
		imps := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(path)
			if im.Name != nil {
				name = im.Name.Name
			}
			imps[name] = path
		}
		p.imports[f] = imps
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					p.types[ts.Name.Name] = ts
					p.fileOf[ts.Name.Name] = f
					for _, doc := range []*ast.CommentGroup{decl.Doc, ts.Doc} {
						if doc == nil {
							continue
						}
						for _, c := range doc.List {
							if rest, ok := strings.CutPrefix(c.Text, "//codec:"); ok {
								p.dirs[ts.Name.Name] = append(p.dirs[ts.Name.Name], strings.Fields(rest)...)
							}
							if rest, ok := strings.CutPrefix(c.Text, "//gen:"); ok {
								p.gens[ts.Name.Name] = append(p.gens[ts.Name.Name], strings.Fields(rest)...)
							}
							if rest, ok := strings.CutPrefix(c.Text, "//mirror:table "); ok {
								p.mirrors[ts.Name.Name] = append(p.mirrors[ts.Name.Name], rest)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil {
					continue
				}
				t := decl.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if id, ok := t.(*ast.Ident); ok {
					if p.methods[id.Name] == nil {
						p.methods[id.Name] = map[string]bool{}
					}
					p.methods[id.Name][decl.Name.Name] = true
				}
			}
		}
	}
	l.pkgs[dir] = p
	return p, nil
}

// field is one JSON member of a record.
type field struct {
	goPath string // v.<goPath>
	inline string // the embedded struct the field is inlined from, or ""
	name   string // JSON name
	kind   string
	elem   string // the record type of rec, recptr and recs kinds
	unique bool   // a string that does not repeat across a page: an id, a number
	named  bool   // a string type other than string, converted to it
	flags  []string
}

// resolved is what a named type is to the codec.
type resolved struct {
	kind string // str, date, extra, custom, rec, params, struct
	spec *ast.TypeSpec
	p    *pkg
}

// resolve finds the named type expr (an identifier, or pkg.Name of a
// package of the module) seen from file f of p.
func (l *loader) resolve(p *pkg, f *ast.File, expr ast.Expr) (*resolved, error) {
	var tp *pkg
	var name string
	switch t := expr.(type) {
	case *ast.Ident:
		tp, name = p, t.Name
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		if !ok {
			return nil, nil
		}
		path := p.imports[f][x.Name]
		rel, ok := strings.CutPrefix(path, l.modPath)
		if !ok {
			return nil, nil
		}
		var err error
		if tp, err = l.load(filepath.Join(l.modDir, rel), ""); err != nil {
			return nil, err
		}
		name = t.Sel.Name
	default:
		return nil, nil
	}
	spec, ok := tp.types[name]
	if !ok {
		return nil, nil
	}
	r := &resolved{spec: spec, p: tp}
	d := tp.dirs[name]
	switch {
	case slices.Contains(d, "date"):
		r.kind = "date"
	case slices.Contains(d, "extra"):
		r.kind = "extra"
	case slices.Contains(d, "record"):
		r.kind = "rec"
	case slices.Contains(d, "params"):
		r.kind = "params"
	case tp.methods[name]["MarshalJSON"] && tp.methods[name]["UnmarshalJSON"]:
		r.kind = "custom"
	default:
		switch u := spec.Type.(type) {
		case *ast.Ident:
			if u.Name == "string" {
				r.kind = "str"
			}
		case *ast.StructType:
			r.kind = "struct"
		}
	}
	if r.kind == "" {
		return nil, nil
	}
	return r, nil
}

// fields lists the JSON members of the struct type named name in p,
// embedded structs inlined.
func (g *gen) fields(p *pkg, name, prefix string, params bool) ([]field, error) {
	st, ok := p.types[name].Type.(*ast.StructType)
	if !ok {
		return nil, errors.New("not a struct")
	}
	f := p.fileOf[name]
	var out []field
	for _, fd := range st.Fields.List {
		tag := ""
		if fd.Tag != nil {
			s, _ := strconv.Unquote(fd.Tag.Value)
			tag = reflect.StructTag(s).Get("json")
		}
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "-" && opts == "" {
			continue
		}
		if len(fd.Names) == 0 { // embedded
			r, err := g.l.resolve(p, f, fd.Type)
			if err != nil {
				return nil, err
			}
			if r == nil || r.kind != "struct" || jsonName != "" {
				return nil, fmt.Errorf("embedded field %s: only an untagged struct of the package can be inlined", types(fd.Type))
			}
			id := fd.Type.(*ast.Ident).Name
			inner, err := g.fields(p, id, prefix+id+".", params)
			if err != nil {
				return nil, err
			}
			for i := range inner {
				if inner[i].inline == "" {
					inner[i].inline = id
				}
			}
			out = append(out, inner...)
			continue
		}
		for _, n := range fd.Names {
			if !n.IsExported() {
				continue
			}
			fl := field{goPath: prefix + n.Name, name: jsonName}
			if fl.name == "" {
				fl.name = n.Name
			}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty", "omitzero":
					fl.flags = append(fl.flags, "codec.OmitEmpty")
				case "string":
					fl.flags = append(fl.flags, "codec.AsString")
				}
			}
			kind, elem, err := g.kind(p, f, fd.Type, params)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", n.Name, err)
			}
			if (kind == "extra" || kind == "anyextra") != strings.Contains(opts, "embed") {
				return nil, fmt.Errorf("field %s: Extra must be tagged json:\",embed\", and only Extra", n.Name)
			}
			fl.kind, fl.elem = kind, elem
			// An id or a document number does not repeat from record to
			// record: a page does not try to share it.
			fl.named = kind == "str" && types(fd.Type) != "string"
			fl.unique = kind == "str" && !fl.named && (fl.name == "id" || strings.HasSuffix(fl.name, "_number"))
			out = append(out, fl)
		}
	}
	return out, nil
}

// kind returns the codec kind of a field of type expr, and for records the
// record type.
func (g *gen) kind(p *pkg, f *ast.File, expr ast.Expr, params bool) (kind, elem string, err error) {
	switch t := expr.(type) {
	case *ast.StarExpr:
		k, e, err := g.kind(p, f, t.X, params)
		switch {
		case err != nil:
			return "", "", err
		case k == "str", k == "bool", k == "int", k == "dec", k == "time", k == "rec":
			return k + "ptr", e, nil
		}
		return "", "", fmt.Errorf("unsupported pointer type %s", types(expr))
	case *ast.ArrayType:
		k, e, err := g.kind(p, f, t.Elt, params)
		if err == nil && t.Len == nil && (k == "rec" || k == "params") {
			return "recs", e, nil
		}
		return "", "", fmt.Errorf("unsupported slice type %s", types(expr))
	case *ast.MapType:
		switch s := types(expr); s {
		case "map[string]jsontext.Value":
			return "rawmap", "", nil
		case "map[string]any":
			if params {
				return "anyextra", "", nil
			}
		}
		return "", "", fmt.Errorf("unsupported map type %s", types(expr))
	case *ast.Ident:
		switch t.Name {
		case "string":
			return "str", "", nil
		case "bool", "int":
			return t.Name, "", nil
		}
	case *ast.SelectorExpr:
		switch types(expr) {
		case "decimal.Decimal":
			return "dec", "", nil
		case "time.Time":
			return "time", "", nil
		case "jsontext.Value":
			return "raw", "", nil
		}
	}
	r, err := g.l.resolve(p, f, expr)
	if err != nil {
		return "", "", err
	}
	if r != nil && r.kind != "struct" {
		if (r.kind == "rec" || r.kind == "params") && r.p != p {
			return "", "", fmt.Errorf("record %s is in another package", types(expr))
		}
		return r.kind, types(expr), nil
	}
	return "", "", fmt.Errorf("unsupported type %s", types(expr))
}

func types(expr ast.Expr) string {
	var b bytes.Buffer
	format.Node(&b, token.NewFileSet(), expr)
	return b.String()
}

// gen accumulates the generated code.
type gen struct {
	l       *loader
	p       *pkg
	buf     bytes.Buffer
	inlined map[string]bool // the embedded structs whose methods are written
}

func (g *gen) printf(format string, args ...any) { fmt.Fprintf(&g.buf, format, args...) }

func (g *gen) record(name string, lenient bool) error {
	fields, err := g.fields(g.p, name, "", false)
	if err != nil {
		return err
	}
	if !hasMeta(g.p.types[name]) {
		return errors.New("a record needs a field `meta codec.Meta`")
	}
	extra := ""
	var members []field
	for _, f := range fields {
		if f.kind == "extra" {
			extra = f.goPath
		} else {
			members = append(members, f)
		}
	}
	if extra == "" {
		return errors.New("a record needs an Extra field")
	}
	shape := lower(name) + "Shape"
	g.printf("// %s numbers %s's fields for the codec.\nvar %s = codec.NewShape([]string{", shape, name, shape)
	var omit []string
	for i, f := range members {
		g.printf("%q, ", f.name)
		if slices.Contains(f.flags, "codec.OmitEmpty") {
			omit = append(omit, strconv.Itoa(i))
		}
	}
	g.printf("}")
	for _, o := range omit {
		g.printf(", %s", o)
	}
	g.printf(")\n\n")
	g.printf("func (v *%s) decodeJSON(d *codec.Decoder) error {\n", name)
	g.printf("if ok, err := d.Begin(&v.meta); !ok {\nreturn err\n}\n*v = %s{}\n", name)
	lenientArg := "nil"
	if lenient {
		lenientArg = "v"
	}
	g.printf("return d.Members(&v.meta, %s, (*map[string]jsontext.Value)(&v.%s), %s, func(name []byte) (int, error) {\nswitch string(name) {\n", shape, extra, lenientArg)
	for i, f := range members {
		if f.inline == "" {
			g.printf("case %q:\nreturn %d, %s\n", f.name, i, decodeCall(f, ""))
		}
	}
	g.printf("}\n")
	for _, b := range inlineBlocks(members) {
		g.printf("if i, err := v.%s.decodeInline(d, name, %d); i >= 0 {\nreturn i, err\n}\n", b.name, b.at)
	}
	g.printf("return -1, nil\n})\n}\n\n")

	g.printf("func (v *%s) encodeJSON(e *codec.Encoder) {\nif !e.Begin(&v.meta, v.%s) {\nreturn\n}\n", name, extra)
	for i, f := range members {
		switch {
		case f.inline == "":
			g.printf("%s\n", encodeCall(strconv.Itoa(i), f, ""))
		case i == 0 || members[i-1].inline != f.inline:
			g.printf("v.%s.encodeInline(e, %d)\n", f.inline, i)
		}
	}
	g.printf("e.End(v.%s)\n}\n\n", extra)

	g.printf("// UnmarshalJSON decodes the %s from JSON with the SDK's rules (see the\n// package documentation, JSON).\n", name)
	g.printf("func (v *%s) UnmarshalJSON(b []byte) error { return codec.Decode(b, false, v.decodeJSON) }\n\n", name)
	g.printf("// MarshalJSON encodes the %s with the SDK's rules: back to the members it\n// was decoded from, then Extra's (see the package documentation, JSON).\n", name)
	g.printf("func (v %s) MarshalJSON() ([]byte, error) { return codec.Marshal(v.encodeJSON) }\n\n", name)
	for _, b := range inlineBlocks(members) {
		if err := g.inline(b, members); err != nil {
			return err
		}
	}
	if lenient {
		g.printf("// Has reports whether the JSON object of the %s has a member named name:\n// for a decoded record, whether the object it came from had one (a field's,\n// even zero or null, or one kept in Extra); for a record built in code,\n// whether it writes one.\n", name)
		g.printf("func (v %s) Has(name string) bool { return v.meta.Has(%s, v.%s, name) }\n\n", name, shape, extra)
		g.printf("// MismatchedFields returns the JSON names of the fields whose value did not\n// fit their Go type, in field order, or nil when every field fit. Those\n// fields are zero; the values the service sent are in Extra.\n")
		g.printf("func (v %s) MismatchedFields() []string { return codec.Mismatched(%s, v.%s) }\n\n", name, shape, extra)
	}
	return nil
}

// block is a run of fields inlined from one embedded struct.
type block struct {
	name  string // the embedded struct's type (and field) name
	at, n int    // its first field's index, and how many fields it has
}

func inlineBlocks(fields []field) []block {
	var out []block
	for i, f := range fields {
		switch {
		case f.inline == "":
		case i > 0 && fields[i-1].inline == f.inline:
			out[len(out)-1].n++
		default:
			out = append(out, block{name: f.inline, at: i, n: 1})
		}
	}
	return out
}

// inline writes, once per embedded struct, the methods that decode and
// encode its fields for the records it is inlined in, numbered from at.
func (g *gen) inline(b block, fields []field) error {
	if g.inlined[b.name] {
		return nil
	}
	if g.inlined == nil {
		g.inlined = map[string]bool{}
	}
	g.inlined[b.name] = true
	own := fields[b.at : b.at+b.n]
	prefix := b.name + "."
	g.printf("func (v *%s) decodeInline(d *codec.Decoder, name []byte, at int) (int, error) {\nswitch string(name) {\n", b.name)
	for k, f := range own {
		g.printf("case %q:\nreturn at + %d, %s\n", f.name, k, decodeCall(f, prefix))
	}
	g.printf("}\nreturn -1, nil\n}\n\n")
	g.printf("func (v *%s) encodeInline(e *codec.Encoder, at int) {\n", b.name)
	for k, f := range own {
		g.printf("%s\n", encodeCall("at+"+strconv.Itoa(k), f, prefix))
	}
	g.printf("}\n\n")
	return nil
}

func (g *gen) params(name string) error {
	fields, err := g.fields(g.p, name, "", true)
	if err != nil {
		return err
	}
	extra := ""
	g.printf("func (v *%s) encodeJSON(e *codec.Encoder) {\ne.BeginParams()\n", name)
	for i, f := range fields {
		if f.kind == "anyextra" {
			extra = f.goPath
			continue
		}
		g.printf("%s\n", encodeCall(strconv.Itoa(i), f, ""))
	}
	if extra == "" {
		return errors.New("params need an Extra map[string]any field")
	}
	g.printf("e.EndParams(v.%s)\n}\n\n", extra)
	g.printf("// MarshalJSON encodes the request body as the Client sends it: unset\n// optional fields left out, money as exact numbers, then Extra's members.\n// A member it cannot send is the error marshalParams makes of it.\n")
	g.printf("func (v %s) MarshalJSON() ([]byte, error) { return marshalParams(v.encodeJSON) }\n\n", name)
	return nil
}

func hasMeta(ts *ast.TypeSpec) bool {
	st := ts.Type.(*ast.StructType)
	for _, f := range st.Fields.List {
		if len(f.Names) == 1 && f.Names[0].Name == "meta" && types(f.Type) == "codec.Meta" {
			return true
		}
	}
	return false
}

func lower(s string) string { return strings.ToLower(s[:1]) + s[1:] }

func flags(f field) string {
	if len(f.flags) == 0 {
		return "0"
	}
	return strings.Join(f.flags, "|")
}

func decodeCall(f field, prefix string) string {
	v := "&v." + strings.TrimPrefix(f.goPath, prefix)
	switch f.kind {
	case "str":
		if f.unique {
			return "d.Unique(" + v + ")"
		}
		if f.named {
			v = "(*string)(" + v + ")"
		}
		return "d.String(" + v + ")"
	case "strptr":
		return "codec.ReadStringPtr(d, " + v + ")"
	case "bool", "boolptr", "int", "intptr", "time", "timeptr", "raw", "rawmap", "custom":
		return "d." + method(f.kind) + "(" + v + ")"
	case "dec", "decptr":
		return "d." + method(f.kind) + "(" + v + ", " + flags(f) + ")"
	case "date":
		return "d.Date((*codec.Date)(" + v + "))"
	case "rec":
		return "codec.ReadRecord(d, " + v + ", (*" + f.elem + ").decodeJSON)"
	case "recptr":
		return "codec.ReadRecordPtr(d, " + v + ", (*" + f.elem + ").decodeJSON)"
	case "recs":
		return "codec.ReadRecords(d, " + v + ", (*" + f.elem + ").decodeJSON)"
	}
	panic(f.kind)
}

func encodeCall(i string, f field, prefix string) string {
	v := "v." + strings.TrimPrefix(f.goPath, prefix)
	args := fmt.Sprintf("%s, %q, ", i, f.name)
	switch f.kind {
	case "str":
		if f.named {
			v = "string(" + v + ")"
		}
		return "e.String(" + args + v + ", " + flags(f) + ")"
	case "strptr":
		return "codec.WriteStringPtr(e, " + args + v + ", " + flags(f) + ")"
	case "bool", "boolptr", "int", "intptr", "time", "timeptr", "raw", "rawmap", "custom", "dec", "decptr":
		return "e." + method(f.kind) + "(" + args + v + ", " + flags(f) + ")"
	case "date":
		return "e.Date(" + args + "codec.Date(" + v + "), " + flags(f) + ")"
	case "rec":
		return "codec.WriteRecord(e, " + args + "&" + v + ", (*" + f.elem + ").encodeJSON, " + flags(f) + ")"
	case "recptr":
		return "codec.WriteRecordPtr(e, " + args + v + ", (*" + f.elem + ").encodeJSON, " + flags(f) + ")"
	case "recs":
		return "codec.WriteRecords(e, " + args + v + ", (*" + f.elem + ").encodeJSON, " + flags(f) + ")"
	}
	panic(f.kind)
}

// method is the Decoder or Encoder method of a kind.
func method(kind string) string {
	return map[string]string{
		"bool": "Bool", "boolptr": "BoolPtr", "int": "Int", "intptr": "IntPtr", "dec": "Decimal", "decptr": "DecimalPtr",
		"time": "Time", "timeptr": "TimePtr", "raw": "Raw", "rawmap": "RawMap", "custom": "Custom",
	}[kind]
}

// generateServices writes the methods of the package's services (see the
// package documentation), or returns nil when it has none.
func generateServices(dir, out string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{pkgs: map[string]*pkg{}}
	if l.modDir, l.modPath, err = findModule(abs); err != nil {
		return nil, err
	}
	p, err := l.load(abs, filepath.Base(out))
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range p.gens {
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	slices.SortFunc(names, func(a, b string) int { return int(p.types[a].Pos() - p.types[b].Pos()) })
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by recordgen from the services' //gen:service lines; DO NOT EDIT.\n\npackage %s\n\nimport (\n\t\"context\"\n\t\"iter\"\n)\n\n", p.name)
	for _, name := range names {
		if err := service(&b, name, p.gens[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return format.Source(b.Bytes())
}

// service writes the methods of the service named name that its //gen:service
// fields ask for.
func service(b *bytes.Buffer, name string, fields []string) error {
	kv := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	path, key, rec, noun := kv["path"], kv["key"], kv["record"], strings.ReplaceAll(kv["noun"], "_", " ")
	if kv["service"] != "" || path == "" || rec == "" || noun == "" {
		return errors.New("a //gen:service line needs path=, record= and noun=")
	}
	if p, ok := kv["list"]; ok {
		fmt.Fprintf(b, "// List iterates over the %[1]s matching p (nil for all), fetching pages\n// of 100 lazily, the records under the key %[2]q or \"items\". Stop early with\n// break; a failure is yielded as the last error. WithPrefetch(n) fetches up to\n// n pages ahead; Collect and First gather the records.\n", noun+"s", key)
		fmt.Fprintf(b, "func (s *%s) List(ctx context.Context, p *%s, opts ...ListOption) iter.Seq2[*%s, error] {\nreturn list[%s](ctx, s.c, %q, %q, p, opts)\n}\n\n", name, p, rec, rec, path, key)
		fmt.Fprintf(b, "// ListPage fetches one page of %s matching p (nil for the first page with\n// the service's default size).\n", noun+"s")
		fmt.Fprintf(b, "func (s *%s) ListPage(ctx context.Context, p *%s, opts ...RequestOption) (*Page[%s], error) {\nreturn listPage[%s](ctx, s.c, %q, %q, p, opts)\n}\n\n", name, p, rec, rec, path, key)
	}
	if _, ok := kv["get"]; ok {
		fmt.Fprintf(b, "// Get fetches one %s. An unknown id is ErrNotFound; an id that is not a\n// UUID is a *ParamError.\n", noun)
		fmt.Fprintf(b, "func (s *%s) Get(ctx context.Context, id string, opts ...RequestOption) (*%s, error) {\nreturn get[%s](ctx, s.c, %q, id, opts)\n}\n\n", name, rec, rec, path)
	}
	if title, ok := kv["pdf"]; ok {
		fmt.Fprintf(b, "// PDF streams the %s as a PDF; File.Filename is \"%s-<number>.pdf\", as the\n// service names it. The caller must Close the File.\n", noun, title)
		fmt.Fprintf(b, "func (s *%s) PDF(ctx context.Context, id string, opts ...RequestOption) (*File, error) {\nreturn s.c.downloadPDF(ctx, %q, id, opts)\n}\n\n", name, path)
	}
	if p, ok := kv["create"]; ok {
		fmt.Fprintf(b, "// Create creates a %s and returns it as the service does (201). The SDK\n// checks nothing but a nil p and Extra's clashes; the service's validation\n// errors come back as *Error (ErrValidation). Creates are never repeated\n// after a 5xx or a network error.\n", noun)
		method := strings.TrimSuffix(name, "Service") + "s.Create" // as the Client's field names the service
		fmt.Fprintf(b, "func (s *%s) Create(ctx context.Context, p *%s, opts ...RequestOption) (*%s, error) {\nreturn createRequired[%s](ctx, s.c, %q, %q, p, opts)\n}\n\n", name, p, rec, rec, method, path)
	}
	return nil
}
