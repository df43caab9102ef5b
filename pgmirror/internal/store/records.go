package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A Type is the PostgreSQL type of a mirror column, and says which Go value
// a Row holds for it: *string for Text, Numeric (exact decimal text) and
// Date (YYYY-MM-DD), *time.Time for Timestamp, *bool for Bool, *int32 for
// Int. A nil value is NULL.
type Type int

// The column types.
const (
	Text Type = iota
	Numeric
	Date
	Timestamp
	Bool
	Int
)

// SQL is the type's name as information_schema.columns.data_type says it.
func (t Type) SQL() string {
	return [...]string{"text", "numeric", "date", "timestamp with time zone", "boolean", "integer"}[t]
}

// arrayType is the type of the array parameter carrying a column's values.
func (t Type) arrayType() string {
	switch t {
	case Timestamp:
		return "timestamptz[]"
	case Bool:
		return "boolean[]"
	case Int:
		return "integer[]"
	}
	return "text[]" // numeric and date travel as exact text, cast in SQL
}

// cast is the SQL cast from the array element to the column's type.
func (t Type) cast() string {
	switch t {
	case Numeric:
		return "::numeric"
	case Date:
		return "::date"
	}
	return ""
}

// A Column is a typed column of a mirror table.
type Column struct {
	Name string
	Type Type
}

// A Table is a mirror table. For a record table, Columns are the typed
// columns after business and id (raw and the mirror_ columns follow them);
// for a lines table, Parent names the column holding the parent's id, and
// Columns follow it, position first.
type Table struct {
	Name    string
	Parent  string
	Columns []Column
}

// A Row is one record ready to write: its typed values, its raw JSON, its
// version and its lines.
type Row struct {
	ID string
	// Version is the service's version of the record, coalesce(updated_at,
	// created_at); nil when the record has neither.
	Version *time.Time
	Values  []any // one per table column, see Type
	Raw     []byte
	Lines   [][]any // one per line, one value per lines column
	// Selected is when the business's Selection that shaped the row was
	// applied (mirror_selections.applied_at): a row is written only while
	// that Selection is the business's (see Tx.Order).
	Selected time.Time
}

// columnArray returns the values of column col of rows as the typed slice
// pgx encodes into the column's array parameter.
func columnArray(typ Type, rows [][]any, col int) any {
	switch typ {
	case Timestamp:
		return collectValues[*time.Time](rows, col)
	case Bool:
		return collectValues[*bool](rows, col)
	case Int:
		return collectValues[*int32](rows, col)
	}
	return collectValues[*string](rows, col)
}

// collectValues returns column col of rows as a []T; a value of another
// type (nil included) becomes the zero T, a NULL.
func collectValues[T any](rows [][]any, col int) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i], _ = r[col].(T)
	}
	return out
}

// The statements below write records given as arrays: $1 the ids, then one
// array per column, then the raw JSON, the versions, the fetch sequence
// number, the business and the mirror's clock (see recordArgs).

// confirmedSeq is the SQL of a row's fetch number for the never-older
// rule: the highest of the fetch that wrote it and of the fetches that
// confirmed it without writing (migrations/0004): the last walk of the
// resource (resource names the resource's parameter) and a single fetch's
// confirmation.
func confirmedSeq(resource, business string) string {
	return `greatest(t.mirror_fetch_seq,
	(SELECT walk_seq FROM @.mirror_backfill WHERE business = ` + business + ` AND resource = ` + resource + `),
	(SELECT seq FROM @.mirror_confirmed AS c WHERE c.business = ` + business + ` AND c.resource = ` + resource + ` AND c.id = t.id))`
}

