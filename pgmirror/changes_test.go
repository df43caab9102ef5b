package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
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
)

// replayed is a table rebuilt from the change feed: each record's JSON
// (decoded, numbers exact) and whether it is marked deleted.
type replayed map[string]replayedRow

type replayedRow struct {
	record  map[string]any
	deleted bool
}

// decodeObject decodes a JSON object with its numbers kept exact.
func decodeObject(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return v
}

// waitFeedReadable waits until every change committed to m's feed can be
// read: a reader reads below the horizon, which a transaction still
// running anywhere on the server holds back, another test's included (the
// tests share one PostgreSQL).
func waitFeedReadable(t testing.TB, m *pgmirror.Mirror) {
	t.Helper()
	waitUntil(t, 2*time.Minute, func() (bool, string) {
		held, err := m.FeedHeldForTest(context.Background())
		return err == nil && !held, fmt.Sprintf("changes held above the horizon (%v)", err)
	})
}

// replayFeed applies the changes of the feed of schema, from the first, to
// empty tables, checking each against the state it applies to: an insert
// of a record held (and not deleted), an update or a deletion of one not
// held, an update whose old members are not the held ones, would each be a
// change missing or duplicated. It returns the tables by business and
// resource (business + "/" + resource) and the changes by cause.
func replayFeed(t testing.TB, m *pgmirror.Mirror) (map[string]replayed, map[string]int) {
	t.Helper()
	waitFeedReadable(t, m)
	tables := map[string]replayed{}
	causes := map[string]int{}
	last := int64(0)
	for c, err := range m.Changes(context.Background(), 0) {
		require.NoError(t, err)
		require.Greater(t, c.Seq, last, "changes in seq order")
		last = c.Seq
		causes[c.Cause]++
		tab := tables[c.Business+"/"+c.Resource]
		if tab == nil {
			tab = replayed{}
			tables[c.Business+"/"+c.Resource] = tab
		}
		held, ok := tab[c.ID]
		where := fmt.Sprintf("change %d (%s %s %s of %s by %s)", c.Seq, c.Op, c.Resource, c.ID, c.Business, c.Cause)
		switch c.Op {
		case pgmirror.OpInsert:
			require.True(t, !ok || held.deleted, "%s: the record is already held", where)
			require.Nil(t, c.Old, where)
			tab[c.ID] = replayedRow{record: decodeObject(t, c.New)}
		case pgmirror.OpUpdate:
			require.True(t, ok && !held.deleted, "%s: no such record held", where)
			old, new := decodeObject(t, c.Old), decodeObject(t, c.New)
			require.NotEmpty(t, len(old)+len(new), where)
			for k, v := range old {
				require.Equal(t, v, held.record[k], "%s: the old value of %s", where, k)
				delete(held.record, k)
			}
			for k, v := range new {
				_, had := old[k]
				require.True(t, had || held.record[k] == nil, "%s: %s changed without its old value", where, k)
				held.record[k] = v
			}
		case pgmirror.OpDelete:
			require.True(t, ok && !held.deleted, "%s: no such record held", where)
			require.Nil(t, c.New, where)
			require.Equal(t, held.record, decodeObject(t, c.Old), where)
			tab[c.ID] = replayedRow{record: held.record, deleted: true}
		default:
			t.Fatalf("%s: unknown op", where)
		}
	}
	return tables, causes
}

// requireFeedReplays checks that the change feed of m's schema, replayed
// from empty, rebuilds every record table: the same ids, the same JSON,
// the same deletion marks. It returns the number of changes by cause.
func requireFeedReplays(t testing.TB, m *pgmirror.Mirror, db *pgxpool.Pool) map[string]int {
	t.Helper()
	tables, causes := replayFeed(t, m)
	seen := map[string]bool{}
	for _, res := range pgmirror.Resources() {
		rows, err := db.Query(context.Background(), `SELECT business, id, raw::text, mirror_deleted_at IS NOT NULL FROM `+
			pgx.Identifier{res}.Sanitize())
		require.NoError(t, err)
		got := map[string]replayed{}
		var business, id, raw string
		var deleted bool
		_, err = pgx.ForEachRow(rows, []any{&business, &id, &raw, &deleted}, func() error {
			key := business + "/" + res
			if got[key] == nil {
				got[key] = replayed{}
			}
			got[key][id] = replayedRow{record: decodeObject(t, []byte(raw)), deleted: deleted}
			return nil
		})
		require.NoError(t, err)
		for key, table := range got {
			seen[key] = true
			want := tables[key]
			require.Equal(t, len(table), len(want), "%s: rows and records replayed", key)
			for id, row := range table {
				r, ok := want[id]
				require.True(t, ok, "%s %s: in the table, not in the feed", key, id)
				require.True(t, reflect.DeepEqual(row, r), "%s %s: the table holds %v, the feed rebuilds %v", key, id, row, r)
			}
		}
	}
	for key, table := range tables {
		require.True(t, seen[key] || len(table) == 0, "%s: in the feed, not in the tables", key)
	}
	return causes
}

