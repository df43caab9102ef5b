package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A Migration is one file of migrations/, applied once.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in version order. A file is
// named NNNN_description.sql; its number is its version.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names { // fs.Glob sorts them
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("pgmirror: migration %s: want the name %04d_description.sql", base, len(out)+1)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(b)})
	}
	return out, nil
}

// Version is the version of the schema this package creates: the number of
// its migrations.
func Version() int {
	ms, err := Migrations()
	if err != nil {
		panic(err) // the embedded files are fixed at build time; a test checks them
	}
	return len(ms)
}

const migrationsTableSQL = `CREATE TABLE IF NOT EXISTS mirror_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now())`

// Migrate creates the schema and brings its tables to Version, then
// creates pginbox's inbox table in it, all in one transaction, under a
// transaction-scoped advisory lock (replicas migrating at once take
// turns); each migration is recorded in mirror_migrations so that it runs
// once. business names the business the rows of a mirror made before
// businesses belong to (migration 5). With partitions above 0, the tables
// with a business column that are not partitioned yet are then
// hash-partitioned by business into that many partitions, in place (see
// partition). A schema at a newer version is refused.
func (s *Store) Migrate(ctx context.Context, business string, partitions int, log *slog.Logger) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	// Partitioning locks tables that running replicas use: when
	// PostgreSQL ends a deadlock with one of their transactions by
	// aborting the migration, the migration runs again (the other
	// transaction has moved on by then).
	var applied []Migration
	var tables []string
	for attempt := 1; ; attempt++ {
		applied, tables, err = s.migrate(ctx, ms, business, partitions)
		if attempt == migrateAttempts || !conflict(err) {
			break
		}
	}
	if err == nil { // what committed
		for _, m := range applied {
			log.InfoContext(ctx, "pgmirror: migrated", "schema", s.schema, "version", m.Version, "migration", m.Name)
		}
		if len(tables) > 0 {
			log.InfoContext(ctx, "pgmirror: partitioned by business", "schema", s.schema, "partitions", partitions, "tables", len(tables))
		}
	}
	var e *Error
	if err != nil && !errors.As(err, &e) {
		err = &Error{Op: "migrating schema " + s.schema, Err: err}
	}
	return err
}

// migrateAttempts is how many times Migrate runs its transaction when
// PostgreSQL aborts it for a deadlock.
const migrateAttempts = 5

// migrate is one attempt of Migrate: it returns the migrations it applied
// and the tables it partitioned.
func (s *Store) migrate(ctx context.Context, ms []Migration, business string, partitions int) (applied []Migration, tables []string, err error) {
	err = s.InTx(ctx, "migrating schema "+s.schema, func(tx *Tx) error {
		q := tx.tx
		if err := s.enter(ctx, q, true); err != nil {
			return err
		}
		var current int
		if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mirror_migrations`).Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("pgmirror: schema %s is at version %d, newer than this program's %d: upgrade the program", s.schema, current, len(ms))
		}
		// Migration 5 gives the rows of a mirror made before businesses to
		// business.
		if _, err := q.Exec(ctx, `SELECT set_config('pgmirror.business', $1, true)`, business); err != nil {
			return err
		}
		for _, m := range ms[current:] {
			if err := s.apply(ctx, q, m); err != nil {
				return err
			}
		}
		applied = ms[current:]
		if err := pginbox.Migrate(ctx, q); err != nil || partitions == 0 {
			return err
		}
		tables, err = s.partition(ctx, q, partitions)
		return err
	})
	return applied, tables, err
}

// MigrateToVersion creates the schema at version (below Version), as an
// older version of the package would have left it: for the upgrade tests.
func (s *Store) MigrateToVersion(ctx context.Context, version int) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	return s.InTx(ctx, "migrating schema "+s.schema, func(tx *Tx) error {
		if err := s.enter(ctx, tx.tx, false); err != nil {
			return err
		}
		for _, m := range ms[:version] {
			if err := s.apply(ctx, tx.tx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// enter creates the schema, its migrations table, and makes it the
// transaction's search_path (the migrations name their tables
// unqualified); with lock, under the schema's migration lock first.
func (s *Store) enter(ctx context.Context, q querier, lock bool) error {
	if lock {
		if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, LockKey(s.schema, "migrate")); err != nil {
			return err
		}
	}
	ident := strings.TrimSuffix(s.ident, ".")
	for _, sql := range []string{`CREATE SCHEMA IF NOT EXISTS ` + ident, `SELECT set_config('search_path', '` + strings.ReplaceAll(ident, `'`, `''`) + `', true)`,
		migrationsTableSQL} {
		if _, err := q.Exec(ctx, sql); err != nil {
			return err
		}
	}
	return nil
}

// apply runs a migration and records it. The migration runs in the
// schema (its search_path); where that does not apply, in the body of a
// function, which runs with its caller's, it writes the prefix "@." for
// the schema, as the Store's statements do.
func (s *Store) apply(ctx context.Context, q querier, m Migration) error {
	if _, err := q.Exec(ctx, s.q(m.SQL)); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	_, err := q.Exec(ctx, `INSERT INTO mirror_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
	return err
}

// ErrNotMigrated is CheckVersion's error for a schema that does not hold a
// mirror at Version.
var ErrNotMigrated = errors.New("pgmirror: not a mirror at this program's schema version")

// CheckVersion returns an error wrapping ErrNotMigrated unless the schema
// is at Version.
func (s *Store) CheckVersion(ctx context.Context) error { return s.checkVersion(ctx, s.pool) }

// checkVersion is CheckVersion through q.
func (s *Store) checkVersion(ctx context.Context, q querier) error {
	var version int
	err := q.QueryRow(ctx, s.q(`SELECT coalesce(max(version), 0) FROM @.mirror_migrations`)).Scan(&version)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: no schema, or not a mirror's
		return fmt.Errorf("%w: schema %s has no mirror_migrations table (has invoicing-mirror run with --schema %s?)", ErrNotMigrated, s.schema, s.schema)
	}
	if err != nil {
		return fail("reading the schema's version", err)
	}
	switch {
	case version > Version():
		return fmt.Errorf("%w: schema %s is at version %d, newer than this program's %d: upgrade the program", ErrNotMigrated, s.schema, version, Version())
	case version != Version():
		return fmt.Errorf("%w: schema %s is at version %d, this program's is %d (a replica of this version migrates it)",
			ErrNotMigrated, s.schema, version, Version())
	}
	return nil
}
