package pgmirror

import (
	"context"
	"time"
)

// The event lag of a record is the time from the delivery of an event
// naming it (when the Handler received it) to the commit of the row a
// fetch wrote for it: the coalescing window, the queues, the fetch and the
// write. Each fetcher write records it in mirror_event_lag, for the status
// command's percentiles, and in Metrics' histogram.

// lagWindow is how long mirror_event_lag keeps a write's lag.
const lagWindow = time.Hour

// lagPruneInterval is how often a replica's fetchers delete the lags past
// lagWindow.
const lagPruneInterval = time.Minute

// lagSQL records the lag ($2, in seconds) of a record of resource $1 of
// business $3.
const lagSQL = `INSERT INTO mirror_event_lag (resource, lag_seconds, business) VALUES ($1, $2, $3)`

// pruneLag deletes the lags older than lagWindow; a failure is left to
// the next try.
func (m *Mirror) pruneLag(ctx context.Context) {
	if _, err := m.pool.Exec(ctx, `DELETE FROM mirror_event_lag WHERE written_at < now() - $1::interval`, lagWindow); err != nil && ctx.Err() == nil {
		m.databaseFailed(ctx, err, "pgmirror: deleting old event lags")
	}
}
