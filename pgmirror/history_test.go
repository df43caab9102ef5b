package pgmirror_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The history is exact: the fake service goes through six simulated months
// (its clock a month ahead each, an hour between each hundred mutations),
// the mirror settles after each (a reconciliation), and the service's
// records are kept as they stood at that instant; three invoices are
// deleted in the third month (marked deleted at its reconciliation).
// Afterwards, for every instant kept, every resource's <table>_as_of and
// <lines>_as_of equal the service's records then, row for row and field
// for field (the comparison of the proofs, reading the functions instead
// of the tables), and each record's versions follow one another.
func TestTheBooksAsOfEveryInstantEqualTheServiceThen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock, ids, cfg := backfilledOnTheClock(t, sizes{invoices: 300, quotes: 60, bills: 20, clients: 30, suppliers: 10, items: 20,
		bankTransactions: 40}, 33)
	schema := cfg.Schema
	m := openMirror(t, cfg)

	type snapshot struct {
		at      time.Time
		records map[string][]map[string]any // by resource path
	}
	var snaps []snapshot
	keep := func() {
		s := snapshot{at: clock.Now(), records: map[string][]map[string]any{}}
		for _, res := range checkedResources {
			s.records[res.path] = serviceRecords(t, serverScope(srv), res.path, res.key)
		}
		snaps = append(snaps, s)
	}
	keep()
	mut := newMutator(srv, ids)
	for month := range 6 {
		clock.Advance(30 * 24 * time.Hour)
		if month == 2 {
			mut.mu.Lock()
			gone := slices.Clone(mut.invoices[:3])
			mut.invoices = mut.invoices[3:]
			mut.mu.Unlock()
			require.NoError(t, srv.LoadState(bytes.NewReader(withoutRecords(t, srv, "invoices", gone))))
		}
		mut.count.Store(0)
		require.NoError(t, mut.run(150, 1, uint64(month), func(int) { clock.Advance(time.Hour) }))
		_, err := m.Reconcile(ctx)
		require.NoError(t, err)
		keep()
	}
	db := checkerPool(t, schema)
	versions := requireVersionsInOrder(t, adminPool(t, schema))
	t.Logf("%d instants over %v; %d versions in the history; mutations: %s", len(snaps),
		snaps[len(snaps)-1].at.Sub(snaps[0].at).Round(time.Hour), versions, mut.summary())
	require.Positive(t, versions)
	for _, s := range snaps {
		var diffs []string
		for _, res := range checkedResources {
			diffs = append(diffs, compareTable(t, asOf{db, s.at}, pgmirror.DefaultBusiness, res, s.records[res.path])...)
		}
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
		}
		require.Empty(t, diffs, "as of %s", s.at.Format(time.RFC3339))
	}
	// The invoices deleted are marked so at the instant of the
	// reconciliation that found them gone: the third month's.
	require.Equal(t, 3, count(t, adminPool(t, schema), `SELECT count(*) FROM invoices WHERE mirror_deleted_at = $1`, snaps[3].at))
}

// backfilledOnTheClock seeds a fake service with n records (rng seeded
// with seed) and backfills a mirror of it whose clock is the fake's (the
// instants the mirror stamps itself are on the service's timeline). It
// returns the service, its clock, the ids seed returned and the mirror's
// Config, to open it again.
func backfilledOnTheClock(t *testing.T, n sizes, seedN uint64) (*invoicingtest.Server, *invoicingtest.FakeClock, map[string][]string, pgmirror.Config) {
	t.Helper()
	srv, clock := newFake(t)
	ids := seed(t, srv, n, rand.New(rand.NewPCG(seedN, 1)))
	cfg := testConfig(sdkClient(srv), newSchemaName())
	cfg.Clock = clock.Now
	require.NoError(t, openMirror(t, cfg).Backfill(context.Background()))
	return srv, clock, ids, cfg
}

// asOf reads the mirror's tables as they stood at an instant: each query
// of the comparison, "... FROM <table> WHERE business = $1 ...", reads
// <table>_as_of($1, at) instead.
type asOf struct {
	db querier
	at time.Time
}

var fromTable = regexp.MustCompile(`FROM (\w+) WHERE business = \$1`)

func (q asOf) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	n := len(args) + 1
	sql = fromTable.ReplaceAllString(sql, fmt.Sprintf("FROM ${1}_as_of($$1, $$%d) WHERE business = $$1", n))
	return q.db.Query(ctx, sql, append(args, q.at)...)
}

// The history keeps a version for Config.HistoryRetention after it ended,
// with its lines: Prune deletes those that ended before, and no other.
func TestTheHistoryKeepsVersionsForItsRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, clock, ids, cfg := backfilledOnTheClock(t, sizes{invoices: 20, quotes: 2, bills: 2, clients: 3, suppliers: 1, items: 2,
		bankTransactions: 2}, 34)
	schema := cfg.Schema
	// Two rounds of changes to the same five invoices, ten days apart:
	// the first versions end ten days before the second ones.
	for round := range 2 {
		clock.Advance(10 * 24 * time.Hour)
		for _, id := range ids["invoices"][:5] {
			notes := fmt.Sprintf("round %d", round)
			require.NoError(t, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &notes}))
		}
		_, err := openMirror(t, cfg).Reconcile(ctx)
		require.NoError(t, err)
	}
	db := adminPool(t, schema)
	changed := ids["invoices"][:5] // others change too, their status following the clock (overdue)
	lines := count(t, db, `SELECT count(*) FROM invoice_lines_history WHERE invoice_id = ANY($1)`, changed)
	require.Equal(t, 10, count(t, db, `SELECT count(*) FROM invoices_history WHERE id = ANY($1)`, changed))
	require.Positive(t, lines)

	clock.Advance(24 * time.Hour)
	cfg.HistoryRetention = 5 * 24 * time.Hour // the first versions ended 11 days ago, the second ones a day ago
	require.NoError(t, openMirror(t, cfg).Prune(ctx))
	assert.Equal(t, 5, count(t, db, `SELECT count(*) FROM invoices_history WHERE id = ANY($1)`, changed))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices_history WHERE mirror_valid_to < $1`, clock.Now().Add(-cfg.HistoryRetention)))
	assert.Equal(t, lines/2, count(t, db, `SELECT count(*) FROM invoice_lines_history WHERE invoice_id = ANY($1)`, changed), "the lines of the versions deleted, and only those")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoice_lines_history WHERE mirror_valid_to < $1`, clock.Now().Add(-cfg.HistoryRetention)))
}

// requireVersionsInOrder fails t unless, for every record of every record
// table in db, its versions (those in the history and the current row, a
// deletion mark ending it) follow one another: ordered by start, none ends
// after the next begins. It returns the number of versions in the history.
func requireVersionsInOrder(t testing.TB, db *pgxpool.Pool) int {
	t.Helper()
	versions := 0
	for _, res := range checkedResources {
		overlaps := count(t, db, `WITH v AS (
			SELECT business, id, mirror_valid_from AS f, mirror_valid_to AS t FROM `+res.table+`_history
			UNION ALL
			SELECT business, id, coalesce(mirror_valid_from, nullif(mirror_version, '-infinity'), mirror_changed_at),
				coalesce(mirror_deleted_at, 'infinity') FROM `+res.table+`)
		SELECT count(*) FROM (SELECT t, lead(f) OVER (PARTITION BY business, id ORDER BY f, t) AS next FROM v) AS s WHERE next < t`)
		require.Zero(t, overlaps, "versions of %s that overlap the next", res.table)
		versions += count(t, db, `SELECT count(*) FROM `+res.table+`_history`)
	}
	return versions
}
