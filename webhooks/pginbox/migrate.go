package pginbox

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// TableName is the name of the inbox table. It is created in the first
// schema of the connection's search_path.
const TableName = "invoicing_webhook_inbox"

//go:embed inbox.sql
var migrationSQL string

// MigrationSQL returns the SQL that creates the inbox table and its index,
// or upgrades an earlier version's table, the contents of inbox.sql in this
// module, for a migration tool. Running it again changes nothing.
func MigrationSQL() string { return migrationSQL }

// Execer runs SQL: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Migrate creates the inbox table and its index when they do not exist, and
// upgrades a table of an earlier version (without the business column) in
// place, running MigrationSQL. It is idempotent and safe to call from every
// replica at start-up, even at the same moment (an advisory lock serialises
// them).
func Migrate(ctx context.Context, db Execer) error {
	if _, err := db.Exec(ctx, migrationSQL); err != nil {
		return fmt.Errorf("pginbox: creating table %s: %w", TableName, err)
	}
	return nil
}
