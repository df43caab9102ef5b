package store

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
)

// A transaction of InTx sends its BEGIN and the statements it queued with
// its next statement, and its COMMIT with the last ones; what it does is
// what a transaction of one statement a round trip does: it commits all or
// nothing, in order, and a failure is told by the statement that carried
// it, with the queued statement's Op.
func TestATransactionsStatementsTravelTogether(t *testing.T) {
	pg, err := testservers.StartPostgres()
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// One connection, whose writes are counted: a round trip is one.
	cfg, err := pgxpool.ParseConfig(pg.URL)
	require.NoError(t, err)
	cfg.MaxConns = 1
	var writes atomic.Int64
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{c, &writes}, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(ctx, `CREATE TABLE p (n int PRIMARY KEY CHECK (n < 100))`)
	require.NoError(t, err)
	s := New(pool, "public")
	rows := func() []int {
		ns, err := collect(ctx, pool, "reading", `SELECT n FROM p ORDER BY n`, nil, pgx.RowTo[int])
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `TRUNCATE p`)
		require.NoError(t, err)
		return ns
	}
	// roundTrips runs fn in a transaction twice (the first prepares its
	// statements) and returns how many round trips the second made, and
	// its error.
	roundTrips := func(fn func(tx *Tx) error) (int64, error) {
		_ = s.InTx(ctx, "testing", fn)
		rows()
		before := writes.Load()
		err := s.InTx(ctx, "testing", fn)
		return writes.Load() - before, err
	}
	const insert = `INSERT INTO p VALUES ($1)`

	t.Run("queued statements commit with the COMMIT, in order", func(t *testing.T) {
		require.NoError(t, s.InTx(ctx, "testing", func(tx *Tx) error {
			require.NoError(t, tx.queue(ctx, "one", insert, 1))
			require.NoError(t, tx.queue(ctx, "two", `UPDATE p SET n = n + 1`)) // after the insert: 2
			return tx.queue(ctx, "three", insert, 3)
		}))
		assert.Equal(t, []int{2, 3}, rows())
	})

	t.Run("a statement goes after those queued before it, with BEGIN", func(t *testing.T) {
		trips, err := roundTrips(func(tx *Tx) error {
			require.NoError(t, tx.queue(ctx, "one", insert, 1))
			var n int
			b := &pgx.Batch{}
			b.Queue(`SELECT count(*) FROM p`).QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
			require.NoError(t, tx.tx.SendBatch(ctx, b).Close())
			assert.Equal(t, 1, n, "the batch sees the insert queued before it")
			_, err := tx.tx.Exec(ctx, insert, 2)
			return err
		})
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2}, rows())
		assert.EqualValues(t, 3, trips, "BEGIN, the insert and the batch in one round trip, the second insert in another, COMMIT in a third")
	})

	t.Run("a queued statement that fails fails the commit, and nothing commits", func(t *testing.T) {
		err := s.InTx(ctx, "testing", func(tx *Tx) error {
			_, err := tx.tx.Exec(ctx, insert, 1)
			require.NoError(t, err)
			require.NoError(t, tx.queue(ctx, "inserting 100", insert, 100))
			return tx.queue(ctx, "inserting 2", insert, 2)
		})
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "inserting 100", e.Op)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		assert.Equal(t, "23514", pgErr.Code, "the check constraint")
		assert.Empty(t, rows())
		assertIdle(t, ctx, pool)
	})

	t.Run("a queued statement that fails fails the statement it goes with", func(t *testing.T) {
		var queryErr error
		err := s.InTx(ctx, "testing", func(tx *Tx) error {
			require.NoError(t, tx.queue(ctx, "inserting 100", insert, 100))
			var n int
			queryErr = tx.tx.QueryRow(ctx, `SELECT count(*) FROM p`).Scan(&n)
			return queryErr
		})
		var e *Error
		require.ErrorAs(t, queryErr, &e)
		assert.Equal(t, "inserting 100", e.Op)
		assert.Equal(t, queryErr, err, "fn's error, as it is")
		assert.Empty(t, rows())
		assertIdle(t, ctx, pool)
	})

	t.Run("an error of fn rolls back what it sent and what it queued", func(t *testing.T) {
		mine := errors.New("mine")
		err := s.InTx(ctx, "testing", func(tx *Tx) error {
			_, err := tx.tx.Exec(ctx, insert, 1)
			require.NoError(t, err)
			require.NoError(t, tx.queue(ctx, "two", insert, 2))
			return mine
		})
		assert.Same(t, mine, err)
		assert.Empty(t, rows())
		assertIdle(t, ctx, pool)
	})

	t.Run("a transaction that failed and went on is not committed", func(t *testing.T) {
		err := s.InTx(ctx, "testing", func(tx *Tx) error {
			_, err := tx.tx.Exec(ctx, insert, 1)
			require.NoError(t, err)
			_, err = tx.tx.Exec(ctx, insert, 100)
			require.Error(t, err, "ignored by fn")
			return nil
		})
		assert.ErrorIs(t, err, pgx.ErrTxCommitRollback)
		assert.Empty(t, rows())
		assertIdle(t, ctx, pool)
	})

	t.Run("a transaction that sends nothing sends nothing", func(t *testing.T) {
		trips, err := roundTrips(func(tx *Tx) error { return nil })
		require.NoError(t, err)
		assert.Zero(t, trips)
	})

	t.Run("queued statements go with the COMMIT", func(t *testing.T) {
		trips, err := roundTrips(func(tx *Tx) error {
			_, err := tx.tx.Exec(ctx, insert, 1)
			require.NoError(t, err)
			require.NoError(t, tx.queue(ctx, "two", insert, 2))
			return tx.queue(ctx, "three", insert, 3)
		})
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, rows())
		assert.EqualValues(t, 2, trips, "BEGIN with the first insert, the others with COMMIT")
	})

	t.Run("a panic rolls back", func(t *testing.T) {
		assert.Panics(t, func() {
			_ = s.InTx(ctx, "testing", func(tx *Tx) error {
				_, err := tx.tx.Exec(ctx, insert, 1)
				require.NoError(t, err)
				panic("boom")
			})
		})
		assert.Empty(t, rows())
		assertIdle(t, ctx, pool)
	})
}

// countingConn counts its writes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// assertIdle asserts that every connection of pool is out of any
// transaction: none was given back in one.
func assertIdle(t *testing.T, ctx context.Context, pool *pgxpool.Pool) {
	t.Helper()
	for _, c := range pool.AcquireAllIdle(ctx) {
		assert.Equal(t, byte('I'), c.Conn().PgConn().TxStatus())
		c.Release()
	}
}
