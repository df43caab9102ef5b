package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// maxReconcileFailures is how many times in a row a reconciliation tries a
// resource's walk again (from where it stopped) before it gives up on that
// resource until the next run.
const maxReconcileFailures = 5

// Reconcile re-lists every resource now and writes what differs with the
// never-older rule, correcting the changes that raise no event (an invoice
// becoming overdue or voided, a quote declined or expired, a bill's states,
// a bank balance) and any event lost for good. It waits while another
// replica reconciles (an advisory lock makes them take turns), then returns
// the number of rows it inserted, corrected or marked deleted per resource
// (see markDeleted). Each resource's count is also logged and given to
// Config.OnReconciled. A resource whose walk keeps failing is skipped,
// logged, and reported in the error; the others are still reconciled,
// except when the database is lost or the service stays away (see
// reconcileResource): the reconciliation then ends with that error. When
// the service no longer lists most of a table's records (a different
// business behind the API key?), that resource is neither written nor
// marked, and the error wraps ErrMassDeletion, unless
// Config.AllowMassDeletion.
//
// A change that raises no event is corrected by the first reconciliation
// that starts after it.
func (m *Mirror) Reconcile(ctx context.Context) (map[string]int, error) {
	unlock, err := m.lock(ctx, "reconcile")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.reconcile(ctx)
}

