package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_changes: the change feed. Every write that changes a record's row
// writes one change in its own transaction.

// insertChangesSQL writes changes of the records of a table, given as
// arrays ($3 ids, $4 ops, $5 the JSON texts before an update, NULL
// otherwise; $1 the resource, $2 the cause, $6 the business), in their
// order, each numbered after the transaction's ordinal $7 (see
// WriteChanges).
// What a change holds is read from the row as the transaction leaves it:
// the whole record for an insert or a delete (a deletion mark leaves the
// content as it was), and for an update the members that differ from the
// JSON before it ({} on the side without any: members only added, or only
// removed). A record changes at most once in a transaction.
const insertChangesSQL = `INSERT INTO @.mirror_changes (seq, business, resource, id, cause, op, old_values, new_values)
	SELECT (pg_current_xact_id()::text::bigint << ` + seqShift + `) + $7 + u.n, $6, $1, u.id, $2, u.op,
		CASE u.op WHEN 'update' THEN coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(u.old) AS e
		                                        WHERE t.raw -> e.key IS DISTINCT FROM e.value), '{}')
		          WHEN 'delete' THEN t.raw END,
		CASE u.op WHEN 'update' THEN coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(t.raw) AS e
		                                        WHERE u.old -> e.key IS DISTINCT FROM e.value), '{}')
		          WHEN 'insert' THEN t.raw END
	FROM (SELECT id, op, old::jsonb AS old, n
	      FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(id, op, old, n)) AS u
	JOIN @.%s AS t ON t.business = $6 AND t.id = u.id
	ORDER BY u.n`

// seqShift is how far left a change's transaction id is shifted in its
// seq: the low bits number the changes of one transaction, up to
// maxChangesPerTx.
const (
	seqShift        = "20"
	maxChangesPerTx = 1<<20 - 1
)

const (
	// prunedSQL reads the last seq retention deleted, and whether changes
	// committed wait above the horizon (held back by a transaction still
	// running: a reader looks again soon rather than wait for a NOTIFY).
	prunedSQL = `SELECT coalesce(max(changes_pruned_through), 0),
	coalesce((SELECT max(seq) FROM @.mirror_changes), 0) >= (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ` + seqShift + `)
FROM @.mirror_reconcile`
	// readChangesSQL reads the changes after seq $1 below the horizon: the
	// changes of the transactions older than the oldest one running, to
	// which no transaction can add one any more (see WriteChanges).
	// An update written before its sides were never NULL reads {}.
	readChangesSQL = `SELECT seq, at, business, resource, id, cause, op,
	CASE op WHEN 'update' THEN coalesce(old_values, '{}') ELSE old_values END,
	CASE op WHEN 'update' THEN coalesce(new_values, '{}') ELSE new_values END
FROM @.mirror_changes
WHERE seq > $1 AND seq < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ` + seqShift + `)
ORDER BY seq LIMIT $2`
	// prunedThroughSQL records, as the last seq retention deleted, the last
	// seq of the changes older than $1 (when it is later): a prefix of the
	// feed, deleted next. Readers asking for changes before it are told at
	// once, while its rows are deleted.
	prunedThroughSQL = `WITH last AS (
	SELECT max(seq) AS seq FROM @.mirror_changes WHERE at < now() - $1::interval
)
UPDATE @.mirror_reconcile SET changes_pruned_through = (SELECT seq FROM last)
WHERE (SELECT seq FROM last) > changes_pruned_through`
)

// The deletions of retention, deleteBatch rows a statement. Two replicas'
// passes at once wait on each other's rows, and the later one ends as it
// finds them gone (the other goes on).
var (
	// pruneChangesSQL deletes the next batch of the changes after seq $1
	// through the last seq retention deleted, a range of seqs (the
	// deleteBatch-th seq after $1 bounds it), and returns how many it
	// deleted and the last seq it deleted ($1 when none): the next batch
	// starts there, never reading again the dead rows of the batches before.
	pruneChangesSQL = `WITH through AS (
	SELECT coalesce(max(changes_pruned_through), 0) AS seq FROM @.mirror_reconcile
), bound AS (
	SELECT least((SELECT seq FROM through),
		coalesce((SELECT seq FROM @.mirror_changes WHERE seq > $1 ORDER BY seq OFFSET ` + batchLimit + ` - 1 LIMIT 1), (SELECT seq FROM through))) AS seq
), deleted AS (
	DELETE FROM @.mirror_changes WHERE seq > $1 AND seq <= (SELECT seq FROM bound) RETURNING seq
)
SELECT count(*), coalesce(max(seq), $1) FROM deleted`
	// pruneInboxSQL deletes a batch of the deliveries of status $1
	// processed before $2 ago.
	pruneInboxSQL = `DELETE FROM @.` + pginbox.TableName + ` WHERE (business, delivery_id) IN (
	SELECT business, delivery_id FROM @.` + pginbox.TableName + ` WHERE status = $1 AND processed_at < now() - $2::interval
	LIMIT ` + batchLimit + `)`
)