// toWriteSQL reads, writing and locking nothing, what the records given as
// $1 ids, $2 raw JSON, $3 versions and $4 the fetch sequence number, of the
// resource $5 of business $6, would do to their rows: write those without a
// row (new: true), and those not older than their row ((version, fetch
// number) compared as a pair, see confirmedSeq) whose content differs or
// whose row is marked deleted (new: false); confirm those newer than their
// row whose content is the same (new: NULL). Each record's row is looked up
// by its key (a lateral subquery that OFFSET 0 keeps from being turned into
// a join): the generic plan PostgreSQL keeps for a prepared statement,
// made without the arrays' lengths, would otherwise hash-join the
// business's whole table, a scan that grows with the business (2.6 ms for
// one record among 24,000, against 0.07 ms).
func (t *Table) toWriteSQL() string {
	pair := `(coalesce(u.version, '-infinity'), $4::bigint)`
	rowPair := `(t.mirror_version, ` + confirmedSeq("$5", "$6") + `)`
	differs := `(t.raw IS DISTINCT FROM u.raw::jsonb OR t.mirror_deleted_at IS NOT NULL)`
	return `SELECT u.id, CASE WHEN t.id IS NULL THEN true WHEN ` + differs + ` THEN false END
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(id, raw, version)
LEFT JOIN LATERAL (SELECT * FROM @.` + t.Name + ` AS r WHERE r.business = $6 AND r.id = u.id OFFSET 0) AS t ON true
WHERE t.id IS NULL OR (` + differs + ` AND ` + pair + ` >= ` + rowPair + `) OR (NOT ` + differs + ` AND ` + pair + ` > ` + rowPair + `)`
}

// source is the FROM item unnesting the arrays of recordArgs, and the
// typed values it selects, in column order (business first).
func (t *Table) source() (from string, values []string) {
	names := []string{"id"}
	params := []string{"$1::text[]"}
	values = []string{t.businessParam(), "u.id"}
	for i, c := range t.Columns {
		names = append(names, c.Name)
		params = append(params, fmt.Sprintf("$%d::%s", i+2, c.Type.arrayType()))
		values = append(values, "u."+c.Name+c.Type.cast())
	}
	n := len(t.Columns) + 2
	params = append(params, fmt.Sprintf("$%d::text[]", n), fmt.Sprintf("$%d::timestamptz[]", n+1))
	values = append(values, "u.raw::jsonb", "coalesce(u.version, '-infinity')", fmt.Sprintf("$%d::bigint", n+2), "now()", "now()",
		"coalesce(u.version, "+t.atParam()+")")
	from = `unnest(` + strings.Join(params, ", ") + `) AS u(` + strings.Join(names, ", ") + `, raw, version)`
	return from, values
}

// businessParam is the parameter of the business in the statements of a
// record table, after recordArgs's seq.
func (t *Table) businessParam() string { return fmt.Sprintf("$%d::text", len(t.Columns)+5) }

// atParam is the parameter of the mirror's clock (Versioning.At), after
// the business.
func (t *Table) atParam() string { return fmt.Sprintf("$%d::timestamptz", len(t.Columns)+6) }

// columnNames are the columns recordArgs fills, in order, business first.
func (t *Table) columnNames() []string {
	names := []string{"business", "id"}
	for _, c := range t.Columns {
		names = append(names, c.Name)
	}
	return append(names, "raw", "mirror_version", "mirror_fetch_seq", "mirror_synced_at", "mirror_changed_at", "mirror_valid_from")
}

// historyColumns are the columns of the table's history table
// (migrations/0013) but the interval: the record table's, without
// mirror_valid_from. For a lines table: business, the parent, its columns
// and mirror_deleted_at.
func (t *Table) historyColumns() []string {
	if t.Parent != "" {
		names := []string{"business", t.Parent}
		for _, c := range t.Columns {
			names = append(names, c.Name)
		}
		return append(names, "mirror_deleted_at")
	}
	names := t.columnNames()
	return append(names[:len(names)-1:len(names)-1], "mirror_deleted_at")
}

// validFrom is the SQL of when the version in the row a began
// (migrations/0013): mirror_valid_from, or for a row written before the
// history began its version, or without one when it changed.
func validFrom(a string) string {
	return "coalesce(" + a + ".mirror_valid_from, nullif(" + a + ".mirror_version, '-infinity'), " + a + ".mirror_changed_at)"
}

// prefixed is names, each with prefix.
func prefixed(prefix string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return strings.Join(out, ", ")
}

// insertSQL inserts the records given as arrays, in id order, unless a row
// with the id exists (another transaction inserted it meanwhile), and
// returns the ids inserted.
func (t *Table) insertSQL() string {
	from, values := t.source()
	return `INSERT INTO @.` + t.Name + ` (` + strings.Join(t.columnNames(), ", ") + `)
SELECT ` + strings.Join(values, ", ") + `
FROM ` + from + `
ORDER BY u.id
ON CONFLICT (business, id) DO NOTHING
RETURNING id`
}