// The change feed, live: a mirror serving webhooks and reconciling every
// two seconds writes a change for each insert and update, with its cause;
// FollowChanges, woken by NOTIFY, sees an invoice falling overdue, a quote
// declined and one expired (changes that raise no event) within one
// reconcile interval of the change, caused by the reconciliation; Changes
// resumes after a seq; the feed replayed from empty equals the tables; the
// Mirror counted what it wrote.
func TestTheChangeFeed(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	c := srv.Client()
	inv := createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 2)
	declined, expired := createQuote(t, c, 1), createQuote(t, c, 2)
	schema := newSchemaName()
	// A server of its own: the feed is read below the horizon of every
	// transaction of the server, and the other tests' (migrations,
	// partitioning, each a transaction of seconds under CI's load) held
	// it back past the bound (5.4 s seen).
	ownPostgres(t, schema)
	cfg := testConfig(sdkClient(srv), schema)
	const interval = 2 * time.Second
	cfg.ReconcileInterval = interval
	m := openMirror(t, cfg)
	hookUp(t, srv, clock, m)
	run(t, m)
	db := adminPool(t, schema)
	waitBackfilled(t, db, 30*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var followed []pgmirror.Change
	seen := map[string]time.Time{} // "resource id field=value" → when FollowChanges yielded it
	done := make(chan error, 1)
	go func() {
		for ch, err := range m.FollowChanges(ctx, 0) {
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			followed = append(followed, ch)
			if ch.Op == pgmirror.OpUpdate && ch.Cause == pgmirror.CauseReconciliation {
				var status struct{ Status string }
				if json.Unmarshal(ch.New, &status) == nil && status.Status != "" {
					seen[ch.ID+" "+status.Status] = time.Now()
				}
			}
			mu.Unlock()
		}
		done <- nil
	}()

	createInvoice(t, c, invoicing.InvoiceStatusDraft, 1) // an insert an event brings
	waitDrained(t, db, 30*time.Second)

	changed := time.Now()
	clock.Advance(60 * 24 * time.Hour) // the invoice's due date passes: it reads overdue, with no event
	require.NoError(t, srv.DeclineQuote(declined.ID))
	require.NoError(t, srv.ExpireQuote(expired.ID))
	for _, key := range []string{inv.ID + " overdue", declined.ID + " declined", expired.ID + " expired"} {
		waitUntil(t, 3*interval, func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			_, ok := seen[key]
			return ok, key + " in the feed"
		})
		mu.Lock()
		took := seen[key].Sub(changed)
		mu.Unlock()
		// The first reconciliation that starts after the change finds it:
		// at most an interval later, plus the reconciliation's own time
		// (over a second in CI's run of every module at once: 3.10-3.12 s
		// seen) and the follower's wake (a NOTIFY).
		assert.Less(t, took, interval+2*time.Second, "%s followed after %v", key, took)
		t.Logf("%s followed %v after the change", key, took.Round(time.Millisecond))
	}
	waitDrained(t, db, 30*time.Second)
	cancel()
	require.NoError(t, <-done)

	causes := requireFeedReplays(t, m, db)
	assert.Positive(t, causes[pgmirror.CauseBackfill])
	assert.Positive(t, causes[pgmirror.CauseEvent])
	assert.Positive(t, causes[pgmirror.CauseReconciliation])
	total := causes[pgmirror.CauseBackfill] + causes[pgmirror.CauseEvent] + causes[pgmirror.CauseReconciliation]
	mu.Lock()
	assert.Len(t, followed, total, "FollowChanges saw every change once")
	mu.Unlock()

	// Resuming: the changes after a seq are the rest, in order.
	var all, rest []int64
	waitFeedReadable(t, m)
	for ch, err := range m.Changes(context.Background(), 0) {
		require.NoError(t, err)
		all = append(all, ch.Seq)
	}
	for ch, err := range m.Changes(context.Background(), all[len(all)/2]) {
		require.NoError(t, err)
		rest = append(rest, ch.Seq)
	}
	assert.Equal(t, all[len(all)/2+1:], rest)

	counted, _, _, backfilled := m.CountedForTest()
	assert.Positive(t, backfilled[pgmirror.Invoices], "the backfill's progress")
	var sum int64
	for _, n := range counted {
		sum += n
	}
	assert.Equal(t, int64(total), sum, "the changes counted: %v", counted)
	assert.Positive(t, counted[pgmirror.Invoices+"/"+pgmirror.CauseReconciliation])
}