// Changes are the changes a transaction made to the records of one table.
type Changes struct {
	Table    string // the records' table
	Resource string
	IDs, Ops []string
	Olds     []*string // the JSON before an update; nil for the other ops
}

// orderSQL takes, in their order, the advisory locks $1 (their
// LockKeys), each shared when $2 says so, held until the transaction
// ends, and then gives the transaction its id.
const orderSQL = `SELECT pg_current_xact_id()::text FROM (
	SELECT count(CASE WHEN k.shared THEN pg_advisory_xact_lock_shared(hashtextextended(k.key, 0))
	                  ELSE pg_advisory_xact_lock(hashtextextended(k.key, 0)) END)
	FROM (SELECT * FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS k(key, shared, n) ORDER BY n) AS k) AS locked`

// The locks of the writes of records (Tx.Order): one per resource of a
// business, and recordBuckets per resource, each standing for the records
// whose id hashes to it. A transaction that writes the records of more
// than maxBuckets buckets takes the resource's lock alone.
const (
	recordBuckets = 4096
	maxBuckets    = 8
)

// WriteLocks returns the LockKeys of the advisory locks a transaction
// that writes the records ids of resource of business takes, in the order
// it takes them, and whether it takes each shared (see Tx.Order).
func WriteLocks(schema, business, resource string, ids []string) (keys []string, shared []bool) {
	key := resourceLock(schema, business, resource)
	var buckets []uint32
	for _, id := range ids {
		h := fnv.New32a()
		h.Write([]byte(id))
		buckets = append(buckets, h.Sum32()%recordBuckets)
	}
	slices.Sort(buckets)
	buckets = slices.Compact(buckets)
	if len(buckets) > maxBuckets {
		return []string{key}, []bool{false}
	}
	keys, shared = []string{key}, []bool{true}
	for _, b := range buckets {
		keys, shared = append(keys, key+"/"+strconv.FormatUint(uint64(b), 10)), append(shared, false)
	}
	return keys, shared
}

// resourceLock is the LockKey of the writes of resource of business.
func resourceLock(schema, business, resource string) string {
	return LockKey(schema, "writes of "+business+"/"+resource)
}

// SelectionLock is the LockKey of the Selection of business in schema:
// LockSelection takes it exclusive, Tx.SelectionApplied shared.
func SelectionLock(schema, business string) string { return LockKey(schema, "selection of "+business) }

// Order makes the transaction the next writer of the records ids of
// resource of business: it waits for the transactions writing any of them
// to end, and only then takes its transaction id, which orders its
// changes in the feed (see WriteChanges). A transaction that writes
// records calls it (or OrderToWrite) once, before anything else, naming
// every record it writes, so that for each record the order of its changes' seqs is the
// order in which they were made: without it, a transaction that took its
// id first (writing another record) and wrote a record after a later one
// did would have its change read first. It returns when the business's
// Selection was applied (mirror_selections.applied_at; zero when none is
// recorded), read once the locks are held: LockSelection takes them all,
// so a Selection applied meanwhile is the one read.
//
// The locks are advisory, transaction-scoped, and taken in one order by
// every transaction: the resource's (shared), then one per bucket of
// records (exclusive), or for a transaction of more than maxBuckets
// buckets (a walk's page) the resource's alone, exclusive. Transactions
// writing other records, other resources or other businesses do not wait
// on each other.
func (tx *Tx) Order(ctx context.Context, business, resource string, ids []string) (selected time.Time, err error) {
	keys, shared := WriteLocks(tx.s.schema, business, resource, ids)
	return tx.lock(ctx, "waiting for the writers of "+resource+" of "+business, business, keys, shared, nil)
}

