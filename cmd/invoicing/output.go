package main

import (
	"cmp"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// The environment variables the reads take their configuration from: the
// SDK's own, read by the same rule as NewClient.
const (
	envBaseURL = invoicing.EnvBaseURL
	envAPIKey  = invoicing.EnvAPIKey
)

// apiClient returns an SDK client for the service the environment names.
// Missing or unusable configuration is a usage error of cmd; the key is
// never part of the message.
func (c *cli) apiClient(cmd string) (*invoicing.Client, error) {
	keyVar := c.apiKeyVar()
	baseURL, key := c.getenv(envBaseURL), c.getenv(keyVar)
	switch {
	case baseURL == "":
		return nil, usagef(cmd, "%s is not set: set it to the API's base URL, including /api/v1/external ('invoicing mock' prints one)", envBaseURL)
	case key == "" && c.business != "":
		return nil, usagef(cmd, "%s is not set: with --business %s it holds that business's API key ('invoicing mock --business %s' exports it)", keyVar, c.business, c.business)
	case key == "":
		return nil, usagef(cmd, "%s is not set: set it to an API key of the business", keyVar)
	}
	client, err := invoicing.NewClient(baseURL, key, invoicing.WithUserAgent("invoicing-cli/"+invoicing.Version))
	if err != nil {
		return nil, usagef(cmd, "%s or %s is unusable: %v", envBaseURL, keyVar, err)
	}
	return client, nil
}

// listFormat is how a list is written.
type listFormat int

const (
	formatTable listFormat = iota // columns fitted to the terminal
	formatJSON                    // one JSON object per line
	formatCSV                     // a header row, then one row per record
)

// formatFlags adds --json and --csv to fs; the function it returns gives
// the chosen format once fs is parsed.
func formatFlags(fs *flag.FlagSet) func() (listFormat, error) {
	asJSON := fs.Bool("json", false, "write one JSON object per line (for jq), amounts as numbers with at least two decimals")
	asCSV := fs.Bool("csv", false, "write CSV: a header row, then one row per record")
	return func() (listFormat, error) {
		switch {
		case *asJSON && *asCSV:
			return 0, usagef(fs.Name(), "--json and --csv cannot be combined")
		case *asJSON:
			return formatJSON, nil
		case *asCSV:
			return formatCSV, nil
		}
		return formatTable, nil
	}
}

// listing is how the records of one resource are listed: the noun that
// names them, the columns of the table and the CSV, the order in which
// table columns give way on a narrow terminal, and the money members of
// their JSON.
type listing[T any] struct {
	noun    string
	columns []column[T]
	drop    []string
	money   moneyPaths
}

// column is one column of a list: its table header, its CSV header (the
// API's field name) and how to show a record in it.
type column[T any] struct {
	header string
	field  string
	value  func(*T) string
	right  bool // amounts are right-aligned
	flex   bool // names and titles are shortened to fit
}

// writeList writes every record of seq in the format: a table (whose
// columns in l.drop are left out, in order, when the terminal is too
// narrow), JSON lines (each record as the SDK encodes it, with the API's
// field names, amounts as writeJSONLine writes them) or CSV with every
// column. Long lists count their progress on stderr when it is a terminal.
func writeList[T any](c *cli, seq iter.Seq2[*T, error], f listFormat, l listing[T]) error {
	cols, noun := l.columns, l.noun
	p := c.newProgress(noun)
	defer p.done()
	row := func(rec *T) []string {
		r := make([]string, len(cols))
		for i, col := range cols {
			r[i] = col.value(rec)
		}
		return r
	}
	switch f {
	case formatJSON:
		return eachRecord(seq, p, func(rec *T) error { return writeJSONLine(c.stdout, rec, l.money) })
	case formatCSV:
		w := csv.NewWriter(c.stdout)
		fields := make([]string, len(cols))
		for i, col := range cols {
			fields[i] = col.field
		}
		err := w.Write(fields)
		if err == nil {
			err = eachRecord(seq, p, func(rec *T) error { return w.Write(row(rec)) })
		}
		w.Flush()
		return cmp.Or(err, w.Error())
	}

	var rows [][]string
	if err := eachRecord(seq, p, func(rec *T) error { rows = append(rows, row(rec)); return nil }); err != nil {
		return err
	}
	p.done()
	if len(rows) == 0 {
		fmt.Fprintf(c.stdout, "No %s.\n", noun)
		return nil
	}
	t := &table{rows: rows, right: make([]bool, len(cols)), flex: make([]bool, len(cols))}
	for i, col := range cols {
		t.headers = append(t.headers, col.header)
		t.right[i], t.flex[i] = col.right, col.flex
	}
	t.drop = columnIndexes(t.headers, l.drop...)
	t.write(c.stdout, c.tableWidth())
	return nil
}

// eachRecord calls emit for every record of seq, counting it in p, and
// stops at the first error.
func eachRecord[T any](seq iter.Seq2[*T, error], p *progress, emit func(*T) error) error {
	for rec, err := range seq {
		if err != nil {
			return err
		}
		if err := emit(rec); err != nil {
			return err
		}
		p.add()
	}
	return nil
}

// writeJSONLine writes v as one line of JSON with the SDK's options
// (jsonopt.Encode): a record as the service sent it, every member the SDK
// does not model included, its money members (money) exact JSON numbers
// with at least two decimals (2649.90, 0.00, 0.125), as tables and CSV show
// them. Strings are escaped only where JSON requires it (encoding/json,
// which the command used before, also escaped <, > and &).
func writeJSONLine(w io.Writer, v any, money moneyPaths) error {
	b, err := json.Marshal(v, jsonopt.Encode)
	if err == nil {
		b, err = withMoneyPlaces(b, money)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeFields writes name-value pairs in two aligned columns, leaving out
// empty values.
func writeFields(w io.Writer, pairs [][2]string) {
	width := 0
	for _, p := range pairs {
		width = max(width, displayWidth(p[0]))
	}
	for _, p := range pairs {
		if p[1] != "" {
			fmt.Fprintf(w, "%-*s  %s\n", width, p[0], oneLine(p[1]))
		}
	}
}

// filter is the one filter flag of a list command: --flag (described by
// usage), one of values in any case, called what in its errors.
type filter[E ~string] struct {
	flag, usage, what string
	values            []E
}

// runList runs a list command (cmd, such as "invoices list") with its
// filter and the format flags: it writes the records list gives for the
// filter's value (empty: all of them) with writeList.
func runList[T any, E ~string](c *cli, args []string, cmd, help string, f filter[E], l listing[T], list func(*invoicing.Client, E) iter.Seq2[*T, error]) error {
	fs := newFlags(cmd)
	value := fs.String(f.flag, "", f.usage)
	format := formatFlags(fs)
	rest, err := c.parseWithBusiness(fs, help, args)
	if err != nil {
		return err
	}
	if err := noArgs(cmd, rest); err != nil {
		return err
	}
	lf, err := format()
	if err != nil {
		return err
	}
	v, err := enumFlag(cmd, f.what, *value, f.values)
	if err != nil {
		return err
	}
	client, err := c.apiClient(cmd)
	if err != nil {
		return err
	}
	return writeList(c, list(client, v), lf, l)
}

// runGet runs a get command (cmd, such as "invoices get") for one record
// of the kind noun: it prints the record get returns with show, or as one
// JSON object with --json (its money members as writeJSONLine writes them).
func runGet[T any](c *cli, args []string, cmd, help, noun string, money moneyPaths, get func(*invoicing.Client, string) (*T, error), show func(*T)) error {
	fs := newFlags(cmd)
	asJSON := fs.Bool("json", false, "print the "+noun+" as one JSON object")
	_, rec, err := fetch(c, fs, help, noun, args, get)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSONLine(c.stdout, rec, money)
	}
	show(rec)
	return nil
}

// runPDF runs a pdf command (cmd, such as "invoices pdf") for one record of
// the kind noun: it saves the PDF that pdf downloads with savePDF, as
// fallback+"-ID.pdf" when the service names no file.
func runPDF(c *cli, args []string, cmd, help, noun, fallback string, pdf func(*invoicing.Client, string) (*invoicing.File, error)) error {
	fs := newFlags(cmd)
	out := fs.String("o", "", "write the PDF to `FILE` (- for stdout)")
	id, file, err := fetch(c, fs, help, noun, args, pdf)
	if err != nil {
		return err
	}
	return c.savePDF(file, *out, fallback+"-"+id+".pdf")
}

// fetch parses the command line of a command that takes the id of one
// record of the kind noun (see parseID), and returns the id and what get
// returns for it.
func fetch[T any](c *cli, fs *flag.FlagSet, help, noun string, args []string, get func(*invoicing.Client, string) (*T, error)) (string, *T, error) {
	id, client, err := c.parseID(fs, help, noun, args)
	if err != nil {
		return "", nil, err
	}
	rec, err := get(client, id)
	return id, rec, err
}

// parseID parses the command line of a command that takes one record id
// (a UUID, the form of every id) and reads the API configuration. It
// returns the id and an SDK client.
func (c *cli) parseID(fs *flag.FlagSet, help, noun string, args []string) (string, *invoicing.Client, error) {
	cmd := fs.Name()
	rest, err := c.parseWithBusiness(fs, help, args)
	if err != nil {
		return "", nil, err
	}
	if len(rest) != 1 {
		return "", nil, usagef(cmd, "%s takes one %s id", cmd, noun)
	}
	if _, err := uuid.Parse(rest[0]); err != nil {
		return "", nil, usagef(cmd, "%q is not a valid %s id: ids are UUIDs", rest[0], noun)
	}
	client, err := c.apiClient(cmd)
	return rest[0], client, err
}

// savePDF writes a downloaded PDF to out: "-" for stdout, "" for the file
// name the service gave (fallback, when it gave none), else the path given.
// A file is written whole or not at all.
func (c *cli) savePDF(file *invoicing.File, out, fallback string) error {
	defer file.Close()
	if out == "-" {
		_, err := io.Copy(c.stdout, file)
		return err
	}
	if out == "" {
		out = file.Filename
	}
	if out == "" {
		out = fallback
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".*.tmp")
	if err != nil {
		return err
	}
	var n int64
	err = writeAndClose(tmp, func(w io.Writer) error {
		var err error
		n, err = io.Copy(w, file)
		return err
	})
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving %s: %w", out, err)
	}
	fmt.Fprintf(c.stdout, "Saved %s (%d bytes)\n", out, n)
	return nil
}
