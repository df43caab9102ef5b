package pgmirror

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// ApplyForTest writes records (all of one SDK record type) as a fetch with
// sequence number seq would, and returns the ids written.
func (m *Mirror) ApplyForTest(ctx context.Context, seq int64, records ...any) ([]string, error) {
	res, rows, err := m.rowsForTest(ctx, records)
	if err != nil {
		return nil, err
	}
	var written []string
	err = m.tenants.all()[0].writeIn(ctx, CauseEvent, res, rowIDs(rows), func(w *writeTx) error {
		var err error
		written, err = apply(ctx, w, res, rows, seq)
		return err
	})
	return written, err
}

// ApplyInTwoStepsForTest writes, in one transaction as ApplyForTest does,
// the records first, then closes written and waits for proceed (or the
// end of ctx) before it writes the records then (of the same resource): a
// transaction that has written something, and so has its id, while others
// run.
func (m *Mirror) ApplyInTwoStepsForTest(ctx context.Context, seq int64, first, then []any, written chan<- struct{}, proceed <-chan struct{}) error {
	res, rows1, err := m.rowsForTest(ctx, first)
	if err != nil {
		return err
	}
	_, rows2, err := m.rowsForTest(ctx, then)
	if err != nil {
		return err
	}
	return m.tenants.all()[0].writeIn(ctx, CauseEvent, res, append(rowIDs(rows1), rowIDs(rows2)...), func(w *writeTx) error {
		if _, err := apply(ctx, w, res, rows1, seq); err != nil {
			return err
		}
		close(written)
		select {
		case <-proceed:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := apply(ctx, w, res, rows2, seq)
		return err
	})
}

// rowsForTest returns the rows of records, all of one SDK record type, as
// the Selection of the Mirror's business shapes them, and their resource.
func (m *Mirror) rowsForTest(ctx context.Context, records []any) (*resource, []store.Row, error) {
	a, err := m.tenants.all()[0].selection(ctx)
	if err != nil {
		return nil, nil, err
	}
	var res *resource
	var rows []store.Row
	for _, rec := range records {
		var r store.Row
		var err error
		switch v := rec.(type) {
		case *invoicing.Invoice:
			res = resourceNamed(Invoices)
			r, err = recordRow(v, invoiceRow)
		case *invoicing.TaxCode:
			res = resourceNamed(TaxCodes)
			r, err = recordRow(v, taxCodeRow)
		default:
			return nil, nil, fmt.Errorf("rowsForTest: %T", rec)
		}
		if err == nil {
			err = a.row(res, &r)
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, r)
	}
	return res, rows, nil
}

// CountedForTest returns the Mirror's counters: the changes written by
// "resource/cause", the reconciliations' corrections and the rows marked
// deleted by resource, and the backfill's rows listed by resource.
func (m *Mirror) CountedForTest() (changes, corrections, deleted, backfilled map[string]int64) {
	s := m.counters.snapshot()
	changes, backfilled = map[string]int64{}, map[string]int64{}
	for k, n := range s.changes {
		changes[k.resource+"/"+k.cause] = n
	}
	for res, p := range s.backfill {
		backfilled[res] = p.listed
	}
	return changes, s.corrections, s.deleted, backfilled
}

// MigrateToVersionForTest brings schema to version (below SchemaVersion),
// as an older version of the package would have left it: for the upgrade
// tests.
func MigrateToVersionForTest(ctx context.Context, db *pgxpool.Pool, schema string, version int) error {
	return store.New(db, schema).MigrateToVersion(ctx, version)
}

// TablesForTest returns the columns of every mirrored table as the
// records generate them ("name type", information_schema's type names),
// by table, with the columns every record or lines table has besides.
func TablesForTest() map[string][]string {
	out := map[string][]string{}
	for _, res := range allResources {
		cols := []string{"business text", "id text"}
		for _, c := range res.table.Columns {
			cols = append(cols, c.Name+" "+c.Type.SQL())
		}
		out[res.table.Name] = append(cols, "raw jsonb", "mirror_version timestamp with time zone", "mirror_fetch_seq bigint",
			"mirror_synced_at timestamp with time zone", "mirror_changed_at timestamp with time zone", "mirror_deleted_at timestamp with time zone",
			"mirror_valid_from timestamp with time zone")
		if res.lines != nil {
			lines := []string{"business text", res.lines.Parent + " text"}
			for _, c := range res.lines.Columns {
				lines = append(lines, c.Name+" "+c.Type.SQL())
			}
			out[res.lines.Name] = append(lines, "mirror_deleted_at timestamp with time zone")
		}
	}
	return out
}

// FunctionColumnsForTest returns the columns the set-returning function
// name of the mirror's schema returns ("name type", information_schema's
// type names), in no particular order.
func (m *Mirror) FunctionColumnsForTest(ctx context.Context, name string) ([]string, error) {
	return m.store.FunctionColumns(ctx, name)
}

// ColumnsForTest returns the columns of table in the mirror's schema as
// information_schema has them ("name type"), in no particular order.
func (m *Mirror) ColumnsForTest(ctx context.Context, table string) ([]string, error) {
	return m.store.TableColumns(ctx, table)
}

// FeedHeldForTest reports whether committed changes of the feed wait above
// the horizon, held back by a transaction still running anywhere on the
// server (another test's, in a shared one).
func (m *Mirror) FeedHeldForTest(ctx context.Context) (bool, error) {
	p, err := m.store.ReadChanges(ctx, math.MaxInt64, 1)
	return p.Held, err
}

// AcrossBusinessesForTest returns the statements that work across
// businesses by design (store.AcrossBusinesses), as a Store of schema runs
// them.
func AcrossBusinessesForTest(schema string) []string {
	return store.New(nil, schema).AcrossBusinesses(historyTables())
}

// TakeTokensForTest takes tokens of business's request budget in schema as
// a statement of the mirror's does (no ceiling, not a walk, no total),
// heard being when a 429 was heard (zero: none).
func TakeTokensForTest(ctx context.Context, db *pgxpool.Pool, schema, business string, heard time.Time) (store.Take, error) {
	return store.New(db, schema).TakeTokens(ctx, business, 0, false, heard, 0)
}

// WaitingToWriteForTest returns how many locks of the writes of the
// records ids of resource of the Mirror's business transactions wait for
// (store.Tx.Order).
func (m *Mirror) WaitingToWriteForTest(ctx context.Context, resource string, ids ...string) (int, error) {
	keys, _ := store.WriteLocks(m.store.Schema(), m.tenants.all()[0].name, resource, ids)
	var n int
	err := m.store.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND ((classid::bigint << 32) | objid::bigint) IN (SELECT hashtextextended(k, 0) FROM unnest($1::text[]) AS k)`, keys).Scan(&n)
	return n, err
}

// ForgetListedForTest deletes the ids the walks of resource of business
// listed, in the mirror of schema, through pool.
func ForgetListedForTest(ctx context.Context, pool *pgxpool.Pool, schema, business, resource string) error {
	return store.New(pool, schema).ForgetListed(ctx, business, resource)
}

// ClaimAndSettleForTest claims the due requests of business in the mirror
// of schema, through pool, calls meanwhile with the ids claimed, then
// settles them all in one transaction, as the write of a group of fetches
// does (with window as the coalescing window), and returns the ids.
func ClaimAndSettleForTest(ctx context.Context, pool *pgxpool.Pool, schema, business string, window time.Duration, meanwhile func(ids []string)) ([]string, error) {
	s := store.New(pool, schema)
	cs, err := s.Claim(ctx, time.Minute, store.MaxGrouped, []string{business}, []int{store.MaxGrouped})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	meanwhile(ids)
	return ids, s.InTx(ctx, "settling", func(tx *store.Tx) error {
		return tx.Fetched(ctx, cs, make([]time.Duration, len(cs)), window)
	})
}

// WalkStateForTest is a business's walks as WalkStatesForTest reads them.
type WalkStateForTest = store.WalkState

// WalkStatesForTest reads the walks' states of the businesses names, of
// resources resources each, whose reconciliations come every interval, in
// the mirror of schema, through pool, as the walk loop does before it
// starts walks.
func WalkStatesForTest(ctx context.Context, pool *pgxpool.Pool, schema string, names []string, resources int, interval time.Duration) (map[string]WalkStateForTest, error) {
	counts := make([]int, len(names))
	for i := range counts {
		counts[i] = resources
	}
	return store.New(pool, schema).WalkStates(ctx, names, counts, interval)
}