// lock takes the advisory locks keys (each shared when shared says so),
// then the transaction's id, and returns when business's Selection was
// applied (see begin); then, if not nil, is sent after them in the same
// round trip, and its rows read.
func (tx *Tx) lock(ctx context.Context, op, business string, keys []string, shared []bool, then *comparison) (time.Time, error) {
	var xid string
	return tx.begin(ctx, op, business, orderSQL, []any{keys, shared}, &xid, then)
}

// begin sends the transaction's first statements, once per transaction,
// in one round trip: lockSQL with args (its one row scanned into dest),
// the read of when business's Selection was applied (a statement of its
// own: a statement's snapshot is taken before it waits for a lock), and
// then, if not nil (its rows read). It returns the instant read, zero
// when no Selection is recorded.
func (tx *Tx) begin(ctx context.Context, op, business, lockSQL string, args []any, dest any, then *comparison) (time.Time, error) {
	if tx.ordered {
		return time.Time{}, &Error{Op: op, Err: errors.New("a second time in one transaction")}
	}
	tx.ordered = true
	b := &pgx.Batch{}
	b.Queue(lockSQL, args...)
	b.Queue(tx.s.q(selectionAppliedSQL), business)
	if then != nil {
		b.Queue(then.sql, then.args...)
	}
	res := tx.tx.SendBatch(ctx, b)
	var at time.Time
	err := res.QueryRow().Scan(dest)
	if err == nil {
		if err = res.QueryRow().Scan(&at); errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
	}
	if err == nil && then != nil {
		var rows pgx.Rows
		if rows, err = res.Query(); err == nil {
			then.decided, err = then.read(rows)
		}
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return at, fail(op, err)
}

// requireOrdered returns an error of op unless the transaction began with
// Order (or OrderToWrite): a write before would not be ordered in the
// feed.
func (tx *Tx) requireOrdered(op string) error {
	if !tx.ordered {
		return &Error{Op: op, Err: errors.New("in a transaction that did not begin with Order")}
	}
	return nil
}

// WriteChanges writes the changes of cause to records of business to the
// feed, in tx, once per transaction, which began with Order. It takes no
// lock of its own: a change's seq is its transaction's id
// (pg_current_xact_id, taken by Order) shifted left by seqShift bits, plus
// its ordinal in the transaction, so that the seqs of a transaction are
// together, in the order of changes, and above those of every older
// transaction. Readers read below the horizon (readChangesSQL): the
// changes of the transactions older than the oldest one running, which are
// all committed or rolled back, and to which none can be added; a reader
// that saw seq N never sees a lower one appear later, and resuming after N
// misses nothing, whatever the number of writers. A long transaction that
// writes, anywhere in the database, holds the horizon back (not the
// writers) until it ends. The changes are queued (Tx.queue): they go with
// the transaction's COMMIT, or its next statement. Once the transaction
// commits through Store.InTx, the channel named as the schema is notified
// (see notifier); a Tx of a transaction begun elsewhere notifies nobody.
func (tx *Tx) WriteChanges(ctx context.Context, cause, business string, changes []Changes) error {
	if tx.fed {
		return &Error{Op: "writing the change feed", Err: errors.New("a second time in one transaction")}
	}
	if err := tx.requireOrdered("writing the change feed"); err != nil {
		return err
	}
	const op = "writing the change feed"
	n := 0
	for _, c := range changes {
		n += len(c.IDs)
	}
	if n > maxChangesPerTx {
		return &Error{Op: op, Err: fmt.Errorf("%d changes in one transaction, more than %d", n, maxChangesPerTx)}
	}
	tx.fed = true
	n = 0
	for _, c := range changes {
		if err := tx.queue(ctx, op, tx.s.q(fmt.Sprintf(insertChangesSQL, c.Table)), c.Resource, cause, c.IDs, c.Ops, c.Olds, business, n); err != nil {
			return err
		}
		n += len(c.IDs)
	}
	return nil
}

// notifier tells the feed's followers (LISTEN on the channel named as the
// schema) that changes were committed: after the commit, in a statement of
// its own, from a goroutine of its own, one at a time per Store. A NOTIFY
// inside the writing transaction would serialise every writer of the
// database at commit (PostgreSQL takes one lock, held through the
// commit's WAL flush, for the notifying transactions' queue entries): the
// write limit of the whole fleet would be one commit per flush. A commit
// that finds a notification under way asks for another, sent once that one
// is done: every commit is followed by a NOTIFY sent after it, and a Store
// sends at most one at a time, whatever its writers, who never wait for
// it. A notification lost (the process dies between the commit and the
// NOTIFY, or the NOTIFY fails) delays a follower until the next one, or
// until it looks again by itself (see pgmirror.FollowChanges).
type notifier struct {
	mu             sync.Mutex
	sending, again bool
	wg             sync.WaitGroup
}

// send has the channel of s notified, unless a notification is under way:
// then it asks for another after it.
func (n *notifier) send(s *Store) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sending {
		n.again = true
		return
	}
	n.sending = true
	n.wg.Go(func() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			// A failure is the database's, which the next statement meets
			// too; the followers look again by themselves.
			_, _ = s.pool.Exec(ctx, notifyChangesSQL, s.schema)
			cancel()
			n.mu.Lock()
			if !n.again {
				n.sending = false
				n.mu.Unlock()
				return
			}
			n.again = false
			n.mu.Unlock()
		}
	})
}

