package pgmirror

import (
	"fmt"
	"strings"
	"time"
)

// colType is the PostgreSQL type of a mirror column, and says which Go
// value a row holds for it: *string for text, numeric (exact decimal text)
// and date (YYYY-MM-DD), *time.Time for timestamptz, *bool for boolean,
// *int32 for integer. A nil value is NULL.
type colType int

const (
	tText colType = iota
	tNumeric
	tDate
	tTimestamp
	tBool
	tInt
)

// arrayType is the type of the array parameter carrying a column's values.
func (t colType) arrayType() string {
	switch t {
	case tTimestamp:
		return "timestamptz[]"
	case tBool:
		return "boolean[]"
	case tInt:
		return "integer[]"
	}
	return "text[]" // numeric and date travel as exact text, cast in SQL
}

// cast is the SQL cast from the array element to the column's type.
func (t colType) cast() string {
	switch t {
	case tNumeric:
		return "::numeric"
	case tDate:
		return "::date"
	}
	return ""
}

// A column is a typed column of a mirror table.
type column struct {
	name string
	typ  colType
}

// A table is a mirror table. For a record table, columns are the typed
// columns after id (raw and the mirror_ columns are implied); for a lines
// table, parent names the column holding the parent's id and columns follow
// it, position first.
type table struct {
	name    string
	parent  string
	columns []column
}

// row is one record ready to write: its typed values, its raw JSON, its
// version and its lines.
type row struct {
	id string
	// version is the service's version of the record, coalesce(updated_at,
	// created_at); nil when the record has neither.
	version *time.Time
	values  []any // one per table column, see colType
	raw     []byte
	lines   [][]any // one per line, one value per lines column
}

// columnArray returns the values of column col of rows as the typed slice
// pgx encodes into the column's array parameter.
func columnArray(typ colType, rows [][]any, col int) any {
	switch typ {
	case tTimestamp:
		return collect[*time.Time](rows, col)
	case tBool:
		return collect[*bool](rows, col)
	case tInt:
		return collect[*int32](rows, col)
	}
	return collect[*string](rows, col)
}

// collect returns column col of rows as a []T; a value of another type
// (nil included) becomes the zero T, a NULL.
func collect[T any](rows [][]any, col int) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i], _ = r[col].(T)
	}
	return out
}

// mirrorColumns are the columns every record table ends with (besides
// mirror_deleted_at, NULL while the service lists the record).
const mirrorColumns = "raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at"

// The statements below write records given as arrays: $1 the ids, then one
// array per column, then the raw JSON, the versions and the fetch sequence
// number (see recordArgs).

// confirmedSeq is the SQL of a row's fetch number for the never-older
// rule: the highest of the fetch that wrote it and of the fetches that
// confirmed it without writing (migrations/0004): the last walk of the
// resource ($resource names the resource's parameter) and a single fetch's
// confirmation.
func confirmedSeq(resource, business string) string {
	return `greatest(t.mirror_fetch_seq,
	(SELECT walk_seq FROM mirror_backfill WHERE business = ` + business + ` AND resource = ` + resource + `),
	(SELECT seq FROM mirror_confirmed AS c WHERE c.business = ` + business + ` AND c.resource = ` + resource + ` AND c.id = t.id))`
}

// toWriteSQL reads, writing and locking nothing, what the records given as
// $1 ids, $2 raw JSON, $3 versions and $4 the fetch sequence number, of the
// resource $5 of business $6, would do to their rows: write those without a row (new:
// true), and those not older than their row ((version, fetch number)
// compared as a pair, see confirmedSeq) whose content differs or whose row
// is marked deleted (new: false); confirm those newer than their row whose
// content is the same (new: NULL).
func (t *table) toWriteSQL() string {
	pair := `(coalesce(u.version, '-infinity'), $4::bigint)`
	rowPair := `(t.mirror_version, ` + confirmedSeq("$5", "$6") + `)`
	differs := `(t.raw IS DISTINCT FROM u.raw::jsonb OR t.mirror_deleted_at IS NOT NULL)`
	return `SELECT u.id, CASE WHEN t.id IS NULL THEN true WHEN ` + differs + ` THEN false END
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(id, raw, version)
LEFT JOIN ` + t.name + ` AS t ON t.business = $6 AND t.id = u.id
WHERE t.id IS NULL OR (` + differs + ` AND ` + pair + ` >= ` + rowPair + `) OR (NOT ` + differs + ` AND ` + pair + ` > ` + rowPair + `)`
}

