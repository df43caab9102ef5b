package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A pipe is the connection of a transaction of InTx. Its BEGIN, and the
// statements whose results nothing reads (Tx.queue), wait to go with the
// transaction's next statement, in one round trip, and its COMMIT goes
// with the last of them: the write of an invoice an event named, which
// locks and compares in a batch, updates, then writes the lines, the
// change feed and the settling of its fetch without reading, makes three
// round trips where it made nine. The statements keep their order. When
// one fails, PostgreSQL skips the rest of the round trip, and the
// statement it went with fails with its error.
type pipe struct {
	conn    *pgxpool.Conn
	begun   bool     // BEGIN was sent
	pending []queued // to send before the next statement
}

// queued is a statement of the transaction whose result nothing reads.
type queued struct {
	op, sql string
	args    []any
}

// take returns the statements to send before the next one: BEGIN, the
// first time, and those queued.
func (p *pipe) take() []queued {
	pre := p.pending
	p.pending = nil
	if !p.begun {
		p.begun = true
		pre = append([]queued{{op: "beginning a transaction", sql: "begin"}}, pre...)
	}
	return pre
}

// SendBatch sends the statements waiting, then b's, in one round trip,
// and returns b's results.
func (p *pipe) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	pre := p.take()
	if len(pre) == 0 {
		return p.conn.SendBatch(ctx, b)
	}
	all := &pgx.Batch{}
	for _, q := range pre {
		all.Queue(q.sql, q.args...)
	}
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	br := p.conn.SendBatch(ctx, all)
	for _, q := range pre {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return failedBatch{fail(q.op, err)}
		}
	}
	return br
}

// Exec sends the statements waiting and sql in one round trip. With
// statements waiting (the transaction's first statement among them), they
// go as a batch, which takes one statement a query: sql with several (a
// migration's) must come after the first.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.begun && len(p.pending) == 0 {
		return p.conn.Exec(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := p.SendBatch(ctx, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query sends the statements waiting, then sql.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.conn.Query(ctx, sql, args...)
}

// QueryRow sends the statements waiting, then sql.
func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := p.flush(ctx); err != nil {
		return failedRow{err}
	}
	return p.conn.QueryRow(ctx, sql, args...)
}

// flush sends the statements waiting.
func (p *pipe) flush(ctx context.Context) error {
	if p.begun && len(p.pending) == 0 {
		return nil
	}
	return p.SendBatch(ctx, &pgx.Batch{}).Close()
}

// commit sends the statements waiting and COMMIT in one round trip; a
// transaction that sent nothing sends nothing. A COMMIT that PostgreSQL
// answers with ROLLBACK (the transaction had failed) is
// pgx.ErrTxCommitRollback.
func (p *pipe) commit(ctx context.Context) error {
	if !p.begun && len(p.pending) == 0 {
		return nil
	}
	var tag pgconn.CommandTag
	b := &pgx.Batch{}
	b.Queue("commit").Exec(func(t pgconn.CommandTag) error {
		tag = t
		return nil
	})
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// rollback ends a transaction that began and did not commit. When it
// cannot, the pool closes the connection on its release, which is still
// in a transaction.
func (p *pipe) rollback(ctx context.Context) {
	if p.begun {
		_, _ = p.conn.Exec(ctx, "rollback")
	}
}

// failedBatch is the results of a batch a statement sent before it failed.
type failedBatch struct{ err error }

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return failedRow(f) }
func (f failedBatch) Close() error                     { return f.err }

// failedRow is the row of a statement not sent, for the failure of one
// sent before it.
type failedRow struct{ err error }

func (f failedRow) Scan(...any) error { return f.err }
