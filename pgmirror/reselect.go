package pgmirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// Applying a business's Selection, and rewriting what the mirror holds of
// it when the Selection changed.

// ErrSelectionChanged is the error (stopping the mirror) of a mirror whose
// Config.Selection is not the Selection recorded for the business of
// Config.Client: another replica, started since with another
// Config.Selection, applied its own. Give every replica the same one.
var ErrSelectionChanged = errors.New("pgmirror: the business's selection was changed by another replica")

// errStaleSelection is the error of a write of rows shaped by a Selection
// that is no longer the business's (another replica applied another
// meanwhile), and of applying a Selection the business's configuration no
// longer has: the rows are fetched again, with the Selection recorded.
var errStaleSelection = errors.New("pgmirror: the business's selection changed meanwhile")

// An applied is a business's Selection as applied to it: its selector (nil
// keeps everything) and when it was applied (mirror_selections.applied_at).
type applied struct {
	sel *selector
	at  time.Time
}

// row applies the Selection to a row of res, and stamps it with when the
// Selection was applied (see store.Row.Selected).
func (a *applied) row(res *resource, r *store.Row) error {
	r.Selected = a.at
	return a.sel.row(res, r)
}

// applySelection applies the business's Selection (t.want) to it: when it
// is the one recorded (mirror_selections), it returns it; otherwise it
// rewrites what the mirror holds of the business to it (see reselect),
// unless t is the business of Config.Client and applied its Selection
// already (another replica changed it: ErrSelectionChanged).
func (m *Mirror) applySelection(ctx context.Context, t *tenant) (*applied, error) {
	want := t.want.normal()
	rec, err := m.store.Selection(ctx, t.name)
	if err != nil {
		return nil, err
	}
	had, err := recordedSelection(rec, t.name)
	if err != nil {
		return nil, err
	}
	if rec.Found && had.equal(want) {
		sel, err := newSelector(want, m.cfg.Keys, rec.KeyID)
		if err != nil {
			return nil, err
		}
		t.appliedOnce = true
		return &applied{sel, rec.AppliedAt}, nil
	}
	if t.stops && t.appliedOnce {
		return nil, stopWith(fmt.Errorf("%w: business %s keeps %s, this replica %s", ErrSelectionChanged, t.name, had, want))
	}
	if _, err := newSelector(want, m.cfg.Keys, m.hashKey(want, rec)); err != nil {
		return nil, err // before any lock
	}
	a, err := m.reselect(ctx, t, want)
	if err == nil {
		t.appliedOnce = true
	}
	return a, err
}

// recordedSelection decodes the Selection of rec: everything when none is
// recorded.
func recordedSelection(rec store.Recorded, business string) (Selection, error) {
	var s Selection
	if !rec.Found {
		return s, nil
	}
	if err := json.Unmarshal(rec.Selection, &s); err != nil {
		return s, fmt.Errorf("pgmirror: the selection recorded for business %s: %w", business, err)
	}
	return s.normal(), nil
}

// hashKey is the id of the key want's hashes are made with: the one
// recorded, while the business hashes anything, else the keyring's current
// one; "" when want hashes nothing.
func (m *Mirror) hashKey(want Selection, rec store.Recorded) string {
	switch {
	case len(want.Hash) == 0:
		return ""
	case rec.KeyID != "":
		return rec.KeyID
	case m.cfg.Keys != nil:
		return m.cfg.Keys.Current()
	}
	return ""
}

// A reselection counts what applying a changed Selection did to what the
// mirror held: rows rewritten and deleted, by table, and the resources
// walked again to fill in what the Selection keeps again.
type reselection struct {
	rewritten, deleted map[string]int64
	walked             []string
}

