package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// flushFunc writes a batch of a walk, in a transaction of its own (see
// inTx). resume is the page a later walk must start from to miss none of the
// records after the batch: the page after the batch when it ends on a page
// boundary, otherwise the page it ends in (whose records then come again,
// harmlessly).
type flushFunc func(ctx context.Context, rows []row, seq int64, resume int) error

// walk lists res from page start with WithPrefetch and writes the records
// in batches of BatchSize through flush; the SDK goes on fetching the pages
// ahead while a batch is written. Every record of the walk is stamped with
// one fetch sequence number, taken before its first request, and recorded
// as the resource's walk_seq (see beginWalk). It returns the
// last page that held records (start when none did).
//
// On an error of the list (marked as the API's, see dependencyOf),
// including ctx ending, the records received before it are still written,
// then the error is returned; a batch in
// progress is committed even when ctx ends. Memory is bounded by Prefetch+1
// pages and one batch.
func (m *tenant) walk(ctx context.Context, res *resource, start int, flush flushFunc) (last int, err error) {
	seq, err := m.nextSeq(ctx)
	if err != nil {
		return start, err
	}
	if err := m.beginWalk(ctx, res, seq); err != nil {
		return start, err
	}
	batch := make([]row, 0, m.cfg.BatchSize)
	n := 0 // records received
	write := func() error {
		if len(batch) == 0 {
			return nil
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		resume := start + n/pageSize
		err := flush(wctx, batch, seq, resume)
		batch = batch[:0]
		return err
	}
	for r, err := range res.list(ctx, m.cfg.Client, start, m.listOpts()...) {
		if err != nil {
			return start + max(n-1, 0)/pageSize, errors.Join(fromAPI(err), write())
		}
		batch = append(batch, r)
		n++
		if len(batch) >= m.cfg.BatchSize {
			if err := write(); err != nil {
				return start + (n-1)/pageSize, err
			}
		}
	}
	return start + max(n-1, 0)/pageSize, write()
}

// permanent reports whether err is a failure that trying again will not
// mend: the service refused the request itself (a 4xx other than 408 and
// 429, such as a revoked key), or the SDK refused its parameters. Network
// errors, 5xx, 429, inconsistent pages and database errors are worth
// another try.
func permanent(err error) bool {
	var paramErr *invoicing.ParamError
	if errors.As(err, &paramErr) {
		return true
	}
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) {
		s := apiErr.StatusCode
		return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
	}
	return false
}

// beginWalk records that a walk of res numbered seq begins: its number
// stands for every row of res for the never-older rule (it lists them all;
// see migrations/0004), and the confirmations of single fetches older than
// it are no longer needed.
func (m *tenant) beginWalk(ctx context.Context, res *resource, seq int64) error {
	_, err := m.pool.Exec(ctx, `WITH walk AS (
		UPDATE mirror_backfill SET walk_seq = greatest(walk_seq, $2) WHERE business = $3 AND resource = $1
	)
	DELETE FROM mirror_confirmed WHERE business = $3 AND resource = $1 AND seq < $2`, res.name, seq, m.name)
	if err != nil {
		return fmt.Errorf("pgmirror: beginning a walk of %s: %w", res.name, err)
	}
	return nil
}
