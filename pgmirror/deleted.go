package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// Deletion marks: a row whose record the service no longer lists is kept,
// as last seen, with mirror_deleted_at set; a fetch that shows the record
// again clears it (see apply).

// MassDeletionMinRows is the size from which a table is protected against
// mass deletion: a reconciliation that would mark deleted more than half
// of the rows of a table holding at least this many live rows fails with
// ErrMassDeletion instead, unless Config.AllowMassDeletion is set.
const MassDeletionMinRows = 20

// ErrMassDeletion is the error of a reconciliation that found most of a
// table's records gone from the service at once (see MassDeletionMinRows):
// usually the API key of another business. It marked nothing.
var ErrMassDeletion = errors.New("pgmirror: most of a table's records vanished at once")

// markDeleted marks deleted the rows of res that a complete walk did not
// list: listed holds the walk's ids, and start a fetch number taken before
// it began (rows written by a later
// fetch are left alone: their record existed after the walk began). It
// marks nothing when the walk listed another number of records than the
// service counts once it ended (asked only when a row is unlisted: records
// created or deleted during the walk; the next reconciliation marks them), nor, without AllowMassDeletion, more than
// half of a table of at least MassDeletionMinRows rows (ErrMassDeletion).
// Where the service has a Get for the resource, each row to mark is first
// fetched: only a 404 marks it, and a record found is written. It returns
// the number of rows it marked or wrote.
func (m *tenant) markDeleted(ctx context.Context, res *resource, listed map[string]bool, start int64) (int, error) {
	t := res.table.name
	var live int
	var gone []string
	err := m.pool.QueryRow(ctx, `SELECT count(*), coalesce(array_agg(id ORDER BY id) FILTER (WHERE mirror_fetch_seq < $1), '{}')
		FROM `+t+` WHERE business = $2 AND mirror_deleted_at IS NULL`, start, m.name).Scan(&live, &gone)
	if err != nil {
		return 0, fmt.Errorf("reading the rows of %s: %w", t, err)
	}
	gone = slices.DeleteFunc(gone, func(id string) bool { return listed[id] })
	if len(gone) == 0 {
		return 0, nil
	}
	total, err := res.total(ctx, m.cfg.Client, m.walkOpts()...)
	if err != nil {
		return 0, fromAPI(err)
	}
	if len(listed) != total {
		m.log.InfoContext(ctx, "pgmirror: the walk listed another number of records than the service counts; "+
			"deletion marks wait for the next reconciliation", "resource", res.name, "listed", len(listed), "total", total,
			"unlisted", len(gone))
		return 0, nil
	}
	if m.massDeletion(len(gone), live) {
		return 0, massDeletionError(len(gone), live, res, "nothing was marked deleted")
	}
	written := 0
	if res.get != nil {
		var err error
		if gone, written, err = m.confirmGone(ctx, res, gone); err != nil {
			return written, err
		}
	}
	if len(gone) == 0 {
		return written, nil
	}
	var marked int
	err = m.writeIn(ctx, causeReconciliation, func(tx pgx.Tx) error {
		w := tx.(*writeTx)
		rows, err := tx.Query(ctx, `UPDATE `+t+` AS t
			SET mirror_deleted_at = now(), mirror_changed_at = now(), mirror_fetch_seq = $2
			FROM (SELECT id FROM `+t+` WHERE business = $3 AND id = ANY($1::text[]) ORDER BY id FOR UPDATE) AS locked
			WHERE t.business = $3 AND t.id = locked.id AND t.mirror_deleted_at IS NULL AND t.mirror_fetch_seq < $2
			RETURNING t.id`, gone, start, m.name)
		if err != nil {
			return err
		}
		var id string
		marked = 0
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			w.changed(res, id, opDelete, "")
			marked++
			return nil
		})
		return err
	})
	if err != nil {
		return written, fmt.Errorf("marking %s deleted: %w", t, err)
	}
	if marked > 0 {
		m.log.InfoContext(ctx, "pgmirror: marked deleted", "resource", res.name, "rows", marked)
		m.counters.addDeleted(res.name, marked)
	}
	return written + marked, nil
}