// updateSQL writes the records given as arrays (and, after the mirror's
// clock, the resource's name and whether history is kept) over their rows,
// when they are not older than the row ((version, fetch number) compared
// as a pair, see confirmedSeq) and their content differs or the row is
// marked deleted (the mark is then cleared). It locks the rows in id order
// first. The new version begins at the record's version when the service
// moved it (updated_at), else at the mirror's clock (a record without one,
// or a change the service made without moving it), never before the old
// one ended (its deletion mark) or began; the old version goes to the
// history table with its interval, unless history is off. It returns for
// each row written, in id order, its id, its JSON as it was (text),
// whether it was marked deleted, and the old version's interval.
func (t *Table) updateSQL() string {
	from, values := t.source()
	names := t.columnNames()
	var sets []string
	for i, name := range names[2 : len(names)-1] { // not the key, nor mirror_valid_from
		sets = append(sets, name+" = "+values[i+2])
	}
	n := len(t.Columns)
	sets = append(sets, "mirror_deleted_at = NULL",
		"mirror_valid_from = greatest(CASE WHEN u.version > old.mirror_version THEN u.version ELSE "+t.atParam()+" END, "+
			"coalesce(old.mirror_deleted_at, "+validFrom("old")+"))")
	hist := t.historyColumns()
	return `WITH old AS (
	SELECT * FROM @.` + t.Name + ` WHERE business = ` + t.businessParam() + ` AND id = ANY($1::text[]) ORDER BY id FOR UPDATE),
written AS (
	UPDATE @.` + t.Name + ` AS t SET ` + strings.Join(sets, ", ") + `
	FROM ` + from + `, old
	WHERE t.business = ` + t.businessParam() + ` AND t.id = u.id AND old.id = u.id
	  AND (coalesce(u.version, '-infinity'), $` + fmt.Sprint(n+4) + `::bigint) >= (t.mirror_version, ` +
		confirmedSeq(fmt.Sprintf("$%d", n+7), t.businessParam()) + `)
	  AND (t.raw IS DISTINCT FROM u.raw::jsonb OR t.mirror_deleted_at IS NOT NULL)
	RETURNING t.id, t.mirror_valid_from),
closed AS (
	SELECT old.*, ` + validFrom("old") + ` AS valid_from,
		greatest(` + validFrom("old") + `, coalesce(old.mirror_deleted_at, written.mirror_valid_from)) AS valid_to
	FROM old JOIN written ON written.id = old.id),
kept AS (
	INSERT INTO @.` + t.Name + `_history (` + strings.Join(hist, ", ") + `, mirror_valid_from, mirror_valid_to)
	SELECT ` + prefixed("closed.", hist) + `, closed.valid_from, closed.valid_to FROM closed WHERE $` + fmt.Sprint(n+8) + `::boolean)
SELECT id, raw::text, mirror_deleted_at IS NOT NULL, valid_from, valid_to FROM closed ORDER BY id`
}

// deleteLinesSQL deletes the lines of the parents $1 of business $2, and
// keeps those of the parents $3 (a parent's version that ended) in the
// history table, with the interval $4 to $5 of their parent's version,
// when $6 (the delete runs either way: a data-modifying CTE always runs
// to completion).
func (t *Table) deleteLinesSQL() string {
	hist := t.historyColumns()
	return `WITH gone AS (DELETE FROM @.` + t.Name + ` WHERE business = $2 AND ` + t.Parent + ` = ANY($1::text[]) RETURNING *)
INSERT INTO @.` + t.Name + `_history (` + strings.Join(hist, ", ") + `, mirror_valid_from, mirror_valid_to)
SELECT ` + prefixed("gone.", hist) + `, c.valid_from, c.valid_to
FROM gone JOIN unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) AS c(id, valid_from, valid_to) ON c.id = gone.` + t.Parent + `
WHERE $6::boolean`
}

// insertLinesSQL inserts lines given as arrays: $1 the parents' ids, then
// one array per column, then the business.
func (t *Table) insertLinesSQL() string {
	names := []string{t.Parent}
	params := []string{"$1::text[]"}
	selects := []string{"u." + t.Parent}
	for i, c := range t.Columns {
		names = append(names, c.Name)
		params = append(params, fmt.Sprintf("$%d::%s", i+2, c.Type.arrayType()))
		selects = append(selects, "u."+c.Name+c.Type.cast())
	}
	list := strings.Join(names, ", ")
	return `INSERT INTO @.` + t.Name + ` (business, ` + list + `)
SELECT ` + fmt.Sprintf("$%d::text", len(t.Columns)+2) + `, ` + strings.Join(selects, ", ") + `
FROM unnest(` + strings.Join(params, ", ") + `) AS u(` + list + `)`
}