// source is the FROM item unnesting the arrays of recordArgs, and the
// typed values it selects, in column order (business first).
func (t *table) source() (from string, values []string) {
	names := []string{"id"}
	params := []string{"$1::text[]"}
	values = []string{t.businessParam(), "u.id"}
	for i, c := range t.columns {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("$%d::%s", i+2, c.typ.arrayType()))
		values = append(values, "u."+c.name+c.typ.cast())
	}
	n := len(t.columns) + 2
	params = append(params, fmt.Sprintf("$%d::text[]", n), fmt.Sprintf("$%d::timestamptz[]", n+1))
	values = append(values, "u.raw::jsonb", "coalesce(u.version, '-infinity')", fmt.Sprintf("$%d::bigint", n+2), "now()", "now()")
	from = `unnest(` + strings.Join(params, ", ") + `) AS u(` + strings.Join(names, ", ") + `, raw, version)`
	return from, values
}

// businessParam is the parameter of the business in the statements of a
// record table, after recordArgs's (see recordArgs).
func (t *table) businessParam() string { return fmt.Sprintf("$%d::text", len(t.columns)+5) }

// columnNames are the columns recordArgs fills, in order, business first.
func (t *table) columnNames() []string {
	names := []string{"business", "id"}
	for _, c := range t.columns {
		names = append(names, c.name)
	}
	return append(names, strings.Split(mirrorColumns, ", ")...)
}

// insertSQL inserts the records given as arrays, in id order, unless a row
// with the id exists (another transaction inserted it meanwhile), and
// returns the ids inserted.
func (t *table) insertSQL() string {
	from, values := t.source()
	return `INSERT INTO ` + t.name + ` (` + strings.Join(t.columnNames(), ", ") + `)
SELECT ` + strings.Join(values, ", ") + `
FROM ` + from + `
ORDER BY u.id
ON CONFLICT (business, id) DO NOTHING
RETURNING id`
}

// updateSQL writes the records given as arrays (and, after the business,
// the resource's name) over their rows, when they are not older than the row
// ((version, fetch number) compared as a pair, see confirmedSeq) and their
// content differs or the row is marked deleted (the mark is then cleared). It locks the rows in id order first, and returns for each row
// written its id, its JSON as it was (text) and whether it was marked
// deleted.
func (t *table) updateSQL() string {
	from, values := t.source()
	names := t.columnNames()
	var sets []string
	for i, name := range names[2:] { // not the key
		sets = append(sets, name+" = "+values[i+2])
	}
	sets = append(sets, "mirror_deleted_at = NULL")
	return `UPDATE ` + t.name + ` AS t SET ` + strings.Join(sets, ", ") + `
FROM ` + from + `,
     (SELECT id, raw, mirror_deleted_at FROM ` + t.name + ` WHERE business = ` + t.businessParam() + ` AND id = ANY($1::text[])
      ORDER BY id FOR UPDATE) AS old
WHERE t.business = ` + t.businessParam() + ` AND t.id = u.id AND old.id = u.id
  AND (coalesce(u.version, '-infinity'), $` + fmt.Sprint(len(t.columns)+4) + `::bigint) >= (t.mirror_version, ` +
		confirmedSeq(fmt.Sprintf("$%d", len(t.columns)+6), t.businessParam()) + `)
  AND (t.raw IS DISTINCT FROM u.raw::jsonb OR t.mirror_deleted_at IS NOT NULL)
RETURNING t.id, old.raw::text, old.mirror_deleted_at IS NOT NULL`
}

// deleteLinesSQL deletes the lines of the parents $1 of business $2.
func (t *table) deleteLinesSQL() string {
	return `DELETE FROM ` + t.name + ` WHERE business = $2 AND ` + t.parent + ` = ANY($1::text[])`
}

// insertLinesSQL inserts lines given as arrays: $1 the parents' ids, then
// one array per column, then the business.
func (t *table) insertLinesSQL() string {
	names := []string{t.parent}
	params := []string{"$1::text[]"}
	selects := []string{"u." + t.parent}
	for i, c := range t.columns {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("$%d::%s", i+2, c.typ.arrayType()))
		selects = append(selects, "u."+c.name+c.typ.cast())
	}
	list := strings.Join(names, ", ")
	return `INSERT INTO ` + t.name + ` (business, ` + list + `)
SELECT ` + fmt.Sprintf("$%d::text", len(t.columns)+2) + `, ` + strings.Join(selects, ", ") + `
FROM unnest(` + strings.Join(params, ", ") + `) AS u(` + list + `)`
}
