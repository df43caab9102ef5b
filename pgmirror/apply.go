package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// nextSeq takes the next fetch sequence number. Take it before sending the
// request whose records it will stamp: then a fetch sent after a change (the
// fetch an event of that change causes, say) always has a higher number than
// any fetch that could have seen the record before the change.
func (m *Mirror) nextSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := m.pool.QueryRow(ctx, `SELECT nextval('mirror_fetch_seq')`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("pgmirror: taking a fetch sequence number: %w", err)
	}
	return seq, nil
}

// apply writes rows of res, fetched with the sequence number seq, in tx
// (a transaction of writeIn), with the "never older" rule: a row is
// written only when the record is new, or when its (version, seq) is not
// older than the stored row's and its content (raw) changed or the row is
// marked deleted (the mark is cleared); its lines are then replaced in the
// same transaction. A record whose content did not change is not written
// at all: neither its row nor its lines, not even locked. Each row written
// is a change for the change feed. It returns the ids written, sorted.
//
// A record listed twice in rows counts once, the later copy winning. Rows
// are written in id order, so that concurrent transactions lock them in the
// same order.
func apply(ctx context.Context, tx pgx.Tx, res *resource, rows []row, seq int64) ([]string, error) {
	w, ok := tx.(*writeTx)
	if !ok {
		return nil, errors.New("pgmirror: apply called outside writeIn")
	}
	rows = lastByID(rows)
	if len(rows) == 0 {
		return nil, nil
	}
	t := &res.table
	ids := make([]string, len(rows))
	raws := make([]string, len(rows))
	versions := make([]*time.Time, len(rows))
	for i, r := range rows {
		ids[i], raws[i], versions[i] = r.id, string(r.raw), r.version
	}
	var toInsert, toUpdate []row
	var toConfirm []string
	toWrite, err := tx.Query(ctx, t.toWriteSQL(), ids, raws, versions, seq, res.name, w.business)
	if err != nil {
		return nil, fmt.Errorf("comparing %s: %w", res.name, err)
	}
	var id string
	var isNew *bool
	_, err = pgx.ForEachRow(toWrite, []any{&id, &isNew}, func() error {
		i, _ := slices.BinarySearchFunc(rows, id, func(r row, id string) int { return strings.Compare(r.id, id) })
		switch {
		case isNew == nil:
			toConfirm = append(toConfirm, id)
		case *isNew:
			toInsert = append(toInsert, rows[i])
		default:
			toUpdate = append(toUpdate, rows[i])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("comparing %s: %w", res.name, err)
	}
	// A walk's number stands for all its rows (mirror_backfill.walk_seq);
	// a fetch of one record that found it unchanged is recorded apart,
	// leaving the row alone.
	if len(toConfirm) > 0 && w.cause == causeEvent {
		if _, err := tx.Exec(ctx, confirmSQL, res.name, toConfirm, seq, w.business); err != nil {
			return nil, fmt.Errorf("confirming %s: %w", res.name, err)
		}
	}
	if len(toInsert)+len(toUpdate) == 0 {
		return nil, nil
	}
	slices.SortFunc(toInsert, byID)
	slices.SortFunc(toUpdate, byID)

	var written []string
	if len(toInsert) > 0 {
		inserted, err := queryStrings(ctx, tx, t.insertSQL(), t.recordArgs(toInsert, seq, w.business)...)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.name, err)
		}
		for _, r := range toInsert {
			if _, ok := slices.BinarySearch(inserted, r.id); ok {
				w.changed(res, r.id, opInsert, "")
			} else {
				toUpdate = append(toUpdate, r) // inserted meanwhile by another transaction
			}
		}
		slices.SortFunc(toUpdate, byID)
		written = inserted
	}
	if len(toUpdate) > 0 {
		updated, err := tx.Query(ctx, t.updateSQL(), append(t.recordArgs(toUpdate, seq, w.business), res.name)...)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.name, err)
		}
		var old string
		var wasDeleted bool
		_, err = pgx.ForEachRow(updated, []any{&id, &old, &wasDeleted}, func() error {
			if wasDeleted {
				w.changed(res, id, opInsert, "")
			} else {
				w.changed(res, id, opUpdate, old)
			}
			written = append(written, id)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.name, err)
		}
	}
	slices.Sort(written)
	if res.lines != nil && len(written) > 0 {
		if err := replaceLines(ctx, tx, res.lines, rows, written, w.business); err != nil {
			return nil, fmt.Errorf("writing the lines of %s: %w", res.name, err)
		}
	}
	return written, nil
}