// recordArgs are the arguments of the table's write statements for rows:
// the ids, an array per column, the raw JSON, the versions, seq, the
// business and the mirror's clock (v.At).
func (t *Table) recordArgs(rows []Row, seq int64, business string, v Versioning) []any {
	ids := make([]string, len(rows))
	versions := make([]*time.Time, len(rows))
	raws := make([]string, len(rows))
	values := make([][]any, len(rows))
	for i, r := range rows {
		ids[i], versions[i], raws[i], values[i] = r.ID, r.Version, string(r.Raw), r.Values
	}
	args := []any{ids}
	for i, c := range t.Columns {
		args = append(args, columnArray(c.Type, values, i))
	}
	return append(args, raws, versions, seq, business, v.At)
}

// Versioning is how a write keeps the history of the records it writes
// (migrations/0013).
type Versioning struct {
	// At is the mirror's clock when it writes: the beginning of a version
	// of a record that has no version of its own (no updated_at nor
	// created_at), and the instant of a deletion mark.
	At time.Time
	// Keep keeps the versions a write replaces in the history tables; false
	// keeps none (Config.DisableHistory).
	Keep bool
}

// A Decision is what writing a record would do to its row (ToWrite).
type Decision int

// The decisions of ToWrite.
const (
	Insert  Decision = iota // no row: insert it
	Update                  // not older than its row, and its content differs (or the row is marked deleted)
	Confirm                 // newer than its row, with the same content: record the fetch, write nothing
)

// ToWrite returns, for the records of rows that change something, what
// writing them fetched with seq would do (see toWriteSQL): rows is sorted
// by id, without repeats. It writes and locks nothing.
func (tx *Tx) ToWrite(ctx context.Context, t *Table, resource, business string, rows []Row, seq int64) (map[string]Decision, error) {
	q := tx.toWrite(t, resource, business, rows, seq)
	r, err := tx.tx.Query(ctx, q.sql, q.args...)
	if err != nil {
		return nil, fail(q.op, err)
	}
	return q.read(r)
}

// OrderToWrite is Order then ToWrite, in one round trip: the first
// statements of a transaction that writes rows.
func (tx *Tx) OrderToWrite(ctx context.Context, business string, ids []string, t *Table, resource string, rows []Row, seq int64) (
	selected time.Time, decided map[string]Decision, err error) {
	keys, shared := WriteLocks(tx.s.schema, business, resource, ids)
	q := tx.toWrite(t, resource, business, rows, seq)
	selected, err = tx.lock(ctx, "waiting for the writers of "+resource+" of "+business, business, keys, shared, &q)
	return selected, q.decided, err
}

// A comparison is ToWrite's statement and what reads its rows.
type comparison struct {
	op, sql string
	args    []any
	read    func(pgx.Rows) (map[string]Decision, error)
	decided map[string]Decision // what read returned, when lock sent it
}

// toWrite is ToWrite's comparison.
func (tx *Tx) toWrite(t *Table, resource, business string, rows []Row, seq int64) comparison {
	ids := make([]string, len(rows))
	raws := make([]string, len(rows))
	versions := make([]*time.Time, len(rows))
	for i, r := range rows {
		ids[i], raws[i], versions[i] = r.ID, string(r.Raw), r.Version
	}
	op := "comparing " + resource
	return comparison{op: op, sql: tx.s.q(t.toWriteSQL()), args: []any{ids, raws, versions, seq, resource, business},
		read: func(r pgx.Rows) (map[string]Decision, error) {
			type decided struct {
				id  string
				new *bool
			}
			out, err := pgx.CollectRows(r, func(r pgx.CollectableRow) (decided, error) {
				var d decided
				return d, r.Scan(&d.id, &d.new)
			})
			if err != nil {
				return nil, fail(op, err)
			}
			m := make(map[string]Decision, len(out))
			for _, d := range out {
				switch {
				case d.new == nil:
					m[d.id] = Confirm
				case *d.new:
					m[d.id] = Insert
				default:
					m[d.id] = Update
				}
			}
			return m, nil
		}}
}

