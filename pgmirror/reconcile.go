package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Reconcile re-lists every resource of every business now and writes what
// differs with the never-older rule, correcting the changes that raise no
// event (an invoice becoming overdue or voided, a quote declined or
// expired, a bill's states, a bank balance) and any event lost for good.
// For each business it waits while another replica reconciles it (an
// advisory lock makes them take turns), then returns the number of rows it
// inserted, corrected or marked deleted per resource, summed over the
// businesses (see markDeleted). Each resource's count is also logged and
// given to Config.OnReconciled. A resource whose walk fails (a statement
// that fails) is skipped, logged, and reported in the error; the others are
// still reconciled, except when the database or the service is away (see
// RunReconciler): the business's reconciliation then ends with that error.
// When the service no longer lists most of a table's records (a different
// business behind the API key?), that resource is neither written nor
// marked, and the error wraps ErrMassDeletion, unless
// Config.AllowMassDeletion. It then deletes what is past its retention
// (Config.InboxRetention, Config.ChangeRetention), as Run does every
// minute.
//
// A change that raises no event is corrected by the first reconciliation
// that starts after it.
func (m *Mirror) Reconcile(ctx context.Context) (map[string]int, error) {
	total := map[string]int{}
	var errs []error
	ts := m.tenants.all()
	for _, t := range ts {
		corrected, err := t.reconcileNow(ctx)
		for res, n := range corrected {
			total[res] += n
		}
		if err != nil {
			if len(ts) > 1 {
				err = fmt.Errorf("business %s: %w", t.name, err)
			}
			errs = append(errs, err)
		}
	}
	errs = append(errs, m.Prune(ctx))
	return total, errors.Join(errs...)
}

// ReconcileBusiness is Reconcile for the business named business alone
// (it deletes nothing past its retention: see Prune). It returns
// ErrNoSuchBusiness for a business the mirror does not serve.
func (m *Mirror) ReconcileBusiness(ctx context.Context, business string) (map[string]int, error) {
	t := m.tenants.named(business)
	if t == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBusiness, business)
	}
	return t.reconcileNow(ctx)
}

// reconcileNow reconciles the business, after any reconciliation of it
// another replica is making.
func (t *tenant) reconcileNow(ctx context.Context) (map[string]int, error) {
	lock, err := t.m.store.Lock(ctx, "reconcile:"+t.name)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return t.reconcile(ctx)
}

// reconcileIfDue reconciles the business when the interval has passed
// since its last reconciliation and its backfill is complete, unless
// another replica is reconciling it (errReconciledElsewhere).
func (t *tenant) reconcileIfDue(ctx context.Context) error {
	s, interval := t.m.store, t.m.cfg.ReconcileInterval
	due, err := s.ReconcileDue(ctx, t.name, interval, len(t.resources()))
	if err != nil || !due {
		return err
	}
	lock, ok, err := s.TryLock(ctx, "reconcile:"+t.name)
	if err != nil {
		return err
	}
	if !ok {
		return errReconciledElsewhere
	}
	defer lock.Release()
	if due, err := s.ReconcileDue(ctx, t.name, interval, len(t.resources())); err != nil || !due { // another replica just did it
		return err
	}
	_, err = t.reconcile(ctx)
	return err
}

// errReconciledElsewhere is reconcileIfDue's error when another replica is
// reconciling the business: the business rests a moment on this replica,
// which goes on with another (see walk).
var errReconciledElsewhere = errors.New("pgmirror: another replica is reconciling the business")