// RunReconciler reconciles every ReconcileInterval until ctx ends. Every
// replica may run it: the interval is counted from the end of the last
// reconciliation by any of them (recorded in mirror_reconcile), one runs at
// a time (an advisory lock), and none runs before the backfill is complete.
// It looks whether one is due every tenth of the interval (at least every
// 100 ms, at most every minute). While the database or the service is away
// it waits longer after each failure (a second, doubling, at most about 30
// seconds), and the dependency logs one line when it goes and one when it is
// back, not one per failure; the reconciliation it cut short is due again
// at once. Another failed reconciliation is logged, and the next one is due
// an interval later, except one that found most of a table's records gone
// (ErrMassDeletion): RunReconciler then logs and returns its error, for the
// mirror to stop until the operator looks. It returns nil when ctx ends.
func (m *Mirror) RunReconciler(ctx context.Context) error {
	check := min(max(m.cfg.ReconcileInterval/10, 100*time.Millisecond), time.Minute)
	away, failures := m.db, 0 // the dependency the last look failed on, and how often in a row
	for {
		wait := jitter(check)
		if failures > 0 {
			wait = retryWait(failures)
		}
		if !away.sleep(ctx, wait) {
			return nil
		}
		err := m.reconcileIfDue(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if dep := m.dependencyOf(err); dep != nil {
			away, failures = dep, failures+1
			dep.failed(ctx, err)
			continue
		}
		away, failures = m.db, 0
		if err == nil {
			continue
		}
		m.log.ErrorContext(ctx, "pgmirror: reconciliation", "error", err.Error())
		if errors.Is(err, ErrMassDeletion) {
			return err
		}
	}
}

// reconcileIfDue reconciles when the interval has passed since the last
// reconciliation, the backfill is complete and no other replica is
// reconciling.
func (m *Mirror) reconcileIfDue(ctx context.Context) error {
	due, err := m.reconcileDue(ctx)
	if err != nil {
		return err
	}
	m.db.ok(ctx) // said before the reconciliation's own lines
	if !due {
		return nil
	}
	unlock, ok, err := m.tryLock(ctx, "reconcile")
	if err != nil || !ok {
		return err
	}
	defer unlock()
	if due, err := m.reconcileDue(ctx); err != nil || !due { // another replica just did it
		return err
	}
	_, err = m.reconcile(ctx)
	return err
}

// reconcileDue reports whether the backfill is complete and the interval has
// passed since the last reconciliation ended.
func (m *Mirror) reconcileDue(ctx context.Context) (bool, error) {
	var due bool
	err := m.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL) = $2
		AND (last_finished_at IS NULL OR last_finished_at <= now() - $1::interval)
		FROM mirror_reconcile`, m.cfg.ReconcileInterval, len(allResources)).Scan(&due)
	if err != nil {
		return false, fmt.Errorf("reading the reconciler's state: %w", err)
	}
	return due, nil
}

// reconcile re-lists every resource; the caller holds the lock.
func (m *Mirror) reconcile(ctx context.Context) (map[string]int, error) {
	if _, err := m.pool.Exec(ctx, `UPDATE mirror_reconcile SET last_started_at = now()`); err != nil {
		return nil, fmt.Errorf("pgmirror: starting a reconciliation: %w", err)
	}
	start := time.Now()
	if err := m.guardTables(ctx); err != nil { // before anything is written
		return nil, err
	}
	corrected := make(map[string]int, len(allResources))
	var errs []error
	for _, res := range allResources {
		listed, n, err := m.reconcileResource(ctx, res)
		if ctx.Err() != nil {
			return corrected, ctx.Err()
		}
		if errors.Is(err, ErrMassDeletion) || m.dependencyOf(err) != nil {
			return corrected, err // a lost dependency: the caller waits for it and starts again
		}
		if err != nil {
			m.log.ErrorContext(ctx, "pgmirror: reconciling a resource failed; the next reconciliation tries again",
				"resource", res.name, "listed", listed, "corrected", n, "error", err.Error())
			errs = append(errs, fmt.Errorf("%s: %w", res.name, err))
			continue
		}
		corrected[res.name] = n
		m.counters.addCorrections(res.name, n)
		m.log.InfoContext(ctx, "pgmirror: reconciled", "resource", res.name, "listed", listed, "corrected", n)
		if m.cfg.OnReconciled != nil {
			m.cfg.OnReconciled(res.name, n)
		}
	}
	report, _ := json.Marshal(corrected)
	if _, err := m.pool.Exec(ctx, `UPDATE mirror_reconcile SET last_finished_at = now(), last_corrected = $1`, report); err != nil {
		errs = append(errs, err)
	}
	if err := m.pruneInbox(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := m.pruneChanges(ctx); err != nil {
		errs = append(errs, err)
	}
	m.log.InfoContext(ctx, "pgmirror: reconciliation done", "took", time.Since(start).Round(time.Millisecond).String())
	if err := errors.Join(errs...); err != nil {
		return corrected, fmt.Errorf("pgmirror: reconciliation: %w", err)
	}
	return corrected, nil
}

// reconcileResource walks res and returns how many records it listed and
// how many rows it inserted, corrected or marked deleted. A failed walk
// goes on from the page it stopped at, after a backoff, at most
// maxReconcileFailures times in a row; a lost database ends it at once
// (the caller waits for it), and the service's failures are reported to
// the API's dependency rather than logged. Once the walk is complete, the rows
// it did not list are marked deleted (see markDeleted).
func (m *Mirror) reconcileResource(ctx context.Context, res *resource) (listed, corrected int, err error) {
	start, err := m.nextSeq(ctx)
	if err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	page, failures := 1, 0
	for {
		_, err := m.walk(ctx, res, page, func(ctx context.Context, rows []row, seq int64, resume int) error {
			var written []string
			err := m.writeIn(ctx, causeReconciliation, func(tx pgx.Tx) error {
				var err error
				written, err = apply(ctx, tx, res, rows, seq)
				return err
			})
			if err == nil {
				for _, r := range rows {
					seen[r.id] = true
				}
				listed, corrected, page = listed+len(rows), corrected+len(written), resume
			}
			return err
		})
		if err == nil {
			m.api.ok(ctx)
			n, err := m.markDeleted(ctx, res, seen, start)
			return listed, corrected + n, err
		}
		dep := m.dependencyOf(err)
		if ctx.Err() != nil || permanent(err) || errors.Is(err, ErrMassDeletion) || dep == m.db {
			return listed, corrected, err
		}
		if failures++; failures >= maxReconcileFailures {
			return listed, corrected, err
		}
		if dep == m.api {
			m.api.failed(ctx, err)
			if !m.api.sleep(ctx, apiWait(failures, err)) {
				return listed, corrected, ctx.Err()
			}
			continue
		}
		wait := backoff(failures, err)
		m.log.WarnContext(ctx, "pgmirror: reconciliation walk failed; going on from where it stopped",
			"resource", res.name, "page", page, "retry_in", wait.String(), "error", err.Error())
		if !sleep(ctx, wait) {
			return listed, corrected, ctx.Err()
		}
	}
}

// pruneInbox deletes the processed deliveries older than InboxRetention.
func (m *Mirror) pruneInbox(ctx context.Context) error {
	if m.cfg.InboxRetention < 0 {
		return nil
	}
	tag, err := m.pool.Exec(ctx, `DELETE FROM `+pginbox.TableName+` WHERE status = $1 AND processed_at < now() - $2::interval`,
		pginbox.StatusProcessed, m.cfg.InboxRetention)
	if err != nil {
		return fmt.Errorf("deleting old deliveries: %w", err)
	}
	if n := tag.RowsAffected(); n > 0 {
		m.log.InfoContext(ctx, "pgmirror: deleted processed deliveries past their retention", "deliveries", n,
			"retention", m.cfg.InboxRetention.String())
	}
	return nil
}
