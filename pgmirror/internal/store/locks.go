package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The advisory locks are session-level locks held on a connection of
// their own for as long as the work they guard lasts: when the process or
// its connection dies, PostgreSQL releases them, and another replica takes
// the work over. Their keys are per schema (LockKey).

const (
	tryLockSQL = `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`
	lockSQL    = `SELECT true FROM pg_advisory_lock(hashtextextended($1, 0))`
	unlockSQL  = `SELECT pg_advisory_unlock(hashtextextended($1, 0))`
)

// releaseTimeout bounds giving a lock or a listening connection back.
const releaseTimeout = 30 * time.Second

// A Lock is an advisory lock the Store holds.
type Lock struct {
	conn *pgxpool.Conn
	key  string
}

// TryLock takes the advisory lock for purpose if no other session holds
// it; ok is false (and the Lock nil) when another does.
func (s *Store) TryLock(ctx context.Context, purpose string) (l *Lock, ok bool, err error) {
	return s.lock(ctx, purpose, tryLockSQL)
}

// Lock waits for the advisory lock for purpose, until ctx ends.
func (s *Store) Lock(ctx context.Context, purpose string) (*Lock, error) {
	l, _, err := s.lock(ctx, purpose, lockSQL)
	return l, err
}

func (s *Store) lock(ctx context.Context, purpose, sql string) (*Lock, bool, error) {
	op := "locking " + purpose
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fail(op, err)
	}
	key := LockKey(s.schema, purpose)
	var ok bool
	if err := conn.QueryRow(ctx, sql, key).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, false, fail(op, err)
	}
	return &Lock{conn: conn, key: key}, true, nil
}

// Release releases the lock and gives its connection back; a connection
// that could not release it is closed instead, which releases it too.
func (l *Lock) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := l.conn.Exec(ctx, unlockSQL, l.key); err != nil {
		_ = l.conn.Hijack().Close(ctx)
		return
	}
	l.conn.Release()
}

// A Listener is a connection of the Store that LISTENs on a channel.
type Listener struct {
	s    *Store
	conn *pgxpool.Conn
}

// Listen holds a connection of the pool that listens on channel until
// Close.
func (s *Store) Listen(ctx context.Context, channel string) (*Listener, error) {
	op := "listening on " + channel
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fail(op, err)
	}
	l := &Listener{s: s, conn: conn}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		l.Close()
		return nil, fail(op, err)
	}
	return l, nil
}

// Wait waits for a notification on the channel, or for ctx to end (then
// it returns ctx's error).
func (l *Listener) Wait(ctx context.Context) error {
	_, err := l.conn.Conn().WaitForNotification(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fail("waiting for a notification", err)
}

// Close stops listening and gives the connection back, or closes it when
// it cannot stop listening.
func (l *Listener) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "UNLISTEN *"); err != nil {
		_ = l.conn.Hijack().Close(ctx)
		return
	}
	l.conn.Release()
}
