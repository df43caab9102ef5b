package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// env is a getenv over a fixed map, so tests never touch the process's
// environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// setup starts an in-memory server holding n demo invoices, and a Client
// whose requests in flight are counted.
func setup(t *testing.T, n int) (*invoicingtest.Server, *invoicing.Client, *flightCounter) {
	t.Helper()
	srv := invoicingtest.NewTestServer(t)
	fc := &flightCounter{}
	c := srv.Client(invoicing.WithMiddleware(fc.middleware))
	require.NoError(t, createDemoInvoices(context.Background(), c, n))
	return srv, c, fc
}

// testConfig syncs into dir with pages of 10, 3 fetched ahead, quietly.
func testConfig(dir string, fc *flightCounter) config {
	return config{outDir: dir, prefetch: 3, pageSize: 10, source: "test server", flights: fc, progress: io.Discard, every: time.Hour}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, path)
	return rows
}

func readCheckpoint(t *testing.T, dir string) checkpoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	require.NoError(t, err)
	var cp checkpoint
	require.NoError(t, json.Unmarshal(b, &cp))
	return cp
}

// wantRows returns the rows both files should hold, built from the JSON the
// service sends for its invoices, with every number as the text it sent.
func wantRows(t *testing.T, c *invoicing.Client) (invoices, lines [][]string) {
	t.Helper()
	var raw jsontext.Value
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/invoices?page_size=100", nil, &raw))
	type object = map[string]jsontext.Value
	var page struct {
		Invoices []object `json:"invoices"`
		HasMore  bool     `json:"has_more"`
	}
	require.NoError(t, json.Unmarshal(raw, &page))
	require.False(t, page.HasMore, "the test expects at most 100 invoices")
	text := func(v jsontext.Value) string {
		switch v.Kind() {
		case 'n':
			return ""
		case '"':
			var s string
			require.NoError(t, json.Unmarshal(v, &s))
			return s
		case '0':
			return string(v)
		}
		t.Fatalf("unexpected JSON value %q", v)
		return ""
	}
	invoices = [][]string{invoiceHeader}
	lines = [][]string{lineHeader}
	for _, inv := range page.Invoices {
		row := make([]string, len(invoiceHeader))
		for i, col := range invoiceHeader {
			row[i] = text(inv[col])
		}
		invoices = append(invoices, row)
		var items []object
		require.NoError(t, json.Unmarshal(inv["line_items"], &items))
		for n, l := range items {
			row := []string{text(inv["id"]), strconv.Itoa(n + 1)}
			for _, col := range lineHeader[2:] {
				row = append(row, text(l[col]))
			}
			lines = append(lines, row)
		}
	}
	return invoices, lines
}

func TestSyncCopiesEveryInvoiceAndLineOnceWithExactText(t *testing.T) {
	_, c, fc := setup(t, 95)
	dir := t.TempDir()
	res, err := syncInvoices(context.Background(), c, testConfig(dir, fc))
	require.NoError(t, err)
	assert.Equal(t, 95, res.invoices)
	assert.Equal(t, 9, res.lastPage, "the tenth page holds 5 invoices: it is not checkpointed")

	invoices, lines := wantRows(t, c)
	require.Len(t, invoices, 96)
	assert.Equal(t, invoices, readCSV(t, filepath.Join(dir, invoicesFile)))
	assert.Equal(t, lines, readCSV(t, filepath.Join(dir, linesFile)))
	assert.Equal(t, len(lines)-1, res.lines)

	// The rows are the service's, once each and in its order, with the
	// decimals as the service wrote them: a sample to show what that means.
	ids := map[string]int{}
	for _, row := range invoices[1:] {
		ids[row[0]]++
	}
	assert.Len(t, ids, 95)
	got := readCSV(t, filepath.Join(dir, linesFile))
	assert.Equal(t, []string{"2.5", "0.125", "0.31", "0.00"}, got[2][4:8], "2.5 x 0.125 at 1%%: %v", got[2])
	assert.Equal(t, "1234.50", got[3][5], "a price sent as 1234.5 is written as the service returns it")
	notes := readCSV(t, filepath.Join(dir, invoicesFile))[4][13]
	assert.Equal(t, "Deliver to \"Dock 4\", Sydney\nPO 10003", notes, "quotes, a comma and a newline survive CSV")

	cp := readCheckpoint(t, dir)
	assert.Equal(t, checkpoint{Source: "test server", PageSize: 10, Page: 9, InvoicesBytes: cp.InvoicesBytes, LinesBytes: cp.LinesBytes}, cp)
	fi, err := os.Stat(filepath.Join(dir, invoicesFile))
	require.NoError(t, err)
	assert.Less(t, cp.InvoicesBytes, fi.Size(), "the checkpoint ends before the last, partial page")
}