// reconcile re-lists every resource, or those of a resync asked for (see
// Businesses.Resync); the caller holds the lock. A resource's walk that
// fails for the database or the service, or that finds most of its
// records gone, ends the reconciliation with its error (it is due again);
// another failure is logged, and reported once the other resources are
// reconciled. A reconciliation of every resource is recorded (its start,
// end and corrections); a resync of some is not, and either clears the
// resync it made.
func (t *tenant) reconcile(ctx context.Context) (map[string]int, error) {
	m := t.m
	resync, err := m.store.PendingResync(ctx, t.name)
	if err != nil {
		return nil, err
	}
	resources := t.resources()
	if resync != nil && resync.Resources != nil {
		resources = slices.DeleteFunc(slices.Clone(resources), func(r *resource) bool { return !slices.Contains(resync.Resources, r.name) })
	}
	start := time.Now()
	for _, res := range resources { // before anything is written, the reconciliation's start included
		if err := t.guardTable(ctx, res); err != nil {
			return nil, fmt.Errorf("pgmirror: checking that the service still shows the records of %s: %w", res.name, err)
		}
	}
	full := len(resources) == len(t.resources())
	if full {
		if err := m.store.StartReconcile(ctx, t.name); err != nil {
			return nil, err
		}
	}
	corrected := make(map[string]int, len(resources))
	var errs []error
	for _, res := range resources {
		listed, n, err := t.reconcileResource(ctx, res)
		var dbErr *store.Error
		switch {
		case ctx.Err() != nil:
			return corrected, ctx.Err()
		case errors.Is(err, ErrMassDeletion), errors.As(err, new(*apiError)), errors.As(err, &dbErr) && dbErr.Away():
			return corrected, err // the walk's caller decides (see failed), and reconciles again
		case err != nil:
			t.log.ErrorContext(ctx, "pgmirror: reconciling a resource failed; the next reconciliation tries again",
				"resource", res.name, "listed", listed, "corrected", n, "error", oneLine(err))
			errs = append(errs, fmt.Errorf("%s: %w", res.name, err))
			continue
		}
		corrected[res.name] = n
		m.counters.addCorrections(res.name, n)
		t.log.InfoContext(ctx, "pgmirror: reconciled", "resource", res.name, "listed", listed, "corrected", n)
		if m.cfg.OnReconciled != nil {
			m.cfg.OnReconciled(res.name, n)
		}
	}
	if full {
		report, _ := json.Marshal(corrected)
		if err := m.store.FinishReconcile(ctx, t.name, report); err != nil {
			errs = append(errs, err)
		}
	}
	if resync != nil {
		if err := m.store.ResyncDone(ctx, t.name, resync); err != nil {
			errs = append(errs, err)
		}
	}
	what := "pgmirror: reconciliation done"
	if resync != nil {
		what = "pgmirror: resync done"
	}
	t.log.InfoContext(ctx, what, "took", time.Since(start).Round(time.Millisecond).String())
	if err := errors.Join(errs...); err != nil {
		return corrected, fmt.Errorf("pgmirror: reconciliation: %w", err)
	}
	return corrected, nil
}

// reconcileResource walks res and returns how many records it listed and
// how many rows it inserted, corrected or marked deleted. Each page's
// transaction records the ids it listed (store.Listed); once the walk is
// complete, the rows it did not list are marked deleted (see
// markDeleted), and its ids forgotten.
func (t *tenant) reconcileResource(ctx context.Context, res *resource) (listed, corrected int, err error) {
	m := t.m
	start, err := m.store.NextSeq(ctx, t.name)
	if err != nil {
		return 0, 0, err
	}
	if err := m.store.ForgetListed(ctx, t.name, res.name); err != nil { // a walk's that did not end
		return 0, 0, err
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		if ferr := m.store.ForgetListed(fctx, t.name, res.name); err == nil {
			err = ferr
		}
	}()
	_, err = t.walkPages(ctx, res, 1, func(ctx context.Context, rows []store.Row, seq int64, _ int) error {
		var written []string
		ids := rowIDs(rows)
		err := t.writeIn(ctx, CauseReconciliation, res, ids, func(w *writeTx) error {
			var err error
			if written, err = apply(ctx, w, res, rows, seq); err != nil {
				return err
			}
			return w.Listed(ctx, t.name, res.name, ids)
		})
		if err == nil {
			listed, corrected = listed+len(rows), corrected+len(written)
		}
		return err
	})
	if err != nil {
		return listed, corrected, err
	}
	t.answered(ctx)
	n, err := t.markDeleted(ctx, res, listed, start)
	return listed, corrected + n, err
}