// confirmSQL records that the fetch $3 found the records $2 of the
// resource $1 of business $4 unchanged.
const confirmSQL = `INSERT INTO mirror_confirmed (business, resource, id, seq)
SELECT $4, $1, id, $3 FROM unnest($2::text[]) AS id ORDER BY id
ON CONFLICT (business, resource, id) DO UPDATE SET seq = greatest(mirror_confirmed.seq, EXCLUDED.seq)`

// recordArgs are the arguments of the table's write statements for rows:
// the ids, an array per column, the raw JSON, the versions, seq and the
// business.
func (t *table) recordArgs(rows []row, seq int64, business string) []any {
	ids := make([]string, len(rows))
	versions := make([]*time.Time, len(rows))
	raws := make([]string, len(rows))
	values := make([][]any, len(rows))
	for i, r := range rows {
		ids[i], versions[i], raws[i], values[i] = r.id, r.version, string(r.raw), r.values
	}
	args := []any{ids}
	for i, c := range t.columns {
		args = append(args, columnArray(c.typ, values, i))
	}
	return append(args, raws, versions, seq, business)
}

func byID(a, b row) int { return strings.Compare(a.id, b.id) }

// replaceLines replaces the lines of the parents written (a sorted subset of
// the ids of rows) with those of rows.
func replaceLines(ctx context.Context, tx pgx.Tx, lt *table, rows []row, written []string, business string) error {
	if _, err := tx.Exec(ctx, lt.deleteLinesSQL(), written, business); err != nil {
		return err
	}
	var parents []string
	var lines [][]any
	for _, r := range rows {
		if _, ok := slices.BinarySearch(written, r.id); !ok {
			continue
		}
		for _, l := range r.lines {
			parents = append(parents, r.id)
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	args := []any{parents}
	for i, c := range lt.columns {
		args = append(args, columnArray(c.typ, lines, i))
	}
	_, err := tx.Exec(ctx, lt.insertLinesSQL(), append(args, business)...)
	return err
}

// lastByID returns rows sorted by id, keeping the last copy of a record
// listed more than once (a record a page drift showed twice).
func lastByID(rows []row) []row {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b row) int { return strings.Compare(a.id, b.id) })
	n := 0
	for i := range out {
		if n > 0 && out[n-1].id == out[i].id {
			out[n-1] = out[i]
			continue
		}
		out[n] = out[i]
		n++
	}
	return out[:n]
}

// queryStrings runs a query returning one text column.
func queryStrings(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]string, error) {
	rs, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// inTx runs fn in a transaction whose record writes events caused (the
// fetchers'): writeIn with causeEvent.
func (m *tenant) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return m.writeIn(ctx, causeEvent, fn)
}

// writeIn runs fn in a transaction, a *writeTx whose record writes cause
// caused, and then, still in it, writes the changes they made to the change
// feed (see writeChanges). It runs it again (up to three times in all)
// when PostgreSQL aborts it for a deadlock or a serialization failure,
// which two replicas writing the same records can cause. The changes are
// counted in the Mirror's stats once committed.
func (m *tenant) writeIn(ctx context.Context, cause string, fn func(tx pgx.Tx) error) error {
	var err error
	for range 3 {
		var w *writeTx
		err = pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
			w = &writeTx{Tx: tx, cause: cause, business: m.name}
			if err := fn(w); err != nil {
				return err
			}
			return m.writeChanges(ctx, w)
		})
		if err == nil {
			if !m.cfg.DisableChangeFeed {
				m.counters.addChanges(w.counts())
			}
			return nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "40P01" && pgErr.Code != "40001") {
			return err
		}
		m.log.WarnContext(ctx, "pgmirror: transaction aborted, trying again", "error", err.Error())
	}
	return err
}