func (r *reselection) add(table string, rewritten, deleted int64) {
	if rewritten > 0 {
		r.rewritten[table] += rewritten
	}
	if deleted > 0 {
		r.deleted[table] += deleted
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// reselect records want as the business's Selection, in one transaction
// that first waits for every transaction writing the business's records
// or reading its Selection to end, and makes those after it wait
// (store.Tx.LockSelection), and rewrites in it what the mirror holds of
// the business (see rewriteHeld). Another replica that applied want
// meanwhile leaves it nothing to do. A business added with another
// Selection since t was loaded is not rewritten (errStaleSelection: the
// next load has the new one). It logs what it did.
func (m *Mirror) reselect(ctx context.Context, t *tenant, want Selection) (*applied, error) {
	var out *applied
	var had Selection
	var done reselection
	began := time.Now()
	err := m.store.InTx(ctx, "applying the selection of "+t.name, func(tx *store.Tx) error {
		done = reselection{rewritten: map[string]int64{}, deleted: map[string]int64{}}
		rec, err := tx.LockSelection(ctx, t.name, Resources())
		if err != nil {
			return err
		}
		if had, err = recordedSelection(rec, t.name); err != nil {
			return err
		}
		keyID := m.hashKey(want, rec)
		sel, err := newSelector(want, m.cfg.Keys, keyID)
		if err != nil {
			return err
		}
		if rec.Found && had.equal(want) { // applied by another replica meanwhile
			out = &applied{sel, rec.AppliedAt}
			return nil
		}
		if !t.stops {
			conf, found, err := tx.Configured(ctx, t.name)
			if err != nil {
				return err
			}
			var c Selection
			if found && json.Unmarshal(conf, &c) == nil && !c.equal(want) {
				return errStaleSelection
			}
		}
		if err := m.rewriteHeld(ctx, tx, t, had, want, keyID, sel, &done); err != nil {
			return err
		}
		b, err := json.Marshal(want)
		if err != nil {
			return err
		}
		at, err := tx.PutSelection(ctx, t.name, b, keyID)
		out = &applied{sel, at}
		return err
	})
	if err != nil {
		return nil, err
	}
	if n := sum(done.rewritten) + sum(done.deleted); n > 0 || len(done.walked) > 0 {
		t.log.InfoContext(ctx, "pgmirror: the business's selection changed: what the mirror held is rewritten to it",
			"from", had.String(), "to", want.String(), "rows_rewritten", sum(done.rewritten), "rows_deleted", sum(done.deleted),
			"rewritten", done.rewritten, "deleted", done.deleted, "walked_again", done.walked,
			"took", time.Since(began).Round(time.Millisecond).String())
	}
	return out, nil
}

// resourceStateTables are the mirror's own tables that hold rows of a
// business's resource (a resource column).
var resourceStateTables = []string{"mirror_backfill", "mirror_pending_fetch", "mirror_confirmed", "mirror_changes",
	"mirror_event_lag", "mirror_walk_listed"}

// rewriteHeld rewrites, in tx, what the mirror holds of the business from
// the Selection had to want (sel, hashing with the key keyID), counting in
// done:
//
//   - a resource no longer mirrored: its rows, lines, history, changes
//     and the mirror's state of it are deleted;
//   - a member now left out is removed, and a member now hashed (that was
//     kept as it is) hashed, in the rows, their lines, the history and
//     the change feed (an update whose every member becomes equal is
//     deleted);
//   - the inbox keeps of each delivery what sel keeps (inboxBody);
//   - a member left out or hashed that is now kept as it is, or one left
//     out now hashed, is filled in by a walk: the resource's backfill
//     begins again (a resource mirrored again has none).
//
// Nothing else is written: a row is written only when its content
// changes.
func (m *Mirror) rewriteHeld(ctx context.Context, tx *store.Tx, t *tenant, had, want Selection, keyID string, sel *selector, done *reselection) error {
	for _, res := range had.resources() {
		if slices.Contains(want.resources(), res) {
			continue
		}
		for _, table := range res.tables() {
			n, err := tx.DeleteRows(ctx, table, t.name, "")
			if err != nil {
				return err
			}
			done.add(table, 0, n)
		}
		for _, table := range resourceStateTables {
			n, err := tx.DeleteRows(ctx, table, t.name, res.name)
			if err != nil {
				return err
			}
			done.add(table, 0, n)
		}
	}
	delta := Selection{Exclude: minus(want.Exclude, had.Exclude), Hash: minus(minus(want.Hash, had.Hash), had.Exclude)}
	dsel, err := newSelector(delta, m.cfg.Keys, keyID)
	if err != nil {
		return err
	}
	for _, res := range want.resources() {
		if !slices.Contains(had.resources(), res) {
			done.walked = append(done.walked, res.name) // by the backfill: it has none of it
			continue
		}
		if dsel != nil && (dsel.members[res.name] != nil || dsel.lineMembers[res.name] != nil) {
			if err := dsel.rewriteResource(ctx, tx, t.name, res, done); err != nil {
				return err
			}
		}
		if refilled(res, had, want) {
			if _, err := tx.DeleteRows(ctx, "mirror_backfill", t.name, res.name); err != nil {
				return err
			}
			done.walked = append(done.walked, res.name)
		}
	}
	if sel == nil {
		return nil
	}
	inbox := t.name
	if m.cfg.Keys == nil {
		inbox = "" // Handler's deliveries
	}
	n, _, err := tx.Rewrite(ctx, pginbox.TableName, inbox, "", []store.RewriteColumn{
		{Name: "event_type", Kind: "text", ReadOnly: true}, {Name: "signed_at", Kind: "timestamptz", ReadOnly: true}, {Name: "body", Kind: "bytea"},
	}, func(vals []*string) ([]*string, bool, bool, error) {
		if vals[0] == nil || vals[1] == nil || vals[2] == nil {
			return vals, false, false, nil
		}
		at, err := time.Parse(time.RFC3339Nano, *vals[1])
		if err != nil {
			return nil, false, false, fmt.Errorf("pgmirror: a delivery's signing time %q: %w", *vals[1], err)
		}
		body, err := sel.inboxBody(&webhooks.Delivery{Type: webhooks.EventType(*vals[0]), Timestamp: at, Body: []byte(*vals[2])})
		if err != nil {
			return nil, false, false, err
		}
		if bytes.Equal(body, []byte(*vals[2])) {
			return vals, false, false, nil
		}
		text := string(body)
		return []*string{vals[0], vals[1], &text}, true, false, nil
	})
	done.add(pginbox.TableName, n, 0)
	return err
}

// refilled reports whether a member of res that had leaves out or hashes
// is kept by want as it is, or a member had leaves out is hashed by want:
// the values are not held, and a walk fills them in.
func refilled(res *resource, had, want Selection) bool {
	for _, name := range append(slices.Clone(had.Exclude), had.Hash...) {
		m, err := parseMember(name, false)
		if err != nil || m.res != res {
			continue
		}
		excluded := slices.Contains(had.Exclude, name)
		if !slices.Contains(want.Exclude, name) && (!slices.Contains(want.Hash, name) || excluded) {
			return true
		}
	}
	return false
}

// minus returns the names of a not in b.
func minus(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}

// historySuffix ends the name of a table's history table.
const historySuffix = "_history"

// tables are the tables of res's records: their lines and the lines'
// history when it has lines (first: their foreign key), then the records
// and their history.
func (res *resource) tables() []string {
	var out []string
	if res.lines != nil {
		out = append(out, res.lines.Name, res.lines.Name+historySuffix)
	}
	return append(out, res.table.Name, res.table.Name+historySuffix)
}

// rewriteResource applies s (the members a changed Selection newly leaves
// out or hashes) to what tx's mirror holds of res of business: the rows
// and versions (their typed columns and raw), their lines, and the
// changes of the feed.
func (s *selector) rewriteResource(ctx context.Context, tx *store.Tx, business string, res *resource, done *reselection) error {
	members, lines := s.members[res.name], s.lineMembers[res.name]
	for _, table := range []string{res.table.Name, res.table.Name + historySuffix} {
		cols := append([]store.RewriteColumn{{Name: "raw", Kind: "jsonb"}}, s.columns(res.table, members)...)
		n, _, err := tx.Rewrite(ctx, table, business, "", cols, func(vals []*string) ([]*string, bool, bool, error) {
			raw, changed, err := s.object([]byte(*vals[0]), members, lines)
			if err != nil {
				return nil, false, false, fmt.Errorf("pgmirror: a row of %s: %w", table, err)
			}
			text := string(raw)
			out, typed := s.columnValues(res.table, members, vals[1:])
			return append([]*string{&text}, out...), changed || typed, false, nil
		})
		if err != nil {
			return err
		}
		done.add(table, n, 0)
	}
	if res.lines != nil && len(lines) > 0 {
		for _, table := range []string{res.lines.Name, res.lines.Name + historySuffix} {
			cols := s.columns(res.lines, lines)
			if len(cols) == 0 {
				break // the members have no columns: they are only in the records' raw
			}
			n, _, err := tx.Rewrite(ctx, table, business, "", cols, func(vals []*string) ([]*string, bool, bool, error) {
				out, changed := s.columnValues(res.lines, lines, vals)
				return out, changed, false, nil
			})
			if err != nil {
				return err
			}
			done.add(table, n, 0)
		}
	}
	cols := []store.RewriteColumn{{Name: "op", Kind: "text", ReadOnly: true}, {Name: "old_values", Kind: "jsonb"}, {Name: "new_values", Kind: "jsonb"}}
	n, gone, err := tx.Rewrite(ctx, "mirror_changes", business, res.name, cols, func(vals []*string) ([]*string, bool, bool, error) {
		out := slices.Clone(vals)
		changed := false
		for i := 1; i <= 2; i++ {
			if vals[i] == nil {
				continue
			}
			b, ch, err := s.object([]byte(*vals[i]), members, lines)
			if err != nil {
				return nil, false, false, fmt.Errorf("pgmirror: a change of %s: %w", res.name, err)
			}
			text := string(b)
			out[i], changed = &text, changed || ch
		}
		if !changed || *vals[0] != OpUpdate || out[1] == nil || out[2] == nil {
			return out, changed, false, nil
		}
		old, new, err := withoutEqualMembers([]byte(*out[1]), []byte(*out[2]))
		if err != nil {
			return nil, false, false, err
		}
		if len(old) == 2 && len(new) == 2 { // {} and {}: nothing changed any more
			return nil, false, true, nil
		}
		oldText, newText := string(old), string(new)
		return []*string{vals[0], &oldText, &newText}, true, false, nil
	})
	done.add("mirror_changes", n, gone)
	return err
}

// columns are the columns of table that members names, as Rewrite reads
// and writes them.
func (s *selector) columns(table *store.Table, members map[string]bool) []store.RewriteColumn {
	var out []store.RewriteColumn
	for _, c := range table.Columns {
		if _, named := members[c.Name]; named {
			out = append(out, store.RewriteColumn{Name: c.Name, Kind: c.Type.SQL()})
		}
	}
	return out
}

// columnValues applies members to the values (as text) of the columns of
// table members names, in their order (see columns), and reports whether
// that changed any.
func (s *selector) columnValues(table *store.Table, members map[string]bool, vals []*string) ([]*string, bool) {
	out := slices.Clone(vals)
	changed := false
	i := 0
	for _, c := range table.Columns {
		hash, named := members[c.Name]
		if !named {
			continue
		}
		switch {
		case vals[i] == nil:
		case !hash:
			out[i], changed = nil, true
		default:
			h := s.hash([]byte(*vals[i]))
			out[i], changed = &h, true
		}
		i++
	}
	return out, changed
}

// withoutEqualMembers returns the JSON objects old and new without the
// members whose values are the same text in both.
func withoutEqualMembers(old, new []byte) ([]byte, []byte, error) {
	values := func(b []byte) (map[string]string, error) {
		out := map[string]string{}
		_, err := rewrite(b, func(name string, v jsontext.Value) (jsontext.Value, error) {
			out[name] = string(v)
			return v, nil
		})
		return out, err
	}
	o, err := values(old)
	if err != nil {
		return nil, nil, err
	}
	n, err := values(new)
	if err != nil {
		return nil, nil, err
	}
	same := func(name string, v jsontext.Value) (jsontext.Value, error) {
		if o[name] == n[name] {
			return nil, nil
		}
		return v, nil
	}
	if old, err = rewrite(old, same); err != nil {
		return nil, nil, err
	}
	new, err = rewrite(new, same)
	return old, new, err
}