// Each reconciliation deletes the changes older than ChangeRetention, a
// prefix of the feed; a reader asking for changes after a deleted one is
// told (ErrChangesPruned), one resuming after the last deleted is not. A
// negative retention keeps everything; DisableChangeFeed writes nothing.
func TestChangeRetention(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	ctx := context.Background()
	for name, c := range map[string]struct {
		retention time.Duration
		disabled  bool
	}{
		"pruned": {retention: time.Nanosecond}, "kept": {retention: -1}, "disabled": {disabled: true},
	} {
		t.Run(name, func(t *testing.T) {
			m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.ChangeRetention, cfg.DisableChangeFeed = c.retention, c.disabled })
			require.NoError(t, m.Backfill(ctx))
			written := count(t, db, `SELECT count(*) FROM mirror_changes`)
			last := count(t, db, `SELECT coalesce(max(seq), 0) FROM mirror_changes`)
			_, err := m.Reconcile(ctx)
			require.NoError(t, err)
			left := count(t, db, `SELECT count(*) FROM mirror_changes`)
			switch name {
			case "pruned":
				require.Positive(t, written)
				assert.Zero(t, left)
				var errs []error
				for _, err := range m.Changes(ctx, 0) {
					errs = append(errs, err)
				}
				require.Len(t, errs, 1)
				require.ErrorIs(t, errs[0], pgmirror.ErrChangesPruned)
				n := 0
				for _, err := range m.Changes(ctx, int64(last)) {
					require.NoError(t, err)
					n++
				}
				assert.Zero(t, n)
			case "kept":
				assert.Equal(t, written, left)
			case "disabled":
				assert.Zero(t, written)
				counted, _, _, _ := m.CountedForTest()
				assert.Empty(t, counted)
			}
		})
	}
}

// The feed needs no lock among its writers, and a reader still never sees
// a lower seq after a higher one, nor misses one: a transaction that began
// writing first (its id older) and commits last holds the readers back
// until it ends, and then comes first. Four businesses' events land while
// such a transaction is open; FollowChanges yields nothing of theirs until
// it commits, then its change first, then theirs, without a NOTIFY for it.
func TestTheFeedHoldsReadersBehindARunningWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 4, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 20) }))
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), nil)
	for _, b := range f.Businesses {
		mm.add(t, b, 0)
	}
	run(t, mm.Mirror)
	for _, b := range f.Businesses {
		waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	}
	waitDrained(t, mm.DB, time.Minute)

	// A writer that took its transaction id and has not committed.
	held, err := mm.DB.Begin(ctx)
	require.NoError(t, err)
	defer held.Rollback(ctx) //nolint:errcheck // committed below
	var heldSeq int64
	require.NoError(t, held.QueryRow(ctx, `SELECT (pg_current_xact_id()::text::bigint << 20) + 1`).Scan(&heldSeq))

	var mu sync.Mutex
	var followed []int64
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for ch, err := range mm.FollowChanges(fctx, 0) {
			if err != nil {
				return
			}
			mu.Lock()
			followed = append(followed, ch.Seq)
			mu.Unlock()
		}
	}()

	// Events of every business land, committed, above the held writer.
	for i, b := range f.Businesses {
		b.Srv.AddClient(invoicingtest.Contact{Name: fmt.Sprintf("Client %d", i)})
	}
	waitDrained(t, mm.DB, time.Minute)
	above := count(t, mm.DB, `SELECT count(*) FROM mirror_changes WHERE seq > $1`, heldSeq)
	require.Equal(t, len(f.Businesses), above, "each business's new client, committed above the held writer")
	for ch, err := range mm.Changes(ctx, 0) {
		require.NoError(t, err)
		require.Less(t, ch.Seq, heldSeq, "nothing is read above a writer still running")
	}

	// The held writer writes its change, as WriteChanges would, and commits
	// (without a NOTIFY): the reader reads it, then the others.
	_, err = held.Exec(ctx, `INSERT INTO mirror_changes (seq, business, resource, id, cause, op, new_values)
		VALUES ($1, 'biz0000', 'clients', 'held', 'event', 'insert', '{}')`, heldSeq)
	require.NoError(t, err)
	require.NoError(t, held.Commit(ctx))
	total := count(t, mm.DB, `SELECT count(*) FROM mirror_changes`)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(followed) == total, fmt.Sprintf("%d of %d changes followed", len(followed), total)
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(followed); i++ {
		require.Greater(t, followed[i], followed[i-1], "seq order")
	}
	require.Equal(t, heldSeq, followed[len(followed)-above-1], "the held writer's change before the later ones")
}

