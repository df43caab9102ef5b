package pgmirror_test

// The comparison that proves the mirror exact. It is written independently
// of the mirror's code: it reads the fake service's state over plain HTTP
// into generic JSON (not through the SDK's records), reads the mirror's
// tables with plain SQL, and compares them row for row and field for field,
// with its own table of which JSON member lands in which column.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// kind is how a member is compared with its column.
type kind int

const (
	kText  kind = iota // a JSON string (or null/absent) and a text column (or NULL)
	kMoney             // a JSON number and a numeric column, compared as exact decimals
	kDate              // "YYYY-MM-DD" and a date column
	kTime              // an RFC 3339 datetime (or null) and a timestamptz column
	kBool              // a JSON boolean and a boolean column
)

type field struct {
	member string // the JSON member, also the column's name
	kind   kind
}

// checkedResource is a resource as the comparison sees it.
type checkedResource struct {
	path, key, table string
	fields           []field
	lines            *checkedLines
}

type checkedLines struct {
	table, parent string
	fields        []field
}

var invoiceLineFields = []field{{"id", kText}, {"description", kText}, {"quantity", kMoney}, {"unit_price", kMoney},
	{"amount", kMoney}, {"tax_amount", kMoney}, {"account_id", kText}, {"tax_code_id", kText}}

var contactFields = []field{{"id", kText}, {"name", kText}, {"email", kText}, {"phone", kText},
	{"created_at", kTime}, {"updated_at", kTime}}

var checkedResources = []checkedResource{
	{path: "/invoices", key: "invoices", table: "invoices", fields: []field{
		{"id", kText}, {"invoice_number", kText}, {"client_id", kText}, {"client_name", kText}, {"status", kText},
		{"issue_date", kDate}, {"due_date", kDate}, {"subtotal", kMoney}, {"tax_total", kMoney}, {"total", kMoney},
		{"amount_paid", kMoney}, {"amount_due", kMoney}, {"currency", kText}, {"notes", kText}, {"reference", kText},
		{"created_at", kTime}, {"updated_at", kTime}},
		lines: &checkedLines{table: "invoice_lines", parent: "invoice_id", fields: invoiceLineFields}},
	{path: "/quotes", key: "quotes", table: "quotes", fields: []field{
		{"id", kText}, {"quote_number", kText}, {"title", kText}, {"client_id", kText}, {"client_name", kText},
		{"status", kText}, {"issue_date", kDate}, {"valid_until", kDate}, {"subtotal", kMoney}, {"tax_total", kMoney},
		{"total", kMoney}, {"currency", kText}, {"notes", kText}, {"created_at", kTime}, {"updated_at", kTime}},
		lines: &checkedLines{table: "quote_lines", parent: "quote_id", fields: []field{
			{"id", kText}, {"item_id", kText}, {"item_code", kText}, {"item_name", kText}, {"description", kText},
			{"quantity", kMoney}, {"unit_price", kMoney}, {"amount", kMoney}, {"tax_amount", kMoney}}}},
	{path: "/items", key: "items", table: "items", fields: []field{
		{"id", kText}, {"item_code", kText}, {"name", kText}, {"description", kText}, {"item_type", kText},
		{"unit_price", kMoney}, {"is_taxable", kBool}, {"account_id", kText}, {"tax_code_id", kText},
		{"is_active", kBool}, {"created_at", kTime}, {"updated_at", kTime}}},
	{path: "/clients", key: "clients", table: "clients", fields: contactFields},
	{path: "/suppliers", key: "suppliers", table: "suppliers", fields: contactFields},
	{path: "/bills", key: "bills", table: "bills", fields: []field{
		{"id", kText}, {"bill_number", kText}, {"supplier_id", kText}, {"supplier_name", kText}, {"status", kText},
		{"issue_date", kDate}, {"due_date", kDate}, {"currency", kText}, {"subtotal", kMoney}, {"tax_total", kMoney},
		{"total", kMoney}, {"created_at", kTime}, {"updated_at", kTime}},
		lines: &checkedLines{table: "bill_lines", parent: "bill_id", fields: invoiceLineFields}},
	{path: "/accounts", key: "accounts", table: "accounts", fields: []field{
		{"id", kText}, {"code", kText}, {"name", kText}, {"type", kText}, {"is_active", kBool}}},
	{path: "/tax-codes", key: "tax_codes", table: "tax_codes", fields: []field{
		{"id", kText}, {"code", kText}, {"name", kText}, {"rate", kMoney}, {"region", kText}}},
	{path: "/bank-accounts", key: "bank_accounts", table: "bank_accounts", fields: []field{
		{"id", kText}, {"name", kText}, {"account_number", kText}, {"currency", kText}, {"balance", kMoney}}},
	{path: "/bank-transactions", key: "bank_transactions", table: "bank_transactions", fields: []field{
		{"id", kText}, {"bank_account_id", kText}, {"date", kDate}, {"description", kText}, {"amount", kMoney},
		{"reference", kText}, {"status", kText}}},
}

