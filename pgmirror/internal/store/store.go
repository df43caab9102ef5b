// Package store holds every SQL statement of pgmirror, behind typed
// methods: the loops above it never write SQL, and every error it returns
// that comes from PostgreSQL, or from reaching it, is an *Error, whose Away
// tells a database that cannot be reached from a statement that failed.
//
// The statements are hand-written, one named constant per statement in the
// file of the table it serves (records.go builds those of the record
// tables from their Table). They name the mirror's tables as @.table: the
// Store puts its schema in place of @, so that a statement never depends
// on a connection's search_path. (sqlc would compile the fixed ones, but
// not the record tables' statements, which are built from the tables the
// SDK's records generate, and it would add a tool to the build; the fixed
// statements are few enough to read.)
package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A Store is the database of the mirror in one schema, through a pool.
// Safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	schema string // its name
	ident  string // quoted, with the dot that follows it: `"name".`
	notify notifier
}

// New returns the Store of the mirror in schema, through pool; the pool's
// search_path does not matter.
func New(pool *pgxpool.Pool, schema string) *Store {
	return &Store{pool: pool, schema: schema, ident: pgx.Identifier{schema}.Sanitize() + "."}
}

// Pool returns the Store's pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the name of the Store's schema.
func (s *Store) Schema() string { return s.schema }

// q is sql with the schema in place of each "@.".
func (s *Store) q(sql string) string { return strings.ReplaceAll(sql, "@.", s.ident) }

// LockKey names an advisory lock of the mirror in schema; SQL hashes it
// with hashtextextended into a bigint key.
func LockKey(schema, purpose string) string { return "pgmirror:" + schema + ":" + purpose }

// An Error is a failure of the database: of a statement, or of reaching
// PostgreSQL at all (Away). Every error of the Store that comes from the
// database is one; errors.As finds it through any wrapping, an SDK call's
// included (a request budget's statement fails inside a call).
type Error struct {
	// Op says what the Store was doing, as in "claiming records to fetch".
	Op  string
	Err error
}

func (e *Error) Error() string { return "pgmirror: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the database's error.
func (e *Error) Unwrap() error { return e.Err }

// Away reports whether the failure means that PostgreSQL could not be
// reached or is going away (see Unreachable), rather than a failure of the
// statement itself.
func (e *Error) Away() bool { return Unreachable(e.Err) }

// Conflict reports whether PostgreSQL aborted the transaction for a
// deadlock or a serialization failure, which running it again mends.
func (e *Error) Conflict() bool { return conflict(e.Err) }

// conflict reports whether err is PostgreSQL's deadlock or serialization
// failure.
func conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// Unreachable reports whether err means that PostgreSQL could not be
// reached or is going away (a refused or broken connection, a server
// shutting down or starting up, too many connections, no answer in time),
// rather than a failure of the statement itself.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || // shutting down, starting up
			pgErr.Code == "53300" // too many connections
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err)
}

// fail makes err an *Error of op, unless it is nil or one already.
func fail(op string, err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, Err: err}
}

// querier is a pool, a connection or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// exec runs a statement and returns the rows it affected.
func exec(ctx context.Context, q querier, op, sql string, args ...any) (int64, error) {
	tag, err := q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), fail(op, err)
}

// scan runs a query of one row into dest.
func scan(ctx context.Context, q querier, op, sql string, args []any, dest ...any) error {
	return fail(op, q.QueryRow(ctx, sql, args...).Scan(dest...))
}

// collect runs a query and returns each row as row makes it.
func collect[T any](ctx context.Context, q querier, op, sql string, args []any, row func(pgx.CollectableRow) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fail(op, err)
	}
	out, err := pgx.CollectRows(rows, row)
	return out, fail(op, err)
}

// A Tx is a transaction of the Store: the statements that commit together.
type Tx struct {
	s       *Store
	tx      querier // a *pipe, or a pgx.Tx begun elsewhere (Store.Tx)
	fed     bool    // WriteChanges wrote the feed's changes
	ordered bool    // Order took the locks of its writes
}

// InTx runs fn in a transaction, committed when fn returns nil. An error
// of fn is returned as it is (beginning the transaction fails the first
// statement fn sends); committing fails with an *Error of op, or of the
// statement queued (Tx.queue) that failed. The transaction's statements go
// through a pipe, which sends its BEGIN, and the statements whose results
// nothing reads, with its other statements. Once a transaction that wrote
// the change feed has committed, the feed's followers are notified (see
// notifier).
func (s *Store) InTx(ctx context.Context, op string, fn func(*Tx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fail(op, err)
	}
	p := &pipe{conn: conn}
	committed := false
	defer func() {
		if !committed {
			p.rollback(ctx)
		}
		conn.Release()
	}()
	t := &Tx{s: s, tx: p}
	if err := fn(t); err != nil {
		return err
	}
	if err := p.commit(ctx); err != nil {
		return fail(op, err)
	}
	committed = true
	if t.fed {
		s.notify.send(s)
	}
	return nil
}

// queue has the statement sql (of op), whose result nothing reads, sent
// with the transaction's next statement, or with its COMMIT, saving it a
// round trip (see pipe): its failure fails that statement, or the commit.
// In a transaction begun elsewhere it is sent at once.
func (tx *Tx) queue(ctx context.Context, op, sql string, args ...any) error {
	if p, ok := tx.tx.(*pipe); ok {
		p.pending = append(p.pending, queued{op, sql, args})
		return nil
	}
	_, err := exec(ctx, tx.tx, op, sql, args...)
	return err
}

// Tx returns the Store's Tx of a transaction begun elsewhere (a pginbox
// Worker's): the caller ends it.
func (s *Store) Tx(tx pgx.Tx) *Tx { return &Tx{s: s, tx: tx} }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return fail("reaching the database", s.pool.Ping(ctx))
}
