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

// Reconcile re-lists every resource of every business now and writes what
// differs with the never-older rule, correcting the changes that raise no
// event (an invoice becoming overdue or voided, a quote declined or
// expired, a bill's states, a bank balance) and any event lost for good.
// For each business it waits while another replica reconciles it (an
// advisory lock makes them take turns), then returns the number of rows it
// inserted, corrected or marked deleted per resource, summed over the
// businesses (see markDeleted). Each resource's count is also logged and
// given to Config.OnReconciled. A resource whose walk keeps failing is
// skipped, logged, and reported in the error; the others are still
// reconciled, except when the database is lost or the service stays away
// (see reconcileResource): the reconciliation then ends with that error.
// When the service no longer lists most of a table's records (a different
// business behind the API key?), that resource is neither written nor
// marked, and the error wraps ErrMassDeletion, unless
// Config.AllowMassDeletion.
//
// A change that raises no event is corrected by the first reconciliation
// that starts after it.
func (m *Mirror) Reconcile(ctx context.Context) (map[string]int, error) {
	total := map[string]int{}
	var errs []error
	for _, t := range m.tenantList() {
		corrected, err := t.reconcileNow(ctx)
		for res, n := range corrected {
			total[res] += n
		}
		if err != nil {
			if len(m.tenantList()) > 1 {
				err = fmt.Errorf("business %s: %w", t.name, err)
			}
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// reconcileNow reconciles the business, after any reconciliation of it
// another replica is making.
func (m *tenant) reconcileNow(ctx context.Context) (map[string]int, error) {
	unlock, err := m.lock(ctx, "reconcile:"+m.name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.reconcile(ctx)
}

// reconcileIfDue reconciles the business when the interval has passed
// since its last reconciliation and its backfill is complete, unless
// another replica is reconciling it (errReconciledElsewhere).
func (m *tenant) reconcileIfDue(ctx context.Context) error {
	due, err := m.reconcileDue(ctx)
	if err != nil || !due {
		return err
	}
	unlock, ok, err := m.tryLock(ctx, "reconcile:"+m.name)
	if err != nil {
		return err
	}
	if !ok {
		return errReconciledElsewhere
	}
	defer unlock()
	if due, err := m.reconcileDue(ctx); err != nil || !due { // another replica just did it
		return err
	}
	_, err = m.reconcile(ctx)
	return err
}

// errReconciledElsewhere is reconcileIfDue's error when another replica is
// reconciling the business: the business rests a moment on this replica,
// which goes on with another (see runWalk).
var errReconciledElsewhere = errors.New("pgmirror: another replica is reconciling the business")

// reconcileDue reports whether the business's backfill is complete and
// the interval has passed since its last reconciliation ended.
func (m *tenant) reconcileDue(ctx context.Context) (bool, error) {
	var due bool
	err := m.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM mirror_backfill WHERE business = $3 AND completed_at IS NOT NULL) = $2
		AND coalesce((SELECT last_finished_at <= now() - $1::interval FROM mirror_reconcile WHERE business = $3), false)`,
		m.cfg.ReconcileInterval, len(allResources), m.name).Scan(&due)
	if err != nil {
		return false, fmt.Errorf("reading the reconciler's state: %w", err)
	}
	return due, nil
}

// reconcile re-lists every resource; the caller holds the lock.
func (m *tenant) reconcile(ctx context.Context) (map[string]int, error) {
	if _, err := m.pool.Exec(ctx, `INSERT INTO mirror_reconcile (business, last_started_at) VALUES ($1, now())
		ON CONFLICT (business) DO UPDATE SET last_started_at = now()`, m.name); err != nil {
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
	if _, err := m.pool.Exec(ctx, `UPDATE mirror_reconcile SET last_finished_at = now(), last_corrected = $1 WHERE business = $2`,
		report, m.name); err != nil {
		errs = append(errs, err)
	}
	// Retention is the schema's, not the business's: once a minute at most
	// on this replica, however many businesses it reconciles.
	if last := m.pruned.Load(); time.Since(time.Unix(0, last)) >= time.Minute && m.pruned.CompareAndSwap(last, time.Now().UnixNano()) {
		if err := m.pruneInbox(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := m.pruneChanges(ctx); err != nil {
			errs = append(errs, err)
		}
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
func (m *tenant) reconcileResource(ctx context.Context, res *resource) (listed, corrected int, err error) {
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
			m.answered(ctx)
			n, err := m.markDeleted(ctx, res, seen, start)
			return listed, corrected + n, err
		}
		dep := m.dependencyOf(err)
		if ctx.Err() != nil || permanent(err) || paused(err) || errors.Is(err, ErrMassDeletion) || dep == m.db {
			return listed, corrected, err
		}
		if failures++; failures >= maxReconcileFailures {
			return listed, corrected, err
		}
		if dep == m.api {
			if !m.static {
				return listed, corrected, err // the business is paused; the others go on (see runWalk)
			}
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