// Prune deletes what is past its retention: the processed deliveries older
// than Config.InboxRetention, the changes older than Config.ChangeRetention,
// the versions of the history that ended longer than
// Config.HistoryRetention ago (when set), and the event lags of the status
// older than an hour, a batch of rows a statement. Run does it every
// minute, and Reconcile once; call it after ReconcileBusiness.
func (m *Mirror) Prune(ctx context.Context) error {
	if m.cfg.InboxRetention >= 0 {
		n, err := m.store.PruneInbox(ctx, m.cfg.InboxRetention)
		if err != nil {
			return err
		}
		if n > 0 {
			m.log.InfoContext(ctx, "pgmirror: deleted processed deliveries past their retention", "deliveries", n,
				"retention", m.cfg.InboxRetention.String())
		}
	}
	if m.cfg.ChangeRetention >= 0 {
		n, err := m.store.PruneChanges(ctx, m.cfg.ChangeRetention)
		if err != nil {
			return err
		}
		if n > 0 {
			m.log.InfoContext(ctx, "pgmirror: deleted changes past their retention", "changes", n,
				"retention", m.cfg.ChangeRetention.String())
		}
	}
	if m.cfg.HistoryRetention > 0 {
		n, err := m.store.PruneHistory(ctx, historyTables(), m.cfg.Clock().Add(-m.cfg.HistoryRetention))
		if err != nil {
			return err
		}
		if n > 0 {
			m.log.InfoContext(ctx, "pgmirror: deleted versions past the history's retention", "versions", n,
				"retention", m.cfg.HistoryRetention.String())
		}
	}
	return m.store.PruneLag(ctx, lagWindow)
}

// historyTables are the tables with a history: every record and lines
// table.
func historyTables() []*store.Table {
	var out []*store.Table
	for _, res := range allResources {
		out = append(out, res.table)
		if res.lines != nil {
			out = append(out, res.lines)
		}
	}
	return out
}

// pruneEvery is how often Run prunes (see prune) on each replica.
const pruneEvery = time.Minute

// pruneStep is the step of the loop that prunes every pruneEvery.
func (m *Mirror) pruneStep(ctx context.Context) (time.Duration, error) {
	return jitter(pruneEvery), m.Prune(ctx)
}

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

// markPage is how many rows markDeleted reads, checks and marks at a
// time.
const markPage = 500

// markDeleted marks deleted the rows of res that a complete walk did not
// list: listed is how many records it listed (their ids are in
// mirror_walk_listed), and start a fetch number taken before it began
// (rows written by a later fetch are left alone: their record existed
// after the walk began). It marks nothing when the walk listed another
// number of records than the service counts once it ended (asked only
// when a row is unlisted: records created or deleted during the walk; the
// next reconciliation marks them), nor, without AllowMassDeletion, more
// than half of a table of at least MassDeletionMinRows rows
// (ErrMassDeletion). Where the service has a Get for the resource, each row
// to mark is first fetched: only a 404 marks it, and a record found is
// written. The rows are read, checked and marked markPage at a time. It
// returns the number of rows it marked or wrote.
func (t *tenant) markDeleted(ctx context.Context, res *resource, listed int, start int64) (int, error) {
	m := t.m
	live, unlisted, err := m.store.CountUnlisted(ctx, res.table, t.name, res.name, start)
	if err != nil || unlisted == 0 {
		return 0, err
	}
	total, err := res.total(ctx, m.cfg.Client, t.walkOpts...)
	if err != nil {
		return 0, err
	}
	if listed != total {
		t.log.InfoContext(ctx, "pgmirror: the walk listed another number of records than the service counts; "+
			"deletion marks wait for the next reconciliation", "resource", res.name, "listed", listed, "total", total,
			"unlisted", unlisted)
		return 0, nil
	}
	if m.massDeletion(unlisted, live) {
		return 0, massDeletionError(unlisted, live, res, "nothing was marked deleted")
	}
	written, marked := 0, 0
	for after := ""; ; {
		gone, err := m.store.Unlisted(ctx, res.table, t.name, res.name, start, after, markPage)
		if err != nil || len(gone) == 0 {
			return written + marked, err
		}
		after = gone[len(gone)-1]
		if res.get != nil {
			var w int
			gone, w, err = t.confirmGone(ctx, res, gone)
			if written += w; err != nil {
				return written + marked, err
			}
		}
		if len(gone) == 0 {
			continue
		}
		var ids []string
		err = t.writeIn(ctx, CauseReconciliation, res, gone, func(w *writeTx) error {
			if err := w.order(ctx); err != nil {
				return err
			}
			var err error
			if ids, err = w.MarkDeleted(ctx, res.table, res.lines, t.name, gone, start, w.versions); err != nil {
				return err
			}
			for _, id := range ids {
				w.changed(res, id, OpDelete, "")
			}
			return nil
		})
		if err != nil {
			return written + marked, err
		}
		if len(ids) > 0 {
			marked += len(ids)
			t.log.InfoContext(ctx, "pgmirror: marked deleted", "resource", res.name, "rows", len(ids))
			m.counters.addDeleted(res.name, len(ids))
		}
	}
}

