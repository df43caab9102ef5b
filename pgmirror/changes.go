package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// The change feed: every change of a record's content the mirror writes
// (a record inserted, updated, marked deleted or listed again) is one row
// of mirror_changes, written in the transaction of the change. Mirror.Changes
// and Mirror.FollowChanges read it.

// Causes of a change: what found it.
const (
	// CauseEvent is a fetch an event asked for.
	CauseEvent = "event"
	// CauseBackfill is the backfill's walk.
	CauseBackfill = "backfill"
	// CauseReconciliation is a reconciliation (its walk, or its deletion
	// marks).
	CauseReconciliation = "reconciliation"
)

// Operations of a change.
const (
	// OpInsert is a record the mirror did not hold, or held marked
	// deleted: New is the whole record, Old is nil.
	OpInsert = "insert"
	// OpUpdate is a change of a record's content: Old and New hold the
	// members of its JSON that changed, as they were and as they are (a
	// member added is only in New, one removed only in Old; each is an
	// object, {} when it has none).
	OpUpdate = "update"
	// OpDelete is a deletion mark (the service no longer lists the record):
	// Old is the whole record as last seen, New is nil.
	OpDelete = "delete"
)

// A Change is one change of a mirrored record, as the change feed holds it.
type Change struct {
	// Seq orders the changes: the changes of one transaction together, in
	// the order of the transactions' ids (their first writes), a reader
	// never seeing a lower Seq appear after a higher one. Give the last Seq
	// seen to Changes to go on after it.
	Seq int64 `json:"seq"`
	// At is when the transaction writing the change began.
	At time.Time `json:"at"`
	// Business is the name of the business the record belongs to (see
	// Config.Business and Businesses).
	Business string `json:"business"`
	// Resource is the resource's name (Invoices, Quotes, ...), ID the
	// record's id.
	Resource string `json:"resource"`
	ID       string `json:"id"`
	// Cause is what found the change: CauseEvent, CauseBackfill or
	// CauseReconciliation.
	Cause string `json:"cause"`
	// Op is OpInsert, OpUpdate or OpDelete; it says what Old and New hold.
	Op string `json:"op"`
	// Old and New are JSON objects of the record's members (as the service
	// sent them), nil where Op says there are none.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// ErrChangesPruned is the error Changes and FollowChanges yield when some
// of the changes after the position asked for were deleted by retention
// (Config.ChangeRetention): the reader would miss them. Its message says
// the last seq deleted; go on from there only if missing them is fine.
var ErrChangesPruned = errors.New("pgmirror: changes after this position were deleted by retention")

// changesPage is how many changes one query of a reader reads.
const changesPage = 1000

// Changes returns the changes after the seq after (0: from the first), in
// seq order, and ends with the last one readable: the changes of a
// transaction still running, and those above them, come in a later call. It is resumable: give the
// Seq of the last change handled to a later call. It reads in pages, each a
// query of its own on the Mirror's pool; stop ranging to stop reading. The
// iterator yields ErrChangesPruned (and ends) when retention deleted
// changes after after, and ends after yielding an error of the database or
// ctx's.
func (m *Mirror) Changes(ctx context.Context, after int64) iter.Seq2[Change, error] {
	return readFeed(ctx, m.store.ReadChanges, after)
}

// FollowChanges is Changes that does not end at the last change: it waits,
// with LISTEN on the channel named as the schema (the mirror's writers
// NOTIFY it after each transaction that writes changes; it looks again
// every second without one), for the next ones,
// until ctx ends (then it ends without an error) or the database fails (it
// yields the error and ends; call it again from the last Seq seen). It
// holds one connection of the Mirror's pool while it runs.
func (m *Mirror) FollowChanges(ctx context.Context, after int64) iter.Seq2[Change, error] {
	return followFeed(ctx, m.store, after)
}

// Changes is Mirror.Changes for a reader that runs no Mirror: it reads the
// feed of the mirror in schema through db (any pool on the mirror's
// database).
func Changes(ctx context.Context, db *pgxpool.Pool, schema string, after int64) iter.Seq2[Change, error] {
	return readFeed(ctx, store.New(db, schema).ReadChanges, after)
}

// FollowChanges is Mirror.FollowChanges for a reader that runs no Mirror
// (see Changes). It holds one connection of db while it runs.
func FollowChanges(ctx context.Context, db *pgxpool.Pool, schema string, after int64) iter.Seq2[Change, error] {
	return followFeed(ctx, store.New(db, schema), after)
}

// readPage reads up to a page of changes after a seq.
type readPage func(ctx context.Context, after int64, limit int) (store.Page, error)

func readFeed(ctx context.Context, read readPage, after int64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) { readChanges(ctx, read, &after, yield) }
}

func followFeed(ctx context.Context, s *store.Store, after int64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		l, err := s.Listen(ctx, s.Schema())
		if err != nil {
			if ctx.Err() == nil {
				yield(Change{}, fmt.Errorf("pgmirror: following changes: %w", err))
			}
			return
		}
		defer l.Close()
		// The end of ctx ends the iterator without an error.
		quiet := func(c Change, err error) bool { return (err != nil && ctx.Err() != nil) || yield(c, err) }
		held := 0 // reads in a row that found changes held above the horizon
		for {
			more, ok := readChanges(ctx, l.ReadChanges, &after, quiet)
			if !ok || ctx.Err() != nil {
				return
			}
			// Caught up: wait for a NOTIFY, or look again after a second
			// in case one was lost (a writer's process can die between its
			// commit and its NOTIFY, sent after the commit: see
			// store.notifier). Changes held back by a transaction still
			// running are read once it ends, which no NOTIFY tells when it
			// wrote no change: look again soon (10 ms, doubling to a
			// second).
			wait := time.Second
			if !more {
				held = 0
			} else {
				held++
				wait = min(10*time.Millisecond<<min(held-1, 7), time.Second)
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			err := l.Wait(wctx)
			cancel()
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && !errors.Is(err, context.DeadlineExceeded):
				yield(Change{}, fmt.Errorf("pgmirror: following changes: %w", err))
				return
			}
		}
	}
}

// readChanges yields the changes after *after to the last one below the
// horizon, moving *after on, and reports whether committed changes are
// held above the horizon, and whether the caller may go on (the consumer
// wants more and no error was yielded).
func readChanges(ctx context.Context, read readPage, after *int64, yield func(Change, error) bool) (held, ok bool) {
	for {
		page, err := read(ctx, *after, changesPage)
		switch {
		case err != nil:
			yield(Change{}, err)
			return false, false
		case *after < page.Pruned:
			yield(Change{}, fmt.Errorf("%w (asked for those after %d; deleted through %d)", ErrChangesPruned, *after, page.Pruned))
			return false, false
		}
		for _, c := range page.Changes {
			*after = c.Seq
			if !yield(Change{Seq: c.Seq, At: c.At, Business: c.Business, Resource: c.Resource, ID: c.ID, Cause: c.Cause, Op: c.Op,
				Old: c.Old, New: c.New}, nil) {
				return false, false
			}
		}
		if len(page.Changes) < changesPage {
			return page.Held, true
		}
	}
}