func TestResumedSyncMatchesAnUninterruptedOne(t *testing.T) {
	srv, c, fc := setup(t, 95)
	whole := t.TempDir()
	_, err := syncInvoices(context.Background(), c, testConfig(whole, fc))
	require.NoError(t, err)

	// Interrupted once page 4 is on disk, then a crash leaves a long
	// unfinished row at the end of both files: longer than what the rest of
	// the sync writes, so that only truncating the files removes it.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(dir, fc)
	cfg.afterPage = func(page int) {
		if page == 4 {
			cancel()
		}
	}
	res, err := syncInvoices(ctx, c, cfg)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "run again to resume after page")
	cp := readCheckpoint(t, dir)
	require.Equal(t, res.lastPage, cp.Page)
	require.GreaterOrEqual(t, cp.Page, 4)
	require.Less(t, cp.Page, 9, "the sync stopped before the end")
	for _, name := range []string{invoicesFile, linesFile} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(`0000,"` + strings.Repeat("half a row ", 10000))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}

	before := len(srv.Requests())
	res, err = syncInvoices(context.Background(), c, testConfig(dir, fc))
	require.NoError(t, err)
	assert.Equal(t, cp.Page+1, res.firstPage)
	assert.Equal(t, 95-cp.Page*10, res.invoices, "the resumed run copies only the rest")

	for _, name := range []string{invoicesFile, linesFile, checkpointFile} {
		want, err := os.ReadFile(filepath.Join(whole, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), name)
	}

	// The resumed run asked for the total, then for the pages after the
	// checkpoint only.
	for _, r := range srv.Requests()[before:] {
		q, err := url.ParseQuery(r.RawQuery)
		require.NoError(t, err)
		if q.Get("page_size") == "1" {
			continue
		}
		page, err := strconv.Atoi(q.Get("page"))
		require.NoError(t, err, r.RawQuery)
		assert.Greater(t, page, cp.Page, r.RawQuery)
	}
}

func TestInvoicesCreatedMeanwhileAreCopiedOnce(t *testing.T) {
	_, c, fc := setup(t, 45)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(dir, fc)
	cfg.prefetch = 0 // one page at a time: the run stops right after page 2
	cfg.afterPage = func(page int) {
		if page == 2 {
			cancel()
		}
	}
	_, err := syncInvoices(ctx, c, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, readCheckpoint(t, dir).Page)

	// Invoices created while the sync is stopped come after the ones
	// listed: the resumed run copies them.
	require.NoError(t, createDemoInvoices(context.Background(), c, 12))
	res, err := syncInvoices(context.Background(), c, testConfig(dir, fc))
	require.NoError(t, err)
	assert.Equal(t, 37, res.invoices)
	assert.Equal(t, 5, res.lastPage)

	// A run after the sync completed re-reads the last, partial page and
	// copies what was created since.
	require.NoError(t, createDemoInvoices(context.Background(), c, 3))
	res, err = syncInvoices(context.Background(), c, testConfig(dir, fc))
	require.NoError(t, err)
	assert.Equal(t, 6, res.firstPage)
	assert.Equal(t, 10, res.invoices, "page 6: 7 invoices copied before and 3 new ones")

	rows := readCSV(t, filepath.Join(dir, invoicesFile))
	require.Len(t, rows, 61)
	for i, row := range rows[1:] {
		assert.Equal(t, fmt.Sprintf("INV-%04d", i+1), row[1], "each invoice once, in the service's order")
	}
	want, _ := wantRows(t, c)
	assert.Equal(t, want, rows)
}

