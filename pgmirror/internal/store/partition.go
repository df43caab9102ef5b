package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Hash partitioning by business (Config.Partitions). Every table of the
// schema that has a business column (the records, their lines, the
// mirror's own state, the change feed and pginbox's inbox; not
// mirror_businesses nor mirror_migrations) becomes a table PARTITION BY
// HASH (business) of n partitions named table_p0 … table_p<n-1>, in place:
// its rows, name, keys, indexes (by name), CHECK constraints, comments and
// grants are kept, and so are the foreign keys between the tables and the
// schema's views, dropped and made again over the new tables.

// partitionedSQL lists the schema's tables ($1) that have a business
// column, with how many partitions each has (0: not partitioned).
const partitionedSQL = `SELECT c.oid::regclass::text, c.relname, c.relkind = 'p',
	(SELECT count(*) FROM pg_inherits AS i WHERE i.inhparent = c.oid)
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND EXISTS (SELECT 1 FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = 'business' AND NOT a.attisdropped)
ORDER BY c.relname`

// What must be made again once a table is replaced: its key and unique
// constraints, its other indexes, its comment and its grants; and, across
// the tables, the foreign keys between them and the schema's views.
const (
	constraintsSQL = `SELECT format('ALTER TABLE %s ADD CONSTRAINT %I %s', $1::regclass, conname, pg_get_constraintdef(oid))
FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('p', 'u') ORDER BY conname`
	indexesSQL = `SELECT pg_get_indexdef(i.indexrelid)
FROM pg_index AS i
WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid)
ORDER BY i.indexrelid`
	// grantsSQL makes the GRANTs of relation $1, and its COMMENT.
	grantsSQL = `SELECT format('GRANT %s ON %s TO %s%s', a.privilege_type, $1::regclass,
		CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
		CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
FROM pg_class AS c, aclexplode(c.relacl) AS a
WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
UNION ALL
SELECT format('COMMENT ON %s %s IS %L', CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, $1::regclass, d.description)
FROM pg_class AS c JOIN pg_description AS d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
WHERE c.oid = $1::regclass`
	foreignKeysSQL = `SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname),
	format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
FROM pg_constraint
WHERE contype = 'f' AND (conrelid = ANY($1::regclass[]) OR confrelid = ANY($1::regclass[]))
ORDER BY oid`
	viewsSQL = `SELECT c.oid::regclass::text, format('CREATE VIEW %s AS %s', c.oid::regclass, pg_get_viewdef(c.oid))
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = 'v'
ORDER BY c.oid`
)

