package pgmirror

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The advisory locks below are session-level locks held on a connection of
// their own for as long as the work they guard lasts: when the process or
// its connection dies, PostgreSQL releases them, and another replica takes
// the work over. Their keys are per schema (see lockKey).

// tryLock takes the advisory lock for purpose if no other session holds
// it. ok is false when another does; unlock releases it.
func (m *Mirror) tryLock(ctx context.Context, purpose string) (unlock func(), ok bool, err error) {
	return m.takeLock(ctx, purpose, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`)
}

// lock waits for the advisory lock for purpose, until ctx ends.
func (m *Mirror) lock(ctx context.Context, purpose string) (unlock func(), err error) {
	unlock, _, err = m.takeLock(ctx, purpose, `SELECT true FROM pg_advisory_lock(hashtextextended($1, 0))`)
	return unlock, err
}

func (m *Mirror) takeLock(ctx context.Context, purpose, sql string) (unlock func(), ok bool, err error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("pgmirror: locking %s: %w", purpose, err)
	}
	if err := conn.QueryRow(ctx, sql, m.lockKey(purpose)).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("pgmirror: locking %s: %w", purpose, err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return func() { m.unlock(conn, purpose) }, true, nil
}

// unlock releases the lock and gives the connection back; a connection
// that could not release it is closed instead, which releases it too.
func (m *Mirror) unlock(conn *pgxpool.Conn, purpose string) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, m.lockKey(purpose)); err != nil {
		_ = conn.Hijack().Close(ctx)
		return
	}
	conn.Release()
}