// compareMirror compares every resource of srv with the mirror's tables in
// schema and returns the differences (nil when the mirror is exact) and the
// number of records compared.
func compareMirror(t testing.TB, srv *invoicingtest.Server, schema string) (diffs []string, records int) {
	t.Helper()
	return compareWith(t, srv, checkerPool(t, schema))
}

// A scope is one business as the comparison reads it: the service at URL
// with Key, and the mirror's rows of Business.
type scope struct {
	URL, Key, Business string
}

// serverScope is the scope of srv, mirrored as the business of a mirror's
// Config.Client (pgmirror.DefaultBusiness).
func serverScope(srv *invoicingtest.Server) scope {
	return scope{URL: srv.URL, Key: srv.FullKey, Business: pgmirror.DefaultBusiness}
}

// querier reads the mirror's tables: a pool on its schema, or a
// transaction of one.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// compareWith is compareMirror reading the tables through db.
func compareWith(t testing.TB, srv *invoicingtest.Server, db querier) (diffs []string, records int) {
	t.Helper()
	return compareScope(t, serverScope(srv), db)
}

// compareScope compares every resource of one business of the service
// with its rows of the mirror's tables, read through db.
func compareScope(t testing.TB, sc scope, db querier) (diffs []string, records int) {
	t.Helper()
	for _, res := range checkedResources {
		want := serviceRecords(t, sc, res.path, res.key)
		records += len(want)
		diffs = append(diffs, compareTable(t, db, sc.Business, res, want)...)
	}
	return diffs, records
}

// requireMirrorEqual fails t unless the mirror in schema equals srv's state.
func requireMirrorEqual(t testing.TB, srv *invoicingtest.Server, schema string) int {
	t.Helper()
	diffs, n := compareMirror(t, srv, schema)
	if len(diffs) > 20 {
		diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
	}
	require.Empty(t, diffs, "the mirror differs from the service")
	return n
}

// checkerPool is a plain pool for reading the mirror's schema.
func checkerPool(t testing.TB, schema string) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(postgresOf(schema).URL)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// serviceRecords reads every record of a list endpoint of the business
// sc, by plain HTTP, as generic JSON objects with numbers kept exact
// (json.Number).
func serviceRecords(t testing.TB, sc scope, path, key string) []map[string]any {
	t.Helper()
	raw, err := serviceRecordsRaw(sc, path, key)
	require.NoError(t, err)
	var out []map[string]any
	for _, r := range raw {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		var rec map[string]any
		require.NoError(t, dec.Decode(&rec))
		out = append(out, rec)
	}
	return out
}

// serviceRecordsRaw is serviceRecords with each record as the service sent
// it, for a caller that cannot fail a test (a proxy's handler).
func serviceRecordsRaw(sc scope, path, key string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for page := 1; ; page++ {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s%s?page=%d&page_size=100", sc.URL, path, page), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+sc.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		var pg map[string]json.RawMessage
		if err := json.Unmarshal(body, &pg); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		var recs []json.RawMessage
		var more bool
		_ = json.Unmarshal(pg[key], &recs)        // none when absent
		_ = json.Unmarshal(pg["has_more"], &more) // false when absent
		out = append(out, recs...)
		if !more {
			return out, nil
		}
	}
}

