package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// A writeTx is a transaction of writeIn: it knows what caused its record
// writes and collects the changes they make, for the change feed.
type writeTx struct {
	*store.Tx
	cause    string
	business string
	res      *resource // the records it writes (Order): of res,
	ids      []string  // these, sorted
	began    bool      // it is ordered (store.Tx.Order)
	selected time.Time // when the business's Selection was applied, as Order read it
	changes  []change
	versions store.Versioning // the mirror's clock when the transaction began, and whether history is kept
}

// change is a change to write. old is the record's JSON before an update,
// "" otherwise: the rest is the row as the transaction leaves it.
type change struct {
	res    *resource
	id, op string
	old    string
}

// ordered returns an error unless the records ids of res are among those
// the transaction named to Order: a write of another would not be ordered
// in the feed.
func (w *writeTx) ordered(res *resource, ids []string) error {
	for _, id := range ids {
		if _, ok := slices.BinarySearch(w.ids, id); !ok || res != w.res {
			return fmt.Errorf("pgmirror: writing %s %s in a transaction that orders the writes of %s %v", res.name, id, w.res.name, w.ids)
		}
	}
	return nil
}

// order makes the transaction the writer of its records (store.Tx.Order)
// unless it is already: before a write that is not apply's.
func (w *writeTx) order(ctx context.Context) error {
	if w.began {
		return nil
	}
	w.began = true
	var err error
	w.selected, err = w.Order(ctx, w.business, w.res.name, w.ids)
	return err
}

// toWrite is ToWrite, in the same round trip as Order when the
// transaction is not ordered yet.
func (w *writeTx) toWrite(ctx context.Context, res *resource, rows []store.Row, seq int64) (map[string]store.Decision, error) {
	if w.began {
		return w.ToWrite(ctx, res.table, res.name, w.business, rows, seq)
	}
	w.began = true
	var decided map[string]store.Decision
	var err error
	w.selected, decided, err = w.OrderToWrite(ctx, w.business, w.ids, res.table, res.name, rows, seq)
	return decided, err
}

// changed records a change of the record id of res.
func (w *writeTx) changed(res *resource, id, op, old string) {
	w.changes = append(w.changes, change{res, id, op, old})
}

// writeIn runs fn in a transaction whose record writes cause caused (for
// the business), and then, still in it, writes the changes they made to the
// change feed, unless it is disabled. fn writes the records ids of res and
// no other: the transaction first waits for those writing any of them
// (store.Tx.Order: apply's first statement, or writeTx.order before
// another write), so that each record's changes are in the feed in the
// order they were made. It runs it again (up to three times in all) when
// PostgreSQL aborts it for a deadlock or a serialization failure. The
// changes are counted in the Mirror's stats once committed.
func (t *tenant) writeIn(ctx context.Context, cause string, res *resource, ids []string, fn func(w *writeTx) error) error {
	m := t.m
	sorted := slices.Sorted(slices.Values(ids))
	var err error
	for range 3 {
		var w *writeTx
		err = m.store.InTx(ctx, "writing records", func(tx *store.Tx) error {
			w = &writeTx{Tx: tx, cause: cause, business: t.name, res: res, ids: sorted,
				versions: store.Versioning{At: m.cfg.Clock(), Keep: !m.cfg.DisableHistory}}
			if err := fn(w); err != nil {
				return err
			}
			if len(w.changes) == 0 || m.cfg.DisableChangeFeed {
				return nil
			}
			return w.WriteChanges(ctx, cause, t.name, w.feed())
		})
		if err == nil {
			if !m.cfg.DisableChangeFeed {
				m.counters.addChanges(w.counts())
			}
			return nil
		}
		if errors.Is(err, errStaleSelection) && w != nil {
			t.outdated(w.selected)
		}
		var dbErr *store.Error
		if !errors.As(err, &dbErr) || !dbErr.Conflict() {
			return err
		}
		t.log.WarnContext(ctx, "pgmirror: transaction aborted, trying again", "error", err.Error())
	}
	return err
}

// feed is the transaction's changes, by table, in the order they were made.
func (w *writeTx) feed() []store.Changes {
	var out []store.Changes
	pending := slices.Clone(w.changes)
	for len(pending) > 0 {
		res := pending[0].res
		c := store.Changes{Table: res.table.Name, Resource: res.name}
		for _, p := range pending {
			if p.res == res {
				c.IDs, c.Ops, c.Olds = append(c.IDs, p.id), append(c.Ops, p.op), append(c.Olds, strOrNull(p.old))
			}
		}
		out = append(out, c)
		pending = slices.DeleteFunc(pending, func(p change) bool { return p.res == res })
	}
	return out
}

