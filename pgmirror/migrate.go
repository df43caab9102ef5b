package pgmirror

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration is one file of migrations/, applied once.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. A file is
// named NNNN_description.sql; its number is its version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
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
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	return out, nil
}

// SchemaVersion is the version of the schema this package creates: the
// number of its migrations.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are fixed at build time; a test checks them
	}
	return len(ms)
}

// Migrate creates the schema (Config.Schema) and brings its tables to
// SchemaVersion, then creates pginbox's inbox table in it, all in one
// transaction (see MigrateSchema); with Config.Keys it then loads the
// businesses to serve. The Handlers store deliveries once it succeeded.
func (m *Mirror) Migrate(ctx context.Context) error {
	if err := migrateSchema(ctx, m.pool, m.cfg.Schema, m.cfg.Business, m.log); err != nil {
		return err
	}
	if m.cfg.Keys != nil {
		if err := m.loadBusinesses(ctx); err != nil {
			return err
		}
	}
	m.migrated.Store(true)
	return nil
}

// MigrateSchema creates schema in db and brings its tables to
// SchemaVersion, then creates pginbox's inbox table in it, all in one
// transaction: what Mirror.Migrate does, for a program that runs no Mirror
// (invoicing-mirror businesses). business names the business that the rows
// of a mirror made before businesses (version 4 and below) belong to
// (Config.Business; DefaultBusiness when ""). It is idempotent and safe when
// several replicas run it at once: a transaction-scoped advisory lock, per
// schema, makes them take turns, and each migration is recorded in
// mirror_migrations so that it runs once. Migrations never drop a mirrored
// record's table, column or row (they may replace keys and indexes). A
// database migrated by a newer version of this package (a higher version
// than SchemaVersion) is refused with an error rather than used.
func MigrateSchema(ctx context.Context, db *pgxpool.Pool, schema, business string) error {
	if !schemaName.MatchString(schema) {
		return fmt.Errorf("pgmirror: schema name %q: use letters, digits and underscores (at most 63), not starting with a digit", schema)
	}
	if business == "" {
		business = DefaultBusiness
	}
	if err := checkBusinessName(business); err != nil {
		return err
	}
	return migrateSchema(ctx, db, schema, business, slog.New(slog.DiscardHandler))
}

func migrateSchema(ctx context.Context, db *pgxpool.Pool, schema, business string, log *slog.Logger) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	ident := pgx.Identifier{schema}.Sanitize()
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lockKeyOf(schema, "migrate")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident); err != nil {
			return err
		}
		// The migrations name their tables unqualified: in the schema.
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, ident); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mirror_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mirror_migrations`).Scan(&current); err != nil {
			return err
		}
		// Migration 5 gives the rows of a mirror made before businesses to
		// business.
		if _, err := tx.Exec(ctx, `SELECT set_config('pgmirror.business', $1, true)`, business); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("pgmirror: schema %s is at version %d, newer than this program's %d: upgrade the program", schema, current, len(ms))
		}
		for _, mig := range ms[current:] {
			if _, err := tx.Exec(ctx, mig.sql); err != nil {
				return fmt.Errorf("migration %s: %w", mig.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mirror_migrations (version, name) VALUES ($1, $2)`, mig.version, mig.name); err != nil {
				return err
			}
			log.InfoContext(ctx, "pgmirror: migrated", "schema", schema, "version", mig.version, "migration", mig.name)
		}
		return pginbox.Migrate(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("pgmirror: migrating schema %s: %w", schema, err)
	}
	return nil
}
