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

// mirrorColumns are the columns every record table ends with.
const mirrorColumns = "raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at"

// upsertSQL writes records given as arrays ($1 the ids, then one array per
// column, then the raw JSON, the versions and the fetch sequence number) in
// id order. A record is written when it is new, or when it is not older than
// the row, (version, fetch_seq) compared as a pair, and its content differs;
// only those are returned. Every row it meets is locked, written or not.
func (t *table) upsertSQL() string {
	names := []string{"id"}
	params := []string{"$1::text[]"}
	selects := []string{"u.id"}
	var sets []string
	for i, c := range t.columns {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("$%d::%s", i+2, c.typ.arrayType()))
		selects = append(selects, "u."+c.name+c.typ.cast())
		sets = append(sets, c.name+" = EXCLUDED."+c.name)
	}
	n := len(t.columns) + 2
	params = append(params, fmt.Sprintf("$%d::text[]", n), fmt.Sprintf("$%d::timestamptz[]", n+1))
	alias := strings.Join(names, ", ") + ", raw, version"
	selects = append(selects, "u.raw::jsonb", "coalesce(u.version, '-infinity')", fmt.Sprintf("$%d::bigint", n+2), "now()", "now()")
	sets = append(sets, "raw = EXCLUDED.raw", "mirror_version = EXCLUDED.mirror_version",
		"mirror_fetch_seq = EXCLUDED.mirror_fetch_seq", "mirror_synced_at = EXCLUDED.mirror_synced_at",
		"mirror_changed_at = EXCLUDED.mirror_changed_at")
	return `INSERT INTO ` + t.name + ` AS t (` + strings.Join(names, ", ") + `, ` + mirrorColumns + `)
SELECT ` + strings.Join(selects, ", ") + `
FROM unnest(` + strings.Join(params, ", ") + `) AS u(` + alias + `)
ORDER BY u.id
ON CONFLICT (id) DO UPDATE SET ` + strings.Join(sets, ", ") + `
WHERE (EXCLUDED.mirror_version, EXCLUDED.mirror_fetch_seq) >= (t.mirror_version, t.mirror_fetch_seq)
  AND EXCLUDED.raw IS DISTINCT FROM t.raw
RETURNING id`
}

// touchSQL records that a fetch ($1 ids, $2 versions, $3 the fetch
// sequence number) confirmed rows whose content it did not change: it moves
// their version and fetch_seq forward, so that an older fetch still in flight
// cannot win over it later. It leaves rows the fetch is older than alone.
func (t *table) touchSQL() string {
	return `UPDATE ` + t.name + ` AS t
SET mirror_version = coalesce(u.version, '-infinity'), mirror_fetch_seq = $3, mirror_synced_at = now()
FROM unnest($1::text[], $2::timestamptz[]) AS u(id, version)
WHERE t.id = u.id AND (coalesce(u.version, '-infinity'), $3::bigint) > (t.mirror_version, t.mirror_fetch_seq)`
}

// deleteLinesSQL deletes the lines of the parents $1.
func (t *table) deleteLinesSQL() string {
	return `DELETE FROM ` + t.name + ` WHERE ` + t.parent + ` = ANY($1::text[])`
}

// insertLinesSQL inserts lines given as arrays: $1 the parents' ids, then
// one array per column.
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
	return `INSERT INTO ` + t.name + ` (` + list + `)
SELECT ` + strings.Join(selects, ", ") + `
FROM unnest(` + strings.Join(params, ", ") + `) AS u(` + list + `)`
}
