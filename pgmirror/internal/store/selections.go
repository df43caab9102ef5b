package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_selections (migrations/0014): the Selection the mirror applies to
// each business's data, the key its hashes are made with, and when it was
// applied: what shaped a row fetched then (see Tx.Order).

const (
	selectionSQL        = `SELECT selection, coalesce(hash_key, ''), applied_at FROM @.mirror_selections WHERE business = $1`
	selectionAppliedSQL = `SELECT applied_at FROM @.mirror_selections WHERE business = $1`
	putSelectionSQL     = `INSERT INTO @.mirror_selections (business, selection, hash_key, applied_at)
VALUES ($1, $2, nullif($3, ''), clock_timestamp())
ON CONFLICT (business) DO UPDATE SET selection = $2, hash_key = nullif($3, ''), applied_at = clock_timestamp()
RETURNING applied_at`
	configuredSQL = `SELECT selection FROM @.mirror_businesses WHERE name = $1`
)

// A Recorded is the Selection recorded for a business.
type Recorded struct {
	Found     bool   // false: none is recorded
	Selection []byte // JSON
	KeyID     string // the key its hashes are made with; "" for none
	AppliedAt time.Time
}

// Selection returns the Selection recorded for business.
func (s *Store) Selection(ctx context.Context, business string) (Recorded, error) {
	return recorded(ctx, s.pool, s.q(selectionSQL), business)
}

func recorded(ctx context.Context, q querier, sql, business string) (Recorded, error) {
	var r Recorded
	var text string
	err := q.QueryRow(ctx, sql, business).Scan(&text, &r.KeyID, &r.AppliedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Recorded{}, nil
	}
	r.Found, r.Selection = err == nil, []byte(text)
	return r, fail("reading a business's selection", err)
}

// Selections returns the Selection recorded for each business (JSON), by
// business.
func (s *Store) Selections(ctx context.Context) (map[string][]byte, error) {
	rows, err := collect(ctx, s.pool, "reading the selections", s.q(`SELECT business, selection FROM @.mirror_selections`), nil,
		func(r pgx.CollectableRow) ([2]string, error) {
			var out [2]string
			return out, r.Scan(&out[0], &out[1])
		})
	out := make(map[string][]byte, len(rows))
	for _, r := range rows {
		out[r[0]] = []byte(r[1])
	}
	return out, err
}

// LockSelection makes the transaction the only one that writes any record
// of the resources of business, or its Selection: it waits for those
// under way (their locks: see Order and SelectionApplied), and returns
// the Selection recorded, read once it holds them. Once per transaction,
// before anything else.
func (tx *Tx) LockSelection(ctx context.Context, business string, resources []string) (Recorded, error) {
	keys, shared := []string{SelectionLock(tx.s.schema, business)}, []bool{false}
	for _, r := range resources {
		keys, shared = append(keys, resourceLock(tx.s.schema, business, r)), append(shared, false)
	}
	if _, err := tx.lock(ctx, "waiting for the writers of "+business, business, keys, shared, nil); err != nil {
		return Recorded{}, err
	}
	return recorded(ctx, tx.tx, tx.s.q(selectionSQL), business)
}

// SelectionApplied returns when the Selection recorded for business was
// applied (zero when none is), unless one is being applied (LockSelection):
// then ok is false. Until the transaction ends, none is applied. Once per
// transaction, before anything else. It does not wait: a transaction that
// holds rows a Selection being applied rewrites (a delivery's inbox row)
// would deadlock with it.
func (tx *Tx) SelectionApplied(ctx context.Context, business string) (at time.Time, ok bool, err error) {
	at, err = tx.begin(ctx, "reading a business's selection", business, trySharedSQL, []any{SelectionLock(tx.s.schema, business)}, &ok, nil)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	return at, true, nil
}

const trySharedSQL = `SELECT pg_try_advisory_xact_lock_shared(hashtextextended($1, 0))`

// Configured returns the Selection business was added with
// (mirror_businesses.selection, JSON); found is false for a business not
// added (the business of a mirror's Config.Client).
func (tx *Tx) Configured(ctx context.Context, business string) (selection []byte, found bool, err error) {
	var text string
	err = tx.tx.QueryRow(ctx, tx.s.q(configuredSQL), business).Scan(&text)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return []byte(text), err == nil, fail("reading a business's configuration", err)
}

// PutSelection records selection (JSON) as business's, its hashes made
// with the key keyID ("" for none), and returns when.
func (tx *Tx) PutSelection(ctx context.Context, business string, selection []byte, keyID string) (time.Time, error) {
	var at time.Time
	err := scan(ctx, tx.tx, "recording a business's selection", tx.s.q(putSelectionSQL), []any{business, string(selection), keyID}, &at)
	return at, err
}

// A RewriteColumn is a column Rewrite reads, and writes unless ReadOnly.
type RewriteColumn struct {
	Name     string
	Kind     string // its type, which says how its value travels as text (a bytea's UTF-8, a timestamptz's RFC 3339)
	ReadOnly bool
}

// in and out are the SQL of the column's value as text, and of text $n
// as the column's value.
func (c RewriteColumn) in() string {
	switch c.Kind {
	case "bytea":
		return "convert_from(" + c.Name + ", 'UTF8')"
	case "text":
		return c.Name
	case "timestamptz":
		return "to_json(" + c.Name + ") #>> '{}'" // RFC 3339
	}
	return c.Name + "::text"
}