// counts are the transaction's changes by resource and cause.
func (w *writeTx) counts() map[changeKey]int64 {
	out := map[changeKey]int64{}
	for _, c := range w.changes {
		out[changeKey{c.res.name, w.cause}]++
	}
	return out
}

// apply writes rows of res, fetched with the sequence number seq, in w,
// with the "never older" rule: a row is written only when the record is
// new, or when its (version, seq) is not older than the stored row's and
// its content (raw) changed or the row is marked deleted (the mark is
// cleared); its lines are then replaced in the same transaction. A record
// whose content did not change is not written at all: neither its row nor
// its lines, not even locked. Each row written is a change for the change
// feed. The version a write replaces goes to the history table, with its
// lines, unless Config.DisableHistory. It returns the ids
// written, sorted.
//
// A record listed twice in rows counts once, the later copy winning. Rows
// are written in id order, so that concurrent transactions lock them in the
// same order.
func apply(ctx context.Context, w *writeTx, res *resource, rows []store.Row, seq int64) ([]string, error) {
	rows = lastByID(rows)
	if len(rows) == 0 {
		return nil, nil
	}
	if err := w.ordered(res, rowIDs(rows)); err != nil {
		return nil, err
	}
	decided, err := w.toWrite(ctx, res, rows, seq)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if !r.Selected.Equal(w.selected) {
			return nil, fmt.Errorf("%w: %s %s was fetched under the selection applied at %v, the business's is of %v",
				errStaleSelection, res.name, r.ID, r.Selected, w.selected)
		}
	}
	var toInsert, toUpdate []store.Row
	var toConfirm []string
	for _, r := range rows {
		d, ok := decided[r.ID]
		switch {
		case !ok:
		case d == store.Confirm:
			toConfirm = append(toConfirm, r.ID)
		case d == store.Insert:
			toInsert = append(toInsert, r)
		default:
			toUpdate = append(toUpdate, r)
		}
	}
	// A walk's number stands for all its rows (mirror_backfill.walk_seq);
	// a fetch of one record that found it unchanged is recorded apart,
	// leaving the row alone.
	if len(toConfirm) > 0 && w.cause == CauseEvent {
		if err := w.Confirm(ctx, res.name, w.business, toConfirm, seq); err != nil {
			return nil, err
		}
	}
	var written []string
	var updated []store.Updated
	if len(toInsert) > 0 {
		inserted, err := w.Insert(ctx, res.table, w.business, toInsert, seq, w.versions)
		if err != nil {
			return nil, err
		}
		for _, r := range toInsert {
			if _, ok := slices.BinarySearch(inserted, r.ID); ok {
				w.changed(res, r.ID, OpInsert, "")
			} else {
				toUpdate = append(toUpdate, r) // inserted meanwhile by another transaction
			}
		}
		slices.SortFunc(toUpdate, byID)
		written = inserted
	}
	if len(toUpdate) > 0 {
		updated, err = w.Update(ctx, res.table, res.name, w.business, toUpdate, seq, w.versions)
		if err != nil {
			return nil, err
		}
		for _, u := range updated {
			if u.WasDeleted {
				w.changed(res, u.ID, OpInsert, "")
			} else {
				w.changed(res, u.ID, OpUpdate, u.Old)
			}
			written = append(written, u.ID)
		}
	}
	slices.Sort(written)
	if res.lines != nil && len(written) > 0 {
		if err := w.ReplaceLines(ctx, res.lines, w.business, rows, written, updated, w.versions); err != nil {
			return nil, err
		}
	}
	return written, nil
}

// rowIDs returns the ids of rows, in their order.
func rowIDs(rows []store.Row) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

func byID(a, b store.Row) int { return strings.Compare(a.ID, b.ID) }

// lastByID returns rows sorted by id, keeping the last copy of a record
// listed more than once (a record a page drift showed twice).
func lastByID(rows []store.Row) []store.Row {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, byID)
	n := 0
	for i := range out {
		if n > 0 && out[n-1].ID == out[i].ID {
			out[n-1] = out[i]
			continue
		}
		out[n] = out[i]
		n++
	}
	return out[:n]
}