// compareTable compares one resource's records with its table (and lines).
func compareTable(t testing.TB, db querier, business string, res checkedResource, want []map[string]any) []string {
	t.Helper()
	var diffs []string
	got := readTable(t, db, business, res.table, res.fields)
	byID := map[string]map[string]any{}
	for _, rec := range want {
		id, _ := rec["id"].(string)
		byID[id] = rec
		row, ok := got[id]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s: missing from the mirror", res.table, id))
			continue
		}
		for i, f := range res.fields {
			if d := compareValue(f, rec[f.member], row.values[i]); d != "" {
				diffs = append(diffs, fmt.Sprintf("%s %s.%s: %s", res.table, id, f.member, d))
			}
		}
		var raw any
		dec := json.NewDecoder(strings.NewReader(row.raw))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil || !sameJSON(any(rec), raw) {
			diffs = append(diffs, fmt.Sprintf("%s %s: raw differs from the service's JSON", res.table, id))
		}
	}
	for id := range got {
		if _, ok := byID[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s: in the mirror, not on the service", res.table, id))
		}
	}
	if res.lines != nil {
		diffs = append(diffs, compareLines(t, db, business, res, byID)...)
	}
	return diffs
}

// compareLines compares each record's line_items with its rows of the lines
// table, in order.
func compareLines(t testing.TB, db querier, business string, res checkedResource, want map[string]map[string]any) []string {
	t.Helper()
	var diffs []string
	lines := readLines(t, db, business, res.lines)
	for id, rec := range want {
		items, _ := rec["line_items"].([]any)
		got := lines[id]
		delete(lines, id)
		if len(items) != len(got) {
			diffs = append(diffs, fmt.Sprintf("%s %s: %d lines, the service has %d", res.lines.table, id, len(got), len(items)))
			continue
		}
		for n, item := range items {
			l := item.(map[string]any)
			if got[n].position != n {
				diffs = append(diffs, fmt.Sprintf("%s %s: line %d at position %d", res.lines.table, id, n, got[n].position))
			}
			for i, f := range res.lines.fields {
				if d := compareValue(f, l[f.member], got[n].values[i]); d != "" {
					diffs = append(diffs, fmt.Sprintf("%s %s line %d %s: %s", res.lines.table, id, n, f.member, d))
				}
			}
		}
	}
	for id := range lines {
		diffs = append(diffs, fmt.Sprintf("%s: lines of %s, which is not on the service", res.lines.table, id))
	}
	return diffs
}

// dbRow is a row read by the comparison: one value per field, each as
// scanned (*string, *time.Time or *bool), and the raw JSON.
type dbRow struct {
	position int
	values   []any
	raw      string
}

// selectList returns the select expressions of fields, as the comparison
// scans them: numbers and dates as their text.
func selectList(fields []field) string {
	var cols []string
	for _, f := range fields {
		switch f.kind {
		case kMoney, kDate:
			cols = append(cols, pgx.Identifier{f.member}.Sanitize()+"::text")
		default:
			cols = append(cols, pgx.Identifier{f.member}.Sanitize())
		}
	}
	return strings.Join(cols, ", ")
}

// scanTargets returns fresh scan targets for fields.
func scanTargets(fields []field) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		switch f.kind {
		case kTime:
			out[i] = new(*time.Time)
		case kBool:
			out[i] = new(*bool)
		default:
			out[i] = new(*string)
		}
	}
	return out
}

// deref turns scan targets into values.
func deref(targets []any) []any {
	out := make([]any, len(targets))
	for i, p := range targets {
		switch p := p.(type) {
		case **time.Time:
			out[i] = *p
		case **bool:
			out[i] = *p
		case **string:
			out[i] = *p
		}
	}
	return out
}

func readTable(t testing.TB, db querier, business, table string, fields []field) map[string]dbRow {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT "+selectList(fields)+", raw::text FROM "+table+" WHERE business = $1", business)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]dbRow{}
	for rows.Next() {
		targets := scanTargets(fields)
		var raw string
		require.NoError(t, rows.Scan(append(targets, &raw)...))
		r := dbRow{values: deref(targets), raw: raw}
		out[*r.values[0].(*string)] = r
	}
	require.NoError(t, rows.Err())
	return out
}