func (c RewriteColumn) out(param string) string {
	switch c.Kind {
	case "bytea":
		return "convert_to(" + param + ", 'UTF8')"
	case "text":
		return param
	}
	return param + "::" + c.Kind
}

// rewriteBatch is how many rows Rewrite reads and writes a statement.
const rewriteBatch = 1000

// Rewrite rewrites the rows of table of business (and of resource, in a
// table with a resource column, unless ""): fn gets the values of cols of
// each (as text; nil for NULL) and returns them as they are to be (the
// same slice, or one of as many; ReadOnly ones are not written), whether
// they changed, and del to delete the row instead. It reads the rows'
// places first and then the rows by batches of those places, so that each
// row is given to fn once, whatever fn writes. It returns how many rows it
// rewrote and deleted.
func (tx *Tx) Rewrite(ctx context.Context, table, business, resource string, cols []RewriteColumn,
	fn func(vals []*string) (out []*string, changed, del bool, err error)) (rewritten, deleted int64, err error) {
	op := "rewriting " + table + " of " + business
	where := `business = $1`
	args := []any{business}
	if resource != "" {
		where += ` AND resource = $2`
		args = append(args, resource)
	}
	var places []string
	places, err = collect(ctx, tx.tx, op, tx.s.q(`SELECT ctid::text FROM @.`+table+` WHERE `+where), args, pgx.RowTo[string])
	if err != nil {
		return 0, 0, err
	}
	ins := make([]string, len(cols))
	for i, c := range cols {
		ins[i] = c.in()
	}
	// Not a row this transaction wrote: a place freed meanwhile (retention
	// deleting a row) may hold one, rewritten already.
	read := tx.s.q(`SELECT ctid::text, ` + strings.Join(ins, ", ") + ` FROM @.` + table + `
WHERE business = $1 AND ctid = ANY($2::tid[]) AND xmin <> pg_current_xact_id()::xid`)
	var sets, names []string
	params := []string{"$2::tid[]"}
	for _, c := range cols {
		if !c.ReadOnly {
			names = append(names, c.Name)
			params = append(params, fmt.Sprintf("$%d::text[]", len(params)+2))
			sets = append(sets, c.Name+" = "+c.out("u."+c.Name))
		}
	}
	write := tx.s.q(`UPDATE @.` + table + ` AS t SET ` + strings.Join(sets, ", ") + `
FROM unnest(` + strings.Join(params, ", ") + `) AS u(place, ` + strings.Join(names, ", ") + `)
WHERE t.business = $1 AND t.ctid = ANY($2::tid[]) AND t.ctid = u.place`)
	remove := tx.s.q(`DELETE FROM @.` + table + ` WHERE business = $1 AND ctid = ANY($2::tid[])`)
	for len(places) > 0 {
		batch := places[:min(rewriteBatch, len(places))]
		places = places[len(batch):]
		rows, err := tx.tx.Query(ctx, read, business, batch)
		if err != nil {
			return rewritten, deleted, fail(op, err)
		}
		var changedPlaces, gone []string
		changedVals := make([][]*string, len(names))
		for rows.Next() {
			var place string
			vals := make([]*string, len(cols))
			dest := []any{&place}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return rewritten, deleted, fail(op, err)
			}
			out, changed, del, err := fn(vals)
			switch {
			case err != nil:
				rows.Close()
				return rewritten, deleted, err
			case del:
				gone = append(gone, place)
			case changed:
				changedPlaces = append(changedPlaces, place)
				j := 0
				for i, c := range cols {
					if !c.ReadOnly {
						changedVals[j] = append(changedVals[j], out[i])
						j++
					}
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return rewritten, deleted, fail(op, err)
		}
		if len(changedPlaces) > 0 {
			args := []any{business, changedPlaces}
			for _, v := range changedVals {
				args = append(args, v)
			}
			n, err := exec(ctx, tx.tx, op, write, args...)
			if rewritten += n; err != nil {
				return rewritten, deleted, err
			}
		}
		if len(gone) > 0 {
			n, err := exec(ctx, tx.tx, op, remove, business, gone)
			if deleted += n; err != nil {
				return rewritten, deleted, err
			}
		}
	}
	return rewritten, deleted, nil
}

// DeleteRows deletes the rows of table of business (and of resource, in a
// table with a resource column, unless "") and returns how many.
func (tx *Tx) DeleteRows(ctx context.Context, table, business, resource string) (int64, error) {
	sql, args := `DELETE FROM @.`+table+` WHERE business = $1`, []any{business}
	if resource != "" {
		sql, args = sql+` AND resource = $2`, append(args, resource)
	}
	return exec(ctx, tx.tx, "deleting "+table+" of "+business, tx.s.q(sql), args...)
}

// RewriteDelivery replaces what the inbox keeps of the body of the
// delivery id of business (its business there: "" for Handler's) by body.
func (tx *Tx) RewriteDelivery(ctx context.Context, business, id string, body []byte) error {
	_, err := exec(ctx, tx.tx, "rewriting a delivery", tx.s.q(`UPDATE @.`+pginbox.TableName+` SET body = $3 WHERE business = $1 AND delivery_id = $2`),
		business, id, body)
	return err
}
