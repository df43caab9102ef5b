package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// Unit tests of the pieces the binary tests cannot reach: a terminal on
// stderr, and the corners of argument parsing and table fitting.

func TestProgressCountsPagesAndRubsItOut(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, noun: "invoices"}
	for range 250 {
		p.add()
	}
	p.done()
	assert.Equal(t, "\r100 invoices...\r200 invoices...\r\033[K", buf.String())

	quiet := (&cli{stderr: io.Discard}).newProgress("quotes")
	for range 250 {
		quiet.add()
	}
	quiet.done()
	assert.Nil(t, quiet.w, "no progress when stderr is not a terminal")
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(w), "a pipe")
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a file")
	assert.False(t, isTerminal(&bytes.Buffer{}), "not an *os.File")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, isTerminal(null), "a character device that is not a terminal")
	assert.Equal(t, 0, (&cli{stdout: null, getenv: func(string) string { return "" }}).tableWidth(), "output to /dev/null has no width limit")
}

func TestParseTakesFlagsAnywhereAndStopsAtDoubleDash(t *testing.T) {
	c := &cli{stdout: io.Discard}
	fs := newFlags("x")
	asJSON := fs.Bool("json", false, "")
	out := fs.String("o", "", "")
	args, err := c.parse(fs, "", []string{"a", "--json", "b", "-o", "f", "--", "--c", "-o"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "--c", "-o"}, args)
	assert.True(t, *asJSON)
	assert.Equal(t, "f", *out)

	_, err = c.parse(newFlags("x"), "", []string{"--nope"})
	var u *usageError
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "x", u.cmd)
}

func TestTableShortensThenDropsThenCuts(t *testing.T) {
	tbl := func() *table {
		return &table{
			headers: []string{"A", "NAME", "AMOUNT", "EMPTY"},
			rows:    [][]string{{"a1", "a rather long name here", "1.00", ""}, {"a2", "short\nname", "100.00", ""}},
			right:   []bool{false, false, true, false},
			flex:    []bool{false, true, false, false},
			drop:    []int{2, 1},
		}
	}
	var buf bytes.Buffer
	tbl().write(&buf, 0)
	assert.Equal(t, "A   NAME                     AMOUNT\na1  a rather long name here    1.00\na2  short name               100.00\n", buf.String(),
		"aligned, amounts right, empty columns left out, control characters blanked")

	buf.Reset()
	tbl().write(&buf, 24)
	assert.Equal(t, "A   NAME          AMOUNT\na1  a rather lo…    1.00\na2  short name    100.00\n", buf.String(), "the name is shortened first")

	buf.Reset()
	tbl().write(&buf, 14)
	assert.Equal(t, "A   NAME\na1  a rather …\na2  short name\n", buf.String(), "then AMOUNT is dropped")

	buf.Reset()
	tbl().write(&buf, 3)
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		assert.LessOrEqual(t, displayWidth(l), 3, "and lines are cut as a last resort: %q", l)
	}
}

// Columns line up on a terminal whatever the script: widths are display
// widths (two columns for CJK and emoji, none for a combining accent), not
// rune counts.
func TestTableAlignsWideAndCombiningCharacters(t *testing.T) {
	tbl := &table{
		headers: []string{"NAME", "AMOUNT"},
		rows: [][]string{
			{"株式会社テスト", "1.00"},
			{"Café", "100.00"},
			{"👩‍💻 Dev", "2.00"},
			{"e\u0301cole", "3.00"},
		},
		right: []bool{false, true},
		flex:  []bool{true, false},
	}
	var buf bytes.Buffer
	tbl.write(&buf, 0)
	assert.Equal(t, ""+
		"NAME            AMOUNT\n"+
		"株式会社テスト    1.00\n"+
		"Café            100.00\n"+
		"👩‍💻 Dev            2.00\n"+
		"e\u0301cole             3.00\n", buf.String())

	assert.Equal(t, "株式…", truncate("株式会社テスト", 6), "a wide character that does not fit is left out")
	assert.Equal(t, "👩‍💻…", truncate("👩‍💻 Dev", 3), "an emoji sequence is kept whole")
	assert.Equal(t, "e\u0301…", truncate("e\u0301cole", 2), "with its combining accent")
	assert.Equal(t, 14, displayWidth("株式会社テスト"))
}

func TestTablesOfWideTextFitTheWidth(t *testing.T) {
	tbl := &table{
		headers: []string{"CLIENT", "TOTAL"},
		rows:    [][]string{{"株式会社テスト・サンプル・ホールディングス", "1375.00"}, {"🍞🥐🥖 Harbour Lane Bakery", "12.50"}},
		right:   []bool{false, true},
		flex:    []bool{true, false},
	}
	var buf bytes.Buffer
	tbl.write(&buf, 24)
	for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		assert.LessOrEqual(t, displayWidth(l), 24, "%q", l)
		assert.True(t, strings.HasSuffix(l, "1375.00") || strings.HasSuffix(l, "12.50") || strings.HasSuffix(l, "TOTAL"), "%q", l)
	}
}

func TestEnumFlagIgnoresCase(t *testing.T) {
	for _, v := range []string{"sales", "Sales", "SALES"} {
		got, err := enumFlag("items list", "item type", v, itemTypes)
		require.NoError(t, err)
		assert.Equal(t, invoicing.ItemTypeSales, got)
	}
	st, err := enumFlag("invoices list", "status", "Awaiting_Payment", invoiceStatuses)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, st)
	none, err := enumFlag("quotes list", "status", "", quoteStatuses)
	require.NoError(t, err)
	assert.Empty(t, none, "no flag, no filter")
}