func readLines(t testing.TB, db querier, business string, lt *checkedLines) map[string][]dbRow {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT "+lt.parent+", position, "+selectList(lt.fields)+
		" FROM "+lt.table+" WHERE business = $1 ORDER BY "+lt.parent+", position", business)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][]dbRow{}
	for rows.Next() {
		var parent string
		var pos int
		targets := scanTargets(lt.fields)
		require.NoError(t, rows.Scan(append([]any{&parent, &pos}, targets...)...))
		out[parent] = append(out[parent], dbRow{position: pos, values: deref(targets)})
	}
	require.NoError(t, rows.Err())
	return out
}

// compareValue compares a JSON member's value (nil when absent or null)
// with a column's value, and describes a difference ("" when equal).
func compareValue(f field, want, got any) string {
	isNull := func(v any) bool {
		switch v := v.(type) {
		case *string:
			return v == nil
		case *time.Time:
			return v == nil
		case *bool:
			return v == nil
		}
		return v == nil
	}
	if want == nil || isNull(got) {
		if want == nil && isNull(got) {
			return ""
		}
		return fmt.Sprintf("service %v, mirror %v", want, show(got))
	}
	switch f.kind {
	case kMoney:
		w, err1 := decimal.NewFromString(fmt.Sprint(want))
		g, err2 := decimal.NewFromString(*got.(*string))
		if err1 != nil || err2 != nil || !w.Equal(g) {
			return fmt.Sprintf("service %v, mirror %v", want, show(got))
		}
	case kTime:
		w, err := time.Parse(time.RFC3339, fmt.Sprint(want))
		if err != nil || !w.Equal(*got.(*time.Time)) {
			return fmt.Sprintf("service %v, mirror %v", want, show(got))
		}
	case kBool:
		if w, ok := want.(bool); !ok || w != *got.(*bool) {
			return fmt.Sprintf("service %v, mirror %v", want, show(got))
		}
	default:
		if w, ok := want.(string); !ok || w != *got.(*string) {
			return fmt.Sprintf("service %v, mirror %v", want, show(got))
		}
	}
	return ""
}

func show(v any) string {
	switch v := v.(type) {
	case *string:
		if v != nil {
			return *v
		}
	case *time.Time:
		if v != nil {
			return v.UTC().Format(time.RFC3339)
		}
	case *bool:
		if v != nil {
			return fmt.Sprint(*v)
		}
	}
	return "NULL"
}

// sameJSON reports whether two decoded JSON values are equal as JSON:
// objects whatever their members' order, numbers as exact decimals.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		keys := make([]string, 0, len(a))
		for k := range a {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := bm[k]; !ok || !sameJSON(a[k], v) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		return ok && slices.EqualFunc(a, bs, sameJSON)
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, err1 := decimal.NewFromString(a.String())
		y, err2 := decimal.NewFromString(bn.String())
		return err1 == nil && err2 == nil && x.Equal(y)
	default:
		return a == b
	}
}