// confirmGone fetches each of the records ids of res: it returns those the
// service answers 404 for, and writes those it shows (a walk can miss a
// record when a deletion moves it to a page the walk had passed). A record
// the service fails to answer for is left for the next reconciliation.
func (m *tenant) confirmGone(ctx context.Context, res *resource, ids []string) (gone []string, written int, err error) {
	for _, id := range ids {
		seq, err := m.nextSeq(ctx)
		if err != nil {
			return gone, written, err
		}
		r, err := res.get(ctx, m.cfg.Client, id, m.walkOpts()...)
		switch {
		case errors.Is(err, invoicing.ErrNotFound):
			gone = append(gone, id)
			continue
		case ctx.Err() != nil:
			return gone, written, ctx.Err()
		case m.dependencyOf(fromAPI(err)) == m.api: // the service is away: the reconciliation waits for it
			return gone, written, fromAPI(err)
		case err != nil:
			m.log.WarnContext(ctx, "pgmirror: could not check whether an unlisted record was deleted; the next reconciliation will",
				"resource", res.name, "id", id, "error", err.Error())
			continue
		}
		var w []string
		err = m.writeIn(ctx, causeReconciliation, func(tx pgx.Tx) error {
			var err error
			w, err = apply(ctx, tx, res, []row{r}, seq)
			return err
		})
		if err != nil {
			return gone, written, err
		}
		written += len(w)
	}
	return gone, written, nil
}

// massDeletion reports whether marking gone of live rows deleted is a mass
// deletion that needs Config.AllowMassDeletion.
func (m *Mirror) massDeletion(gone, live int) bool {
	return !m.cfg.AllowMassDeletion && live >= MassDeletionMinRows && gone > live/2
}

// massDeletionError is ErrMassDeletion with the numbers, and what the
// mirror did not do.
func massDeletionError(gone, live int, res *resource, notDone string) error {
	return fmt.Errorf("%w: the service no longer lists %d of %d %s: a different business behind the API key? "+
		"The mirror stopped: %s. Check the API key; if the records were deleted, run once with AllowMassDeletion "+
		"(invoicing-mirror --allow-mass-deletion)", ErrMassDeletion, gone, live, res.name, notDone)
}

// guardTables runs guardBusiness on every resource: nil when the tables'
// records are still the service's, ErrMassDeletion when most of a table's
// are gone (a different business behind the API key?), another error when
// it could not tell.
func (m *tenant) guardTables(ctx context.Context) error {
	for _, res := range allResources {
		if err := m.guardBusiness(ctx, res); errors.Is(err, ErrMassDeletion) {
			return err
		} else if err != nil {
			return fmt.Errorf("pgmirror: checking that the service still shows the records of %s: %w", res.name, err)
		}
	}
	return nil
}

// massDeletionSample is how many of a table's rows a reconciliation checks
// with a Get before it writes anything to the table (see guardBusiness).
const massDeletionSample = 8

// guardBusiness checks, before a reconciliation writes to the table of
// res, that the service still shows its records, so that the records of
// another business behind the API key are not merged into it: it fetches a
// few rows at random, and when the service answers 404 for most of them,
// it lists the resource's ids (writing nothing) and returns
// ErrMassDeletion when it no longer lists most of the table's rows (see
// markDeleted). A table of fewer than MassDeletionMinRows rows, a resource
// without a Get and Config.AllowMassDeletion skip it.
func (m *tenant) guardBusiness(ctx context.Context, res *resource) error {
	if m.cfg.AllowMassDeletion || res.get == nil {
		return nil
	}
	t := res.table.name
	var live int
	var sample []string
	err := m.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+t+` WHERE business = $2 AND mirror_deleted_at IS NULL),
		coalesce((SELECT array_agg(id) FROM (SELECT id FROM `+t+` WHERE business = $2 AND mirror_deleted_at IS NULL
			ORDER BY random() LIMIT $1) AS s), '{}')`,
		massDeletionSample, m.name).Scan(&live, &sample)
	if err != nil {
		return fmt.Errorf("reading the rows of %s: %w", t, err)
	}
	if live < MassDeletionMinRows {
		return nil
	}
	// The sample's Gets at once: the check adds one request's time.
	errs := make([]error, len(sample))
	var wg sync.WaitGroup
	for i, id := range sample {
		wg.Go(func() { _, errs[i] = res.get(ctx, m.cfg.Client, id, m.walkOpts()...) })
	}
	wg.Wait()
	missing := 0
	for _, err := range errs {
		switch {
		case errors.Is(err, invoicing.ErrNotFound):
			missing++
		case err != nil:
			return fromAPI(err)
		}
	}
	if missing*2 <= len(sample) {
		return nil
	}
	listed := map[string]bool{}
	for r, err := range res.list(ctx, m.cfg.Client, 1, m.listOpts()...) {
		if err != nil {
			return fromAPI(err)
		}
		listed[r.id] = true
	}
	var ids []string
	if err := m.pool.QueryRow(ctx, `SELECT coalesce(array_agg(id), '{}') FROM `+t+` WHERE business = $1 AND mirror_deleted_at IS NULL`,
		m.name).Scan(&ids); err != nil {
		return fmt.Errorf("reading the rows of %s: %w", t, err)
	}
	gone := len(slices.DeleteFunc(ids, func(id string) bool { return listed[id] }))
	if m.massDeletion(gone, len(ids)) {
		return massDeletionError(gone, len(ids), res, "nothing was written to "+t)
	}
	return nil
}
