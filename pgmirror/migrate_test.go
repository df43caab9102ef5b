package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// Replicas starting together migrate one at a time: every Migrate succeeds,
// each migration is applied once, and the schema holds the mirror's tables
// and the inbox table.
func TestMigrateIsIdempotentAndSafeForReplicasAtOnce(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	var mirrors []*pgmirror.Mirror
	for range 4 {
		m, err := pgmirror.Open(context.Background(), server.URL, testConfig(sdkClient(srv), schema))
		require.NoError(t, err)
		t.Cleanup(m.Close)
		mirrors = append(mirrors, m)
	}
	errs := make([]error, len(mirrors))
	var wg sync.WaitGroup
	for i, m := range mirrors {
		wg.Go(func() { errs[i] = m.Migrate(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, mirrors[0].Migrate(context.Background()), "and again, later")

	db := adminPool(t, schema)
	assert.Equal(t, pgmirror.SchemaVersion(), count(t, db, `SELECT count(*) FROM mirror_migrations`))
	for _, table := range append(pgmirror.Resources(), "invoice_lines", "quote_lines", "bill_lines", pginbox.TableName) {
		assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2`,
			schema, table), "table %s", table)
	}
}

// Migrating again keeps every row.
func TestMigrateKeepsTheData(t *testing.T) {
	t.Parallel()
	srv, m, _ := backfilled(t, sizes{invoices: 50}, 13, 14)
	require.NoError(t, m.Migrate(context.Background()))
	requireMirrorEqual(t, srv, m.Schema())
}

// A schema migrated by a newer version of the package is refused, not used.
func TestMigrateRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	m, db := newMirror(t, srv)
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_migrations (version, name) VALUES ($1, 'future')`,
		pgmirror.SchemaVersion()+1)
	require.NoError(t, err)
	assert.ErrorContains(t, m.Migrate(context.Background()), "newer than this program's")
}

// The tables the SDK's records generate (their //mirror:table lines) are
// the tables the migrations make: the same columns, of the same types. A
// field added to a record without its migration, or a migration without
// its field, fails here.
func TestTheRecordsTablesAreTheMigratedTables(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	m, _ := newMirror(t, srv)
	tables := pgmirror.TablesForTest()
	require.Len(t, tables, len(pgmirror.Resources())+3, "ten record tables and three lines tables")
	for table, want := range tables {
		got, err := m.ColumnsForTest(context.Background(), table)
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got, "the columns of %s", table)
		// Its history, and the function that reads it as of an instant:
		// the same columns and the version's interval.
		interval := []string{"mirror_valid_to timestamp with time zone"}
		if !slices.Contains(want, "mirror_valid_from timestamp with time zone") { // a lines table
			interval = append(interval, "mirror_valid_from timestamp with time zone")
		}
		got, err = m.ColumnsForTest(context.Background(), table+"_history")
		require.NoError(t, err)
		assert.ElementsMatch(t, append(want, interval...), got, "the columns of %s_history", table)
		got, err = m.FunctionColumnsForTest(context.Background(), table+"_as_of")
		require.NoError(t, err)
		assert.ElementsMatch(t, append(want, interval...), got, "the columns %s_as_of returns", table)
	}
}

// mirrorTables are the tables of a mirror's schema that hold data, as a
// version 4 schema has them.
var mirrorTables = []string{
	"invoices", "invoice_lines", "quotes", "quote_lines", "items", "clients", "suppliers", "bills", "bill_lines",
	"accounts", "tax_codes", "bank_accounts", "bank_transactions",
	"mirror_backfill", "mirror_pending_fetch", "mirror_reconcile", "mirror_changes", "mirror_event_lag", "mirror_confirmed",
}

// A mirror made before businesses (schema version 4) upgrades in place: its
// rows, lines, backfill state, change feed and queues all become the rows
// of the business the migration names, nothing lost; the upgraded mirror
// is exact, needs no new backfill, and keeps going on events.
func TestASingleBusinessMirrorUpgradesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 60}, 25, 1)

	// A mirror of today, whose rows become those of a version 4 schema.
	current := newSchemaName()
	copied(t, testConfig(sdkClient(srv), current))

	old := newSchemaName()
	db := adminPool(t, old)
	require.NoError(t, pgmirror.MigrateToVersionForTest(ctx, db, old, 4))
	_, err := db.Exec(ctx, `DELETE FROM mirror_reconcile`) // the v4 singleton row comes from the copy
	require.NoError(t, err)
	before := map[string]int{}
	for _, table := range mirrorTables {
		var cols []string
		rows, err := db.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
			ORDER BY ordinal_position`, old, table)
		require.NoError(t, err)
		for rows.Next() {
			var c string
			require.NoError(t, rows.Scan(&c))
			cols = append(cols, c)
		}
		require.NoError(t, rows.Err())
		list := strings.Join(cols, ", ")
		if table == "mirror_reconcile" {
			list = strings.Replace(list, "singleton", "true", 1)
		}
		_, err = db.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM %s.%s`, table, strings.Join(cols, ", "), list, current, table))
		require.NoError(t, err, table)
		before[table] = count(t, db, `SELECT count(*) FROM `+table)
	}
	// Sequences go on from the copied numbers, as they would have.
	_, err = db.Exec(ctx, `SELECT setval('mirror_fetch_seq', (SELECT max(last) FROM `+current+`.mirror_fetch_numbers)),
		setval('mirror_changes_seq_seq', (SELECT max(seq) FROM mirror_changes))`)
	require.NoError(t, err)
	require.Positive(t, before["invoice_lines"])
	require.Positive(t, before["mirror_changes"])
	require.Equal(t, 1, before["mirror_reconcile"])
	lastSeq := count(t, db, `SELECT last_value FROM mirror_fetch_seq`)

	// The upgrade, by a replica of today naming the business.
	cfg := testConfig(sdkClient(srv), old)
	cfg.Business = "acme"
	up := openMirror(t, cfg)
	require.NoError(t, up.Migrate(ctx))
	for _, table := range mirrorTables {
		assert.Equal(t, before[table], count(t, db, `SELECT count(*) FROM `+table), "rows of %s", table)
		assert.Equal(t, before[table], count(t, db, `SELECT count(*) FROM `+table+` WHERE business = 'acme'`), "rows of %s are acme's", table)
	}
	diffs, n := compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: "acme"}, checkerPool(t, old))
	require.Empty(t, diffs)
	require.Positive(t, n)
	// The rows written before the history began are the books as of now
	// (their versions counted from mirror_version, or mirror_changed_at).
	diffs, _ = compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: "acme"}, asOf{checkerPool(t, old), time.Now()})
	require.Empty(t, diffs)
	done, err := up.BackfillDone(ctx)
	require.NoError(t, err)
	assert.True(t, done, "the backfill's state is kept: no new backfill")
	var feed []pgmirror.Change
	waitFeedReadable(t, up)
	for c, err := range up.Changes(ctx, 0) {
		require.NoError(t, err)
		feed = append(feed, c)
	}
	require.Len(t, feed, before["mirror_changes"])
	assert.Equal(t, "acme", feed[len(feed)-1].Business)
	st, err := pgmirror.ReadStatus(ctx, db, old)
	require.NoError(t, err)
	require.Len(t, st.Businesses, 1)
	assert.Equal(t, "acme", st.Businesses[0].Name)
	assert.Equal(t, len(pgmirror.Resources()), st.Businesses[0].Backfilled)

	// The upgraded mirror goes on, under acme.
	inv := goesOn(t, srv, clock, up, old, "acme")
	assert.Greater(t, count(t, db, `SELECT mirror_fetch_seq FROM invoices WHERE id = $1`, inv.ID), lastSeq,
		"the business's fetch numbers go on above the sequence's")
}