// The comparison that proves the mirror exact must see every kind of
// difference: each statement below spoils one thing in an exact mirror, and
// the comparison must report it (and only it).
func TestComparisonSeesEveryDifference(t *testing.T) {
	t.Parallel()
	srv, m, db := backfilled(t, sizes{invoices: 30, quotes: 10, bills: 5, clients: 3, suppliers: 2, items: 2, bankTransactions: 3}, 3, 4)
	requireMirrorEqual(t, srv, m.Schema())

	spoil := []struct{ name, table, sql string }{
		{"money off by a cent", "invoices", `UPDATE invoices SET total = total + 0.01 WHERE id = (SELECT min(id) FROM invoices)`},
		{"a status", "quotes", `UPDATE quotes SET status = 'declined' WHERE id = (SELECT min(id) FROM quotes)`},
		{"a date", "invoices", `UPDATE invoices SET due_date = due_date + 1 WHERE id = (SELECT min(id) FROM invoices)`},
		{"a datetime", "clients", `UPDATE clients SET created_at = created_at + interval '1 second' WHERE id = (SELECT min(id) FROM clients)`},
		{"a boolean", "items", `UPDATE items SET is_active = NOT is_active WHERE id = (SELECT min(id) FROM items)`},
		{"NULL for a value", "bills", `UPDATE bills SET supplier_name = NULL WHERE id = (SELECT min(id) FROM bills)`},
		{"a value for NULL", "invoices", `UPDATE invoices SET reference = 'R' WHERE id = (SELECT min(id) FROM invoices)`},
		{"a missing record", "bank_transactions", `DELETE FROM bank_transactions WHERE id = (SELECT min(id) FROM bank_transactions)`},
		{"an extra record", "tax_codes", `INSERT INTO tax_codes (business, id, raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at) VALUES ('default', 'x', '{}', now(), 0, now(), now())`},
		{"a line's quantity", "invoice_lines", `UPDATE invoice_lines SET quantity = quantity * 2 WHERE (invoice_id, position) = (SELECT invoice_id, 0 FROM invoice_lines ORDER BY invoice_id LIMIT 1)`},
		{"a missing line", "quote_lines", `DELETE FROM quote_lines WHERE (quote_id, position) = (SELECT quote_id, 0 FROM quote_lines ORDER BY quote_id LIMIT 1)`},
		{"lines in another order", "bill_lines", `CREATE TEMP TABLE b AS SELECT bill_id FROM bill_lines WHERE position = 1 ORDER BY bill_id LIMIT 1;
			UPDATE bill_lines SET position = -1 WHERE bill_id = (SELECT bill_id FROM b) AND position = 0;
			UPDATE bill_lines SET position = 0 WHERE bill_id = (SELECT bill_id FROM b) AND position = 1;
			UPDATE bill_lines SET position = 1 WHERE bill_id = (SELECT bill_id FROM b) AND position = -1`},
		{"a raw member changed", "accounts", `UPDATE accounts SET raw = jsonb_set(raw, '{name}', '"Other"') WHERE id = (SELECT min(id) FROM accounts)`},
		{"an unknown member lost", "bank_accounts", `UPDATE bank_accounts SET raw = raw - 'balance' WHERE id = (SELECT min(id) FROM bank_accounts)`},
		{"a member more in raw", "suppliers", `UPDATE suppliers SET raw = raw || '{"extra": 1}' WHERE id = (SELECT min(id) FROM suppliers)`},
	}
	for _, c := range spoil {
		t.Run(c.name, func(t *testing.T) {
			// Spoil the copy in a transaction, compare through it, and roll
			// it back: the next case starts from the exact copy again.
			tx, err := db.Begin(context.Background())
			require.NoError(t, err)
			defer tx.Rollback(context.Background())
			_, err = tx.Exec(context.Background(), c.sql)
			require.NoError(t, err)
			diffs, _ := compareWith(t, srv, tx)
			require.NotEmpty(t, diffs)
			for _, d := range diffs {
				assert.True(t, strings.HasPrefix(d, c.table+" ") || strings.HasPrefix(d, c.table+":"), "a difference elsewhere: %s", d)
			}
		})
	}
}

// The mirror's own comparison, Verify, and the command's verify.