// WaitNotified waits until the notifications under way are sent: before
// its pool is closed.
func (s *Store) WaitNotified() { s.notify.wg.Wait() }

const notifyChangesSQL = `SELECT pg_notify($1, '')`

// notifyTimeout bounds a notification, so that a database that hangs does
// not hold the notifier, and Store.WaitNotified, for long.
const notifyTimeout = 5 * time.Second

// A Change is a row of the change feed.
type Change struct {
	Seq                    int64
	At                     time.Time
	Business, Resource, ID string
	Cause, Op              string
	Old, New               []byte
}

// A Page is what one read of the feed found.
type Page struct {
	Changes []Change
	// Pruned is the last seq retention deleted.
	Pruned int64
	// Held is true when committed changes wait above the horizon, held
	// back by a transaction still running.
	Held bool
}

// ReadChanges reads up to limit changes after seq after, in seq order
// (see Page).
func (s *Store) ReadChanges(ctx context.Context, after int64, limit int) (Page, error) {
	return readChanges(ctx, s, s.pool, after, limit)
}

// ReadChanges is Store.ReadChanges through the listening connection.
func (l *Listener) ReadChanges(ctx context.Context, after int64, limit int) (Page, error) {
	return readChanges(ctx, l.s, l.conn, after, limit)
}

func readChanges(ctx context.Context, s *Store, q querier, after int64, limit int) (Page, error) {
	const op = "reading changes"
	var p Page
	if err := scan(ctx, q, op, s.q(prunedSQL), nil, &p.Pruned, &p.Held); err != nil || after < p.Pruned {
		return p, err
	}
	var err error
	p.Changes, err = collect(ctx, q, op, s.q(readChangesSQL), []any{after, limit}, func(r pgx.CollectableRow) (Change, error) {
		var c Change
		return c, r.Scan(&c.Seq, &c.At, &c.Business, &c.Resource, &c.ID, &c.Cause, &c.Op, &c.Old, &c.New)
	})
	return p, err
}

// PruneChanges deletes the changes older than retention (every change
// through the last one older: a prefix of the feed), first recording the
// last seq it deletes for the readers, then deleteBatch changes a
// statement, each its own short transaction (a long one would hold the
// feed's readers back), and returns how many it deleted.
func (s *Store) PruneChanges(ctx context.Context, retention time.Duration) (int64, error) {
	const op = "deleting old changes"
	if _, err := exec(ctx, s.pool, op, s.q(prunedThroughSQL), retention); err != nil {
		return 0, err
	}
	var total, last int64
	for {
		var n int64
		if err := scan(ctx, s.pool, op, s.q(pruneChangesSQL), []any{last}, &n, &last); err != nil || n == 0 {
			return total, err
		}
		total += n
	}
}

// PruneInbox deletes the deliveries processed more than retention ago,
// deleteBatch a statement, and returns how many.
func (s *Store) PruneInbox(ctx context.Context, retention time.Duration) (int64, error) {
	return deleteCount(ctx, s, "deleting old deliveries", s.q(pruneInboxSQL), pginbox.StatusProcessed, retention)
}