// copied backfills and reconciles a mirror of cfg, then closes it: a
// complete copy for an upgrade to start from.
func copied(t testing.TB, cfg pgmirror.Config) {
	t.Helper()
	ctx := context.Background()
	m := openMirror(t, cfg)
	require.NoError(t, m.Backfill(ctx))
	_, err := m.Reconcile(ctx)
	require.NoError(t, err)
	m.Close()
}

// goesOn runs m, upgraded in schema, hooked to srv, and checks that it goes
// on: an event's invoice lands with its lines, under business, no walk
// lists the invoices again, and the mirror equals the service. It returns
// the event's invoice.
func goesOn(t testing.TB, srv *invoicingtest.Server, clock *invoicingtest.FakeClock, m *pgmirror.Mirror, schema, business string) *invoicing.Invoice {
	t.Helper()
	db := adminPool(t, schema)
	// (The comparisons list the invoices too.)
	lists := func() int { return requests(srv, "GET /invoices") - requests(srv, "GET /invoices/") }
	listsBefore := lists()
	hookUp(t, srv, clock, m)
	run(t, m)
	inv := createInvoice(t, sdkClient(srv), invoicing.InvoiceStatusDraft, 2)
	waitUntil(t, 20*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM invoice_lines WHERE business = $1 AND invoice_id = $2`, business, inv.ID)
		return n == 2, "the new invoice's lines"
	})
	assert.Equal(t, listsBefore, lists(), "no walk listed the invoices again")
	diffs, n := compareScope(t, scope{URL: srv.URL, Key: srv.FullKey, Business: business}, checkerPool(t, schema))
	require.Empty(t, diffs)
	require.Positive(t, n)
	return inv
}

// statements records each distinct statement a pool runs, with the
// arguments of its first run: a pgx tracer of single queries and of the
// queries of a batch.
type statements struct {
	mu   sync.Mutex
	on   bool
	seen map[string][]any
}

func (s *statements) add(sql string, args []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[sql]; s.on && !ok {
		s.seen[sql] = slices.Clone(args)
	}
}

// record starts recording, or stops it and returns what was recorded.
func (s *statements) record(on bool) map[string][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = on
	if on {
		s.seen = map[string][]any{}
	}
	return maps.Clone(s.seen)
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.add(d.SQL, d.Args)
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (s *statements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	s.add(d.SQL, d.Args)
}

func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// partitionsRead returns, for each partitioned table of the schema that
// the plan of sql (with args) reads or writes, the partitions it names
// (none for an insert, which names the partitioned table):
// the plan PostgreSQL makes for those arguments, as the mirror's own
// statements are planned (an unnamed statement, planned with its
// parameters' values). A statement that cannot be explained (BEGIN, SET)
// names none.
func partitionsRead(t testing.TB, db *pgxpool.Pool, partitionOf map[string]string, sql string, args []any) map[string][]string {
	t.Helper()
	head := strings.ToUpper(strings.Fields(sql)[0])
	if !slices.Contains([]string{"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"}, head) {
		return nil
	}
	var plan []byte
	err := db.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+sql, append([]any{pgx.QueryExecModeDescribeExec}, args...)...).Scan(&plan)
	require.NoError(t, err, "EXPLAIN %s", sql)
	var nodes []any
	require.NoError(t, json.Unmarshal(plan, &nodes))
	read := map[string][]string{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if rel, ok := v["Relation Name"].(string); ok {
				if parent, ok := partitionOf[rel]; ok && !slices.Contains(read[parent], rel) {
					read[parent] = append(read[parent], rel)
				} else if _, ok := read[rel]; !ok && slices.Contains(slices.Collect(maps.Values(partitionOf)), rel) {
					read[rel] = nil // the partitioned table itself: an insert's, routed row by row
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(nodes)
	return read
}

// With Partitions, every table with a business column is hash-partitioned
// by business, and every statement the mirror runs on the paths of an
// event, a backfill and a reconciliation (deletions included) of a fleet
// reads and writes one partition of each table it touches, as PostgreSQL
// plans it for the statement's own arguments; only the statements that
// work across businesses by design (pgmirror's AcrossBusinessesForTest:
// finding the businesses with records due, retention, the change feed's
// global order, pginbox's claim) may touch more.
func TestEveryStatementOfTheHotPathTouchesOnePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 3, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 30) }))
	trace := &statements{}
	mm := newTracedMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), func(c *pgmirror.Config) {
		c.Partitions = 8
		c.ReconcileInterval = 300 * time.Millisecond
	}, trace)
	trace.record(true) // after Migrate
	for _, b := range f.Businesses {
		mm.add(t, b, 0)
	}
	run(t, mm.Mirror)
	for _, b := range f.Businesses {
		waitBusinessBackfilled(t, mm, b.Name, 30*time.Second)
	}

	// An event's record.
	acme, globex := f.Businesses[0], f.Businesses[1]
	c, err := newClientAt(f.URL, acme.Key)
	require.NoError(t, err)
	inv := createInvoice(t, c, invoicing.InvoiceStatusDraft, 2)
	waitUntil(t, 20*time.Second, func() (bool, string) {
		n := count(t, mm.DB, `SELECT count(*) FROM invoice_lines WHERE business = $1 AND invoice_id = $2`, acme.Name, inv.ID)
		return n == 2, "the new invoice's lines"
	})
	// A row the service does not have, which a reconciliation marks deleted.
	const gone = "00000000-0000-4000-8000-00000000d0e5"
	_, err = mm.DB.Exec(ctx, `INSERT INTO invoices (business, id, raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at)
		VALUES ($1, $2, '{}', now(), 0, now(), now())`, globex.Name, gone)
	require.NoError(t, err)
	waitUntil(t, 20*time.Second, func() (bool, string) {
		n := count(t, mm.DB, `SELECT count(*) FROM invoices WHERE business = $1 AND id = $2 AND mirror_deleted_at IS NOT NULL`, globex.Name, gone)
		return n == 1, "the unlisted row marked deleted"
	})
	seen := trace.record(false)

	partitionOf := map[string]string{}
	rows, err := mm.DB.Query(ctx, `SELECT c.relname, p.relname FROM pg_inherits AS i
		JOIN pg_class AS c ON c.oid = i.inhrelid JOIN pg_class AS p ON p.oid = i.inhparent
		WHERE p.relnamespace = $1::regnamespace`, mm.Schema)
	require.NoError(t, err)
	for rows.Next() {
		var child, parent string
		require.NoError(t, rows.Scan(&child, &parent))
		partitionOf[child] = parent
	}
	require.NoError(t, rows.Err())
	parents := map[string]bool{}
	for _, p := range partitionOf {
		parents[p] = true
	}
	for _, table := range []string{"invoices", "invoice_lines", "mirror_changes", "mirror_pending_fetch", "mirror_budgets", "mirror_fetch_numbers", "invoicing_webhook_inbox"} {
		assert.True(t, parents[table], "%s is partitioned", table)
	}

	across := pgmirror.AcrossBusinessesForTest(mm.Schema)
	// pginbox's own statements across businesses: its Workers' claim of the
	// delivery due first, and WithBackpressure's look at the backlog.
	pginboxAcross := func(sql string) bool {
		return strings.Contains(sql, "FROM invoicing_webhook_inbox") && strings.Contains(sql, "WHERE status = 'pending'")
	}
	var touched []string
	spanning := 0
	for sql, args := range seen {
		read := partitionsRead(t, mm.DB, partitionOf, sql, args)
		for table, parts := range read {
			touched = append(touched, table)
			if len(parts) == 0 {
				continue // an insert: each row goes to the partition of its business
			}
			if len(parts) > 1 {
				if slices.Contains(across, sql) || pginboxAcross(sql) {
					spanning++
					continue
				}
				t.Errorf("a statement reads %d partitions of %s (%v), not one:\n%s", len(parts), table, parts, sql)
			}
		}
	}
	t.Logf("%d statements, %d of them across businesses by design", len(seen), spanning)
	for _, table := range []string{"invoices", "invoice_lines", "mirror_changes", "mirror_pending_fetch", "mirror_fetch_numbers", "mirror_walk_listed", "invoicing_webhook_inbox"} {
		assert.Contains(t, touched, table, "a statement of the hot path touches %s", table)
	}
}

// An unpartitioned mirror holding data is partitioned in place by Migrate
// with Partitions: every row kept, each table keeps its indexes (by name),
// its grants, and the foreign keys and views over it; the mirror needs no
// new backfill, stays exact and goes on with events. Migrating again
// changes nothing, and another number of partitions is refused.
func TestAMirrorIsPartitionedInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 40}, 32, 4)
	schema := newSchemaName()
	unpartitioned := testConfig(sdkClient(srv), schema)
	unpartitioned.Partitions = 0
	copied(t, unpartitioned)

	db := adminPool(t, schema)
	reader := strings.ReplaceAll(schema, "mirror_test", "reader")
	_, err := db.Exec(ctx, `CREATE ROLE `+reader+` NOLOGIN`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = db.Exec(context.Background(), `DROP OWNED BY `+reader)
		_, _ = db.Exec(context.Background(), `DROP ROLE `+reader)
	})
	_, err = db.Exec(ctx, `GRANT SELECT ON invoices, invoice_lines, mirror_status TO `+reader)
	require.NoError(t, err)
	// What must survive: each table's content, its indexes, the foreign
	// keys, the views and the grants.
	contentOf := func(table string) string {
		var sum string
		require.NoError(t, db.QueryRow(ctx, `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM `+table+` AS t`).Scan(&sum))
		return sum
	}
	describe := func() map[string]string {
		out := map[string]string{}
		rows, err := db.Query(ctx, `SELECT c.relname FROM pg_class AS c
			WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition`, schema)
		require.NoError(t, err)
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		for _, table := range tables {
			out[table] = contentOf(table)
		}
		for _, q := range []string{
			`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename NOT LIKE '%\_p_' AND tablename NOT LIKE '%\_p__'`,
			`SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = $1::regnamespace AND contype IN ('f', 'p', 'c') AND conislocal AND conparentid = 0`,
			`SELECT viewname FROM pg_views WHERE schemaname = $1`,
			`SELECT table_name || ' ' || privilege_type || ' ' || grantee FROM information_schema.role_table_grants WHERE table_schema = $1 AND grantee <> current_user AND table_name !~ '_p[0-9]+$'`,
		} {
			rows, err := db.Query(ctx, q, schema)
			require.NoError(t, err)
			list, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			slices.Sort(list)
			out[q] = strings.Join(list, "\n")
		}
		return out
	}
	before := describe()
	var indexes, keys, grants string
	for q, v := range before {
		switch {
		case strings.Contains(q, "pg_indexes"):
			indexes = v
		case strings.Contains(q, "pg_constraint"):
			keys = v
		case strings.Contains(q, "role_table_grants"):
			grants = v
		}
	}
	require.Contains(t, before[`SELECT viewname FROM pg_views WHERE schemaname = $1`], "mirror_status")
	require.Contains(t, indexes, "invoices_status")
	require.Contains(t, indexes, "invoicing_webhook_inbox_pending")
	require.Contains(t, keys, "REFERENCES invoices(business, id) ON DELETE CASCADE")
	require.Contains(t, grants, "invoice_lines SELECT "+reader)
	require.Contains(t, grants, "mirror_status SELECT "+reader)
	require.NotEmpty(t, before["invoice_lines"])

	cfg := testConfig(sdkClient(srv), schema)
	cfg.Partitions = 4
	up := openMirror(t, cfg)
	after := describe()
	for k, v := range before {
		assert.Equal(t, v, after[k], "%s", k)
	}
	assert.Equal(t, len(before), len(after))
	assert.Equal(t, 4, count(t, db, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'invoices'::regclass`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM pg_class AS c WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND NOT c.relispartition
		AND EXISTS (SELECT 1 FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = 'business')`, schema),
		"every table with a business column is partitioned")
	st, err := pgmirror.ReadStatus(ctx, db, schema)
	require.NoError(t, err)
	require.Len(t, st.Businesses, 1)
	assert.Equal(t, "ready", st.Businesses[0].Phase)

	// Again: nothing to do. Another number: refused.
	require.NoError(t, openMirror(t, cfg).Migrate(ctx))
	other := cfg
	other.Partitions = 8
	bad, err := pgmirror.Open(ctx, postgresOf(schema).URL, other)
	require.NoError(t, err)
	defer bad.Close()
	assert.ErrorContains(t, bad.Migrate(ctx), "has 4 partitions, not 8")

	// The mirror goes on, exact, without listing anything again.
	goesOn(t, srv, clock, up, schema, pgmirror.DefaultBusiness)
}