// partition hash-partitions by business, into n partitions, the tables of
// the schema with a business column that are not partitioned yet (see
// above), in tx, and returns their names. A table partitioned already into
// another number of partitions is an error: changing the number is not
// supported.
func (s *Store) partition(ctx context.Context, tx querier, n int) ([]string, error) {
	type table struct {
		qualified, name string
		partitioned     bool
		partitions      int
	}
	const op = "partitioning by business"
	tables, err := collect(ctx, tx, op, partitionedSQL, []any{s.schema}, func(r pgx.CollectableRow) (table, error) {
		var t table
		return t, r.Scan(&t.qualified, &t.name, &t.partitioned, &t.partitions)
	})
	if err != nil {
		return nil, err
	}
	var todo []table
	var names []string
	for _, t := range tables {
		switch {
		case !t.partitioned:
			todo, names = append(todo, t), append(names, t.qualified)
		case t.partitions != n:
			return nil, fmt.Errorf("pgmirror: table %s has %d partitions, not %d: changing the number of partitions is not supported", t.qualified, t.partitions, n)
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	// Every table at once, first: the running replicas' statements finish,
	// and the next ones wait for the commit.
	if _, err := exec(ctx, tx, op, "LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		return nil, err
	}

	// The views and the foreign keys go first, made again last.
	type view struct{ name, create string }
	views, err := collect(ctx, tx, op, viewsSQL, []any{s.schema}, func(r pgx.CollectableRow) (view, error) {
		var v view
		return v, r.Scan(&v.name, &v.create)
	})
	if err != nil {
		return nil, err
	}
	var last []string // statements to run at the end
	for _, v := range views {
		grants, err := collect(ctx, tx, op, grantsSQL, []any{v.name}, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		if _, err := exec(ctx, tx, op, "DROP VIEW "+v.name); err != nil {
			return nil, err
		}
		last = append(append(last, v.create), grants...)
	}
	type fk struct{ drop, add string }
	fks, err := collect(ctx, tx, op, foreignKeysSQL, []any{names}, func(r pgx.CollectableRow) (fk, error) {
		var f fk
		return f, r.Scan(&f.drop, &f.add)
	})
	if err != nil {
		return nil, err
	}
	var adds []string
	for _, f := range fks {
		if _, err := exec(ctx, tx, op, f.drop); err != nil {
			return nil, err
		}
		adds = append(adds, f.add)
	}
	last = append(adds, last...)

	for _, t := range todo {
		if err := s.partitionTable(ctx, tx, t.qualified, t.name, n); err != nil {
			return nil, err
		}
	}
	for _, sql := range last {
		if _, err := exec(ctx, tx, op, sql); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// partitionTable replaces the table qualified (its bare name) by a table
// PARTITION BY HASH (business) of n partitions holding its rows, with its
// keys, indexes, comment and grants.
func (s *Store) partitionTable(ctx context.Context, tx querier, qualified, name string, n int) error {
	op := "partitioning " + qualified
	var again []string
	for _, sql := range []string{constraintsSQL, indexesSQL, grantsSQL} {
		stmts, err := collect(ctx, tx, op, sql, []any{qualified}, pgx.RowTo[string])
		if err != nil {
			return err
		}
		again = append(again, stmts...)
	}
	schema := pgx.Identifier{s.schema}.Sanitize() + "."
	building := schema + pgx.Identifier{name + "_partitioned"}.Sanitize()
	stmts := []string{fmt.Sprintf(`CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED
		INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS) PARTITION BY HASH (business)`, building, qualified)}
	for i := range n {
		stmts = append(stmts, fmt.Sprintf(`CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d)`,
			schema+pgx.Identifier{fmt.Sprintf("%s_p%d", name, i)}.Sanitize(), building, n, i))
	}
	stmts = append(stmts,
		fmt.Sprintf(`INSERT INTO %s SELECT * FROM %s`, building, qualified),
		`DROP TABLE `+qualified,
		fmt.Sprintf(`ALTER TABLE %s RENAME TO %s`, building, pgx.Identifier{name}.Sanitize()))
	stmts = append(append(stmts, again...), `ANALYZE `+qualified)
	for _, sql := range stmts {
		if _, err := exec(ctx, tx, op, sql); err != nil {
			return err
		}
	}
	return nil
}

// acrossBusinesses are the statements that read or write the rows of more
// than one business, by design; every other statement touches one
// business's rows (one partition of each table, with Config.Partitions),
// which a test checks against PostgreSQL's plans.
var acrossBusinesses = []string{
	dueSQL, // which businesses have records to fetch: a read, before each business's claims
	// Which businesses' walks are due: reads of every business, before
	// each business's walk.
	allBackfilledSQL, allReconcileDueSQL, allPausedSQL,
	// Retention, by age: a batch of rows of any business a statement.
	pruneLagSQL, prunedThroughSQL, pruneChangesSQL, pruneInboxSQL,
	// The change feed, read in one global order.
	prunedSQL, readChangesSQL,
	// A business's tokens, and the fleet's total budget's (the row of
	// TotalBudget), with Config.BudgetTotal; takeOneSQL, without, touches
	// the business alone.
	takeSQL,
}

// AcrossBusinesses returns the statements that work across businesses by
// design, as the Store runs them, with the history's retention of tables
// (by age, as the others).
func (s *Store) AcrossBusinesses(tables []*Table) []string {
	out := make([]string, 0, len(acrossBusinesses)+len(tables))
	for _, sql := range acrossBusinesses {
		out = append(out, s.q(sql))
	}
	for _, t := range tables {
		out = append(out, s.q(t.pruneHistory()))
	}
	return out
}