func TestACheckpointOfAnotherSyncIsRefused(t *testing.T) {
	_, c, fc := setup(t, 25)
	dir := t.TempDir()
	_, err := syncInvoices(context.Background(), c, testConfig(dir, fc))
	require.NoError(t, err)

	other := testConfig(dir, fc)
	other.source = "https://other.example/api/v1/external"
	_, err = syncInvoices(context.Background(), c, other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-restart")

	bigger := testConfig(dir, fc)
	bigger.pageSize = 20
	_, err = syncInvoices(context.Background(), c, bigger)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-page-size 10")

	// -restart starts afresh: every invoice once.
	bigger.restart = true
	res, err := syncInvoices(context.Background(), c, bigger)
	require.NoError(t, err)
	assert.Equal(t, 25, res.invoices)
	want, _ := wantRows(t, c)
	assert.Equal(t, want, readCSV(t, filepath.Join(dir, invoicesFile)))
	assert.Equal(t, checkpoint{Source: "test server", PageSize: 20, Page: 1}, func() checkpoint {
		cp := readCheckpoint(t, dir)
		cp.InvoicesBytes, cp.LinesBytes = 0, 0
		return cp
	}())
}

var progressRE = regexp.MustCompile(`^  (\d+)/(\d+) invoices  \d+ invoices/s  (\d+) pages in flight  ETA (\S+)$`)

func TestProgressCountsPagesInFlight(t *testing.T) {
	srv, c, fc := setup(t, 60)
	srv.SetLatency(5*time.Millisecond, 0)

	for _, prefetch := range []int{0, 3} {
		t.Run(fmt.Sprintf("prefetch %d", prefetch), func(t *testing.T) {
			var out bytes.Buffer
			cfg := testConfig(t.TempDir(), fc)
			cfg.prefetch = prefetch
			cfg.progress = &out
			cfg.every = time.Nanosecond // a line for every invoice
			res, err := syncInvoices(context.Background(), c, cfg)
			require.NoError(t, err)
			t.Log("\n" + out.String())

			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			require.Len(t, lines, 62, "60 progress lines and a summary of two")
			last := 0
			for _, l := range lines[:60] {
				m := progressRE.FindStringSubmatch(l)
				require.NotNil(t, m, l)
				done, _ := strconv.Atoi(m[1])
				assert.Greater(t, done, last, l)
				last = done
				assert.Equal(t, "60", m[2], l)
				inFlight, _ := strconv.Atoi(m[3])
				assert.LessOrEqual(t, inFlight, prefetch, l)
			}
			assert.Equal(t, "ETA 0s", lines[59][strings.LastIndex(lines[59], "ETA"):])
			if prefetch == 0 {
				assert.Equal(t, int64(1), res.maxFlights, "one page at a time")
			} else {
				assert.GreaterOrEqual(t, res.maxFlights, int64(2), "pages are fetched ahead")
				assert.LessOrEqual(t, res.maxFlights, int64(prefetch))
			}
			assert.Regexp(t, fmt.Sprintf(`^Done: copied 60 invoices and \d+ line items in \S+: \d+ invoices/s; pages in flight: at most %d$`, res.maxFlights), lines[60])
			assert.Equal(t, filepath.Join(cfg.outDir, invoicesFile)+" holds 60 invoices, "+filepath.Join(cfg.outDir, linesFile)+" their line items; checkpoint: page 6", lines[61])
		})
	}
}

func TestRunDemo(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	f := flags{outDir: dir, prefetch: 2, pageSize: 10, demoInvoices: 30, demoLatency: time.Millisecond}
	require.NoError(t, run(context.Background(), &out, f, env(nil)))
	t.Log("\n" + out.String())
	assert.Contains(t, out.String(), "Filling the in-memory Invoicing Service with 30 invoices")
	assert.Contains(t, out.String(), "Done: copied 30 invoices and 60 line items in ")
	assert.Len(t, readCSV(t, filepath.Join(dir, invoicesFile)), 31)
	assert.Equal(t, demoSource, readCheckpoint(t, dir).Source)

	f.prefetch = invoicing.MaxPrefetch + 1
	assert.ErrorContains(t, run(context.Background(), &out, f, env(nil)), "-prefetch must be between 0 and 64")
	f.prefetch, f.pageSize = 1, 101
	assert.ErrorContains(t, run(context.Background(), &out, f, env(nil)), "-page-size must be between 1 and 100")
}

func TestRunWithAKeyCopiesThatAccountReadOnly(t *testing.T) {
	srv, _, _ := setup(t, 23)
	before := len(srv.Requests())
	var out bytes.Buffer
	dir := t.TempDir()
	f := flags{outDir: dir, prefetch: 2, pageSize: 10}
	require.NoError(t, run(context.Background(), &out, f, env(map[string]string{envBaseURL: srv.URL, envAPIKey: srv.ReadOnlyKey})))
	t.Log("\n" + out.String())

	assert.Contains(t, out.String(), "Copying the invoices of "+srv.URL+" into "+dir)
	assert.Contains(t, out.String(), "Done: copied 23 invoices")
	assert.NotContains(t, out.String(), srv.ReadOnlyKey)
	assert.Equal(t, srv.URL, readCheckpoint(t, dir).Source)
	assert.Len(t, readCSV(t, filepath.Join(dir, invoicesFile)), 24)
	for _, r := range srv.Requests()[before:] {
		assert.Equal(t, http.MethodGet, r.Method, r.Path)
		assert.Equal(t, "/invoices", r.Path)
	}

	const key = "sk_live_do_not_print_0123456789abcdef"
	err := run(context.Background(), &out, f, env(map[string]string{envAPIKey: key}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), envBaseURL)
	assert.NotContains(t, err.Error(), key)
}