// Two transactions of one business write the same record: the first took
// its id (writing another invoice) before the second began, and writes the
// record (a later version) only once the second has come. The record's
// changes are in the feed in the order they were made: the second waits
// for the first to end, and writes nothing (its version is older). Were
// the feed in the order of the ids alone, with the second written first,
// the first's change would be read before the change it follows.
func TestTheChangesOfARecordAreFedInTheOrderTheyWereMade(t *testing.T) {
	t.Parallel()
	m, _ := newRuleMirror(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := m.ApplyForTest(ctx, 1, invoice(at(0), "first", 1))
	require.NoError(t, err)

	another := invoice(at(0), "another", 1)
	another.ID, another.InvoiceNumber = "7d0e4bb4-0000-4000-8000-000000000002", "INV-2"
	written, proceed := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- m.ApplyInTwoStepsForTest(ctx, 2, []any{another}, []any{invoice(at(2*time.Minute), "third", 3)}, written, proceed)
	}()
	select {
	case <-written:
	case err := <-first:
		t.Fatalf("the first transaction ended before writing the record: %v", err)
	}
	second := make(chan error, 1)
	go func() {
		_, err := m.ApplyForTest(ctx, 3, invoice(at(time.Minute), "second", 2))
		second <- err
	}()
	var secondErr error
	secondDone := false
	waitUntil(t, 30*time.Second, func() (bool, string) {
		select {
		case secondErr = <-second:
			secondDone = true
			return true, ""
		default:
		}
		n, err := m.WaitingToWriteForTest(ctx, pgmirror.Invoices, "7d0e4bb4-0000-4000-8000-000000000001")
		return err == nil && n == 1, fmt.Sprintf("the second transaction neither ended nor waits (%d waiting, %v)", n, err)
	})
	close(proceed)
	require.NoError(t, <-first)
	if !secondDone {
		secondErr = <-second
	}
	require.NoError(t, secondErr)

	tables, _ := replayFeed(t, m)
	var notes []any
	for key, tab := range tables {
		if row, ok := tab["7d0e4bb4-0000-4000-8000-000000000001"]; ok {
			require.True(t, strings.HasSuffix(key, "/"+pgmirror.Invoices), key)
			notes = append(notes, row.record["notes"])
		}
	}
	require.Equal(t, []any{"third"}, notes, "the invoice the feed rebuilds")
}

// An update's Old and New are JSON objects, {} on a side without members,
// also for a change written when such a side was NULL.
func TestAnUpdatesSidesAreObjects(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	require.Equal(t, 1, count(`WITH i AS (INSERT INTO mirror_changes (seq, business, resource, id, cause, op, old_values, new_values)
		VALUES (1, 'default', 'invoices', 'i1', 'reconciliation', 'update', NULL, '{"notes": "added"}') RETURNING 1) SELECT count(*) FROM i`))
	var got []pgmirror.Change
	for c, err := range m.Changes(context.Background(), 0) {
		require.NoError(t, err)
		got = append(got, c)
	}
	require.Len(t, got, 1)
	assert.JSONEq(t, `{}`, string(got[0].Old))
	assert.JSONEq(t, `{"notes": "added"}`, string(got[0].New))
}

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
	ids := seed(t, srv, n, seedN, 1)
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