// confirmSQL records that the fetch $3 found the records $2 of the
// resource $1 of business $4 unchanged.
const confirmSQL = `INSERT INTO @.mirror_confirmed (business, resource, id, seq)
SELECT $4, $1, id, $3 FROM unnest($2::text[]) AS id ORDER BY id
ON CONFLICT (business, resource, id) DO UPDATE SET seq = greatest(mirror_confirmed.seq, EXCLUDED.seq)`

// Confirm records that the fetch seq found the records ids of resource
// unchanged (mirror_confirmed), leaving their rows alone.
func (tx *Tx) Confirm(ctx context.Context, resource, business string, ids []string, seq int64) error {
	_, err := exec(ctx, tx.tx, "confirming "+resource, tx.s.q(confirmSQL), resource, ids, seq, business)
	return err
}

// Insert inserts rows (sorted by id) fetched with seq, unless another
// transaction inserted one meanwhile, and returns the ids inserted, sorted.
func (tx *Tx) Insert(ctx context.Context, t *Table, business string, rows []Row, seq int64, v Versioning) ([]string, error) {
	if err := tx.requireOrdered("writing " + t.Name); err != nil {
		return nil, err
	}
	ids, err := collect(ctx, tx.tx, "writing "+t.Name, tx.s.q(t.insertSQL()), t.recordArgs(rows, seq, business, v), pgx.RowTo[string])
	slices.Sort(ids)
	return ids, err
}

// An Updated is a row Update wrote: its JSON before (text), whether it
// was marked deleted, and the interval of the version it replaced.
type Updated struct {
	ID         string
	Old        string
	WasDeleted bool
	From, To   time.Time
}

// Update writes rows (sorted by id) of resource fetched with seq over
// their rows, when not older and their content differs, keeping the
// versions replaced when v.Keep (see updateSQL). It returns the rows
// written, in id order.
func (tx *Tx) Update(ctx context.Context, t *Table, resource, business string, rows []Row, seq int64, v Versioning) ([]Updated, error) {
	if err := tx.requireOrdered("writing " + t.Name); err != nil {
		return nil, err
	}
	return collect(ctx, tx.tx, "writing "+t.Name, tx.s.q(t.updateSQL()), append(t.recordArgs(rows, seq, business, v), resource, v.Keep),
		func(r pgx.CollectableRow) (Updated, error) {
			var u Updated
			return u, r.Scan(&u.ID, &u.Old, &u.WasDeleted, &u.From, &u.To)
		})
}