// confirmGone fetches each of the records ids of res: it returns those the
// service answers 404 for, and writes those it shows (a walk can miss a
// record when a deletion moves it to a page the walk had passed). A record
// the service refuses to answer for is left for the next reconciliation; a
// failure of the service or the database ends it.
func (t *tenant) confirmGone(ctx context.Context, res *resource, ids []string) (gone []string, written int, err error) {
	m := t.m
	for _, id := range ids {
		seq, err := m.store.NextSeq(ctx, t.name)
		if err != nil {
			return gone, written, err
		}
		r, err := t.get(ctx, res, id, t.walkOpts)
		switch {
		case apiFailed(err, apiNotFound):
			gone = append(gone, id)
			continue
		case apiFailed(err, apiRejected):
			t.log.WarnContext(ctx, "pgmirror: could not check whether an unlisted record was deleted; the next reconciliation will",
				"resource", res.name, "id", id, "error", err.Error())
			continue
		case err != nil:
			return gone, written, err
		}
		var w []string
		err = t.writeIn(ctx, CauseReconciliation, res, []string{r.ID}, func(tx *writeTx) error {
			var err error
			w, err = apply(ctx, tx, res, []store.Row{r}, seq)
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

// guardTables runs guardTable on every resource: nil when the tables'
// records are still the service's, ErrMassDeletion when most of a table's
// are gone (a different business behind the API key?), another error when
// it could not tell.
func (t *tenant) guardTables(ctx context.Context) error {
	for _, res := range t.resources() {
		if err := t.guardTable(ctx, res); err != nil {
			return fmt.Errorf("pgmirror: checking that the service still shows the records of %s: %w", res.name, err)
		}
	}
	return nil
}

// massDeletionSample is how many of a table's rows a reconciliation checks
// with a Get before it writes anything to the table (see guardTable).
const massDeletionSample = 8

// guardTable checks, before a reconciliation writes to the table of res,
// that the service still shows its records, so that the records of
// another business behind the API key are not merged into it: it fetches a
// few rows at random, and when the service answers 404 for most of them,
// it lists the resource's ids (writing nothing) and returns
// ErrMassDeletion when it no longer lists most of the table's rows (see
// markDeleted). A table of fewer than MassDeletionMinRows rows, a resource
// without a Get and Config.AllowMassDeletion skip it.
func (t *tenant) guardTable(ctx context.Context, res *resource) error {
	m := t.m
	if m.cfg.AllowMassDeletion || res.get == nil {
		return nil
	}
	live, sample, err := m.store.SampleLive(ctx, res.table, t.name, massDeletionSample, MassDeletionMinRows)
	if err != nil || live < MassDeletionMinRows {
		return err
	}
	// The sample's Gets at once: the check adds one request's time.
	errs := make([]error, len(sample))
	var wg sync.WaitGroup
	for i, id := range sample {
		wg.Go(func() { _, errs[i] = t.get(ctx, res, id, t.walkOpts) })
	}
	wg.Wait()
	missing := 0
	for _, err := range errs {
		switch {
		case apiFailed(err, apiNotFound):
			missing++
		case err != nil:
			return err
		}
	}
	if missing*2 <= len(sample) {
		return nil
	}
	listed := map[string]bool{}
	for r, err := range t.list(ctx, res, 1) {
		if err != nil {
			return err
		}
		listed[r.ID] = true
	}
	ids, err := m.store.LiveIDs(ctx, res.table, t.name)
	if err != nil {
		return err
	}
	gone := len(slices.DeleteFunc(ids, func(id string) bool { return listed[id] }))
	if m.massDeletion(gone, len(ids)) {
		return massDeletionError(gone, len(ids), res, "nothing was written to "+res.table.Name)
	}
	return nil
}