// verify compares the copy with the service and writes nothing: equal
// after the backfill; then a row deleted (missing), a row the service does
// not have (extra), a row tampered with (stale, naming the member) and a
// change that raised no event (stale until a reconciliation) are each
// found, the command printing them and exiting 3; after a reconciliation
// (and the tampering undone) it is equal again. It measures a verification
// of 5,000 invoices (1,000 with -short) and its requests.
func TestVerifyFindsEachDifferenceAndWritesNothing(t *testing.T) {
	t.Parallel()
	invoices := 5000
	if testing.Short() {
		invoices = 1000
	}
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: invoices, clients: 20}, 61, 62)
	m, db := newMirror(t, srv)
	schema := m.Schema()
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))

	v, err := m.Verify(ctx, "", pgmirror.Invoices)
	require.NoError(t, err)
	assert.True(t, v.Equal(), "%+v", v.Differences)
	require.Len(t, v.Resources, 1)
	assert.Equal(t, invoices, v.Resources[0].Listed)
	assert.Equal(t, (invoices+99)/100, v.Requests, "a request a page")
	t.Logf("a verification of %d invoices took %v and %d requests", invoices, v.Took.Round(time.Millisecond), v.Requests)

	// The differences.
	missing, tampered, quiet := ids["invoices"][0], ids["invoices"][1], ids["invoices"][2]
	for _, sql := range []string{
		`DELETE FROM invoices WHERE id = '` + missing + `'`,
		`INSERT INTO invoices (business, id, raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at)
			VALUES ('default', '0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b', '{"id": "0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b"}', now(), 0, now(), now())`,
		`UPDATE invoices SET raw = jsonb_set(raw, '{notes}', '"tampered"') WHERE id = '` + tampered + `'`,
	} {
		_, err := db.Exec(ctx, sql)
		require.NoError(t, err)
	}
	require.NoError(t, srv.UpdateInvoice(quiet, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})) // no event reaches this mirror
	changes := count(t, db, `SELECT count(*) FROM mirror_changes`)
	var before string
	require.NoError(t, db.QueryRow(ctx, `SELECT md5(string_agg(raw::text, '' ORDER BY id)) FROM invoices`).Scan(&before))

	v, err = m.Verify(ctx, pgmirror.DefaultBusiness)
	require.NoError(t, err)
	got := map[string]pgmirror.Difference{}
	for _, d := range v.Differences {
		got[d.ID] = d
	}
	assert.Len(t, v.Differences, 4, "%+v", v.Differences)
	assert.Equal(t, pgmirror.DiffMissing, got[missing].Kind)
	assert.Equal(t, pgmirror.DiffExtra, got["0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b"].Kind)
	assert.Equal(t, pgmirror.Difference{Business: pgmirror.DefaultBusiness, Resource: pgmirror.Invoices, ID: tampered,
		Kind: pgmirror.DiffStale, Members: []string{"notes"}}, got[tampered])
	assert.Equal(t, pgmirror.DiffStale, got[quiet].Kind)
	assert.Contains(t, got[quiet].Members, "status")
	assert.Len(t, v.Resources, len(pgmirror.Resources()))
	var after string
	require.NoError(t, db.QueryRow(ctx, `SELECT md5(string_agg(raw::text, '' ORDER BY id)) FROM invoices`).Scan(&after))
	assert.Equal(t, before, after, "verify writes nothing")
	assert.Equal(t, changes, count(t, db, `SELECT count(*) FROM mirror_changes`))

	env := commandEnv(srv.URL, srv.FullKey, "", postgresOf(schema).URL)
	out, code := runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--resource", "invoices")
	assert.Equal(t, 3, code, "%s", out)
	assert.Contains(t, out, "default invoices "+tampered+": stale (notes)")
	assert.Contains(t, out, "default invoices 0a5e6b1c-9d7e-4f10-8a2b-3c4d5e6f7a8b: extra")
	assert.Contains(t, out, "4 record(s) differ, 0 business(es) not verified")
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--json", "--resource", "clients")
	assert.Equal(t, 0, code, "%s", out)
	var js struct {
		Equal     bool
		Resources []struct{ Listed int }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js), out)
	assert.True(t, js.Equal)
	require.Len(t, js.Resources, 1)
	assert.Equal(t, 20+2, js.Resources[0].Listed, "the seed's clients and the fake's own")

	// A reconciliation corrects what it can (it does not delete the extra
	// row: it marks it deleted), and the copy is equal again.
	_, err = m.Reconcile(ctx)
	require.NoError(t, err)
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema)
	assert.Equal(t, 0, code, "%s", out)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(out[strings.LastIndex(out, "\n\n"):]), "equal: "), "%s", out)
	out, code = runCommand(t, env, "verify", "--budget", "10000", "--schema", schema, "--business", "nobody")
	assert.Equal(t, 2, code, "no complete copy of business nobody: %s", out)
	assert.Contains(t, out, "no complete copy yet")
}