// ReplaceLines replaces the lines of the parents written (sorted ids) with
// those of rows; the lines replaced of the parents of updated (the
// versions Update replaced) go to the history table with their parent's
// interval when v.Keep. Its statements are queued (Tx.queue).
func (tx *Tx) ReplaceLines(ctx context.Context, lt *Table, business string, rows []Row, written []string, updated []Updated, v Versioning) error {
	op := "writing " + lt.Name
	ids := make([]string, len(updated))
	from := make([]time.Time, len(updated))
	to := make([]time.Time, len(updated))
	for i, u := range updated {
		ids[i], from[i], to[i] = u.ID, u.From, u.To
	}
	if err := tx.queue(ctx, op, tx.s.q(lt.deleteLinesSQL()), written, business, ids, from, to, v.Keep); err != nil {
		return err
	}
	var parents []string
	var lines [][]any
	for _, r := range rows {
		if _, ok := slices.BinarySearch(written, r.ID); !ok {
			continue
		}
		for _, l := range r.Lines {
			parents = append(parents, r.ID)
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	args := []any{parents}
	for i, c := range lt.Columns {
		args = append(args, columnArray(c.Type, lines, i))
	}
	return tx.queue(ctx, op, tx.s.q(lt.insertLinesSQL()), append(args, business)...)
}

// markDeletedSQL marks deleted at $4 (the mirror's clock) the rows $1 of
// business $3 not marked and not written by a fetch since $2 began,
// locking them in id order first, and returns their ids.
const markDeletedSQL = `UPDATE @.%[1]s AS t
SET mirror_deleted_at = $4, mirror_changed_at = now(), mirror_fetch_seq = $2
FROM (SELECT id FROM @.%[1]s WHERE business = $3 AND id = ANY($1::text[]) ORDER BY id FOR UPDATE) AS locked
WHERE t.business = $3 AND t.id = locked.id AND t.mirror_deleted_at IS NULL AND t.mirror_fetch_seq < $2
RETURNING t.id`

// markLinesDeletedSQL marks deleted at $3, when they are not, the lines of
// the records $1 of business $2 (%[2]s: the lines' parent column).
const markLinesDeletedSQL = `UPDATE @.%[1]s SET mirror_deleted_at = $3
WHERE business = $2 AND %[2]s = ANY($1::text[]) AND mirror_deleted_at IS NULL`

// MarkDeleted marks deleted the rows ids of t that no fetch wrote since
// the fetch seq began, and the lines (of lines, nil for a record without)
// of those it marked, and returns the ids it marked. Lines are never
// unmarked: writing a record writes its lines anew.
func (tx *Tx) MarkDeleted(ctx context.Context, t, lines *Table, business string, ids []string, seq int64, v Versioning) ([]string, error) {
	op := "marking " + t.Name + " deleted"
	if err := tx.requireOrdered(op); err != nil {
		return nil, err
	}
	marked, err := collect(ctx, tx.tx, op, tx.s.q(fmt.Sprintf(markDeletedSQL, t.Name)), []any{ids, seq, business, v.At}, pgx.RowTo[string])
	if err != nil || lines == nil || len(marked) == 0 {
		return marked, err
	}
	_, err = exec(ctx, tx.tx, op, tx.s.q(fmt.Sprintf(markLinesDeletedSQL, lines.Name, lines.Parent)), marked, business, v.At)
	return marked, err
}

// CountLive counts the rows of t of business not marked deleted.
func (s *Store) CountLive(ctx context.Context, t *Table, business string) (int64, error) {
	var n int64
	err := scan(ctx, s.pool, "counting "+t.Name, s.q(`SELECT count(*) FROM @.`+t.Name+` WHERE business = $1 AND mirror_deleted_at IS NULL`),
		[]any{business}, &n)
	return n, err
}

// SampleLive returns how many rows of t of business are not marked
// deleted, counting to atLeast at most, and the ids of n of them at random
// (fewer only in a small table): of 4n probes of the index, each the first
// id after a random UUID, n of the distinct ones, rather than a scan of the
// table.
func (s *Store) SampleLive(ctx context.Context, t *Table, business string, n, atLeast int) (live int, sample []string, err error) {
	err = scan(ctx, s.pool, "reading the rows of "+t.Name,
		s.q(`SELECT (SELECT count(*) FROM (SELECT 1 FROM @.`+t.Name+` WHERE business = $2 AND mirror_deleted_at IS NULL LIMIT $3) AS c),
		coalesce((SELECT array_agg(id) FROM (
			SELECT id FROM (SELECT DISTINCT p.id FROM (SELECT gen_random_uuid()::text AS after FROM generate_series(1, 4 * $1)) AS g
				CROSS JOIN LATERAL (SELECT id FROM @.`+t.Name+` WHERE business = $2 AND mirror_deleted_at IS NULL
					AND id >= g.after ORDER BY id LIMIT 1) AS p) AS d
			ORDER BY random() LIMIT $1) AS s), '{}')`), []any{n, business, atLeast}, &live, &sample)
	return live, sample, err
}

// LiveIDs returns the ids of the rows of t of business not marked deleted.
func (s *Store) LiveIDs(ctx context.Context, t *Table, business string) ([]string, error) {
	var ids []string
	err := scan(ctx, s.pool, "reading the rows of "+t.Name,
		s.q(`SELECT coalesce(array_agg(id), '{}') FROM @.`+t.Name+` WHERE business = $1 AND mirror_deleted_at IS NULL`), []any{business}, &ids)
	return ids, err
}

// TableColumns returns the columns of table in the schema, in order, as
// "name data_type" (information_schema's type names; see Type.SQL): for a
// test that the tables the records generate are the migrated ones.
func (s *Store) TableColumns(ctx context.Context, table string) ([]string, error) {
	return collect(ctx, s.pool, "reading the columns of "+table,
		`SELECT column_name || ' ' || data_type FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, []any{s.schema, table}, pgx.RowTo[string])
}

// FunctionColumns returns the columns the set-returning function name of
// the schema returns, as "name type" with information_schema's type names.
func (s *Store) FunctionColumns(ctx context.Context, name string) ([]string, error) {
	return collect(ctx, s.pool, "reading the columns of "+name,
		`SELECT p.parameter_name || ' ' || p.data_type FROM information_schema.parameters AS p
		JOIN information_schema.routines AS r ON r.specific_schema = p.specific_schema AND r.specific_name = p.specific_name
		WHERE r.routine_schema = $1 AND r.routine_name = $2 AND p.parameter_mode = 'OUT' ORDER BY p.ordinal_position`,
		[]any{s.schema, name}, pgx.RowTo[string])
}

// A Mismatch is a record whose row differs from the service's copy
// (Compare, Unlisted).
type Mismatch struct {
	ID string
	// Missing: the service shows the record; the mirror has no row for it,
	// or has it marked deleted. Extra: the mirror has a live row the
	// service does not list (Unlisted). Otherwise both have it and Members
	// are the members of its JSON that differ.
	Missing, Extra bool
	Members        []string
	// Pending: an event asked for the record, and its fetch waits: the
	// difference is in flight.
	Pending bool
}

// compareSQL returns, for the records given as $1 ids and $2 JSON of the
// resource $4 of business $3, those whose row is missing, marked deleted,
// or holds other JSON (with the members that differ), and whether a fetch
// of each is pending. It reads only.
const compareSQL = `SELECT u.id, t.id IS NULL OR t.mirror_deleted_at IS NOT NULL,
	CASE WHEN t.id IS NOT NULL AND t.raw IS DISTINCT FROM u.raw::jsonb THEN
		(SELECT array_agg(k ORDER BY k) FROM (
			SELECT e.key AS k FROM jsonb_each(t.raw) AS e WHERE u.raw::jsonb -> e.key IS DISTINCT FROM e.value
			UNION SELECT e.key FROM jsonb_each(u.raw::jsonb) AS e WHERE t.raw -> e.key IS DISTINCT FROM e.value) AS d) END,
	EXISTS (SELECT 1 FROM @.mirror_pending_fetch AS p WHERE p.business = $3 AND p.resource = $4 AND p.id = u.id)
FROM unnest($1::text[], $2::text[]) AS u(id, raw)
LEFT JOIN @.%[1]s AS t ON t.business = $3 AND t.id = u.id
WHERE t.id IS NULL OR t.mirror_deleted_at IS NOT NULL OR t.raw IS DISTINCT FROM u.raw::jsonb`

// extraSQL returns the live rows of business $1 not among $2, and whether
// a fetch of each is pending (resource $3).
const extraSQL = `SELECT t.id, EXISTS (SELECT 1 FROM @.mirror_pending_fetch AS p WHERE p.business = $1 AND p.resource = $3 AND p.id = t.id)
FROM @.%[1]s AS t
WHERE t.business = $1 AND t.mirror_deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM unnest($2::text[]) AS l(id) WHERE l.id = t.id)
ORDER BY t.id`

// Compare returns the records of rows (the service's, of resource) whose
// row in t differs, writing nothing.
func (s *Store) Compare(ctx context.Context, t *Table, resource, business string, rows []Row) ([]Mismatch, error) {
	ids := make([]string, len(rows))
	raws := make([]string, len(rows))
	for i, r := range rows {
		ids[i], raws[i] = r.ID, string(r.Raw)
	}
	return collect(ctx, s.pool, "comparing "+t.Name, s.q(fmt.Sprintf(compareSQL, t.Name)), []any{ids, raws, business, resource},
		func(r pgx.CollectableRow) (Mismatch, error) {
			var m Mismatch
			return m, r.Scan(&m.ID, &m.Missing, &m.Members, &m.Pending)
		})
}

// Extra returns the live rows of t of business whose ids are not in
// listed (the ids the service listed), as Extra mismatches.
func (s *Store) Extra(ctx context.Context, t *Table, resource, business string, listed []string) ([]Mismatch, error) {
	return collect(ctx, s.pool, "comparing "+t.Name, s.q(fmt.Sprintf(extraSQL, t.Name)), []any{business, listed, resource},
		func(r pgx.CollectableRow) (Mismatch, error) {
			m := Mismatch{Extra: true}
			return m, r.Scan(&m.ID, &m.Pending)
		})
}

// Live reports whether business has a live row id in t.
func (s *Store) Live(ctx context.Context, t *Table, business, id string) (bool, error) {
	var live bool
	err := scan(ctx, s.pool, "reading a row of "+t.Name,
		s.q(`SELECT EXISTS (SELECT 1 FROM @.`+t.Name+` WHERE business = $1 AND id = $2 AND mirror_deleted_at IS NULL)`), []any{business, id}, &live)
	return live, err
}
