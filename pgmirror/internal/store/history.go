package store

import (
	"context"
	"fmt"
	"time"
)

// History (migrations/0013): the versions a write replaced, each with the
// interval in which it was the current one, in <table>_history; those of
// a lines table keep their parent's interval. The writes keep them (see
// updateSQL and deleteLinesSQL); retention deletes them by age.

// pruneHistorySQL deletes a batch of the versions of table (%[1]s; key
// %[2]s: the id, or the parent's of a lines table) that ended before $1.
const pruneHistorySQL = `WITH batch AS (
	SELECT business, %[2]s, mirror_valid_to FROM @.%[1]s_history WHERE mirror_valid_to < $1 LIMIT ` + "%[3]s" + `)
DELETE FROM @.%[1]s_history AS h USING batch
WHERE h.business = batch.business AND h.%[2]s = batch.%[2]s AND h.mirror_valid_to = batch.mirror_valid_to`

// pruneHistory is pruneHistorySQL for table t.
func (t *Table) pruneHistory() string {
	key := "id"
	if t.Parent != "" {
		key = t.Parent
	}
	return fmt.Sprintf(pruneHistorySQL, t.Name, key, batchLimit)
}

// PruneHistory deletes the versions in the history of tables (record and
// lines tables) that ended before before, deleteBatch rows a statement,
// and returns how many it deleted.
func (s *Store) PruneHistory(ctx context.Context, tables []*Table, before time.Time) (int64, error) {
	var total int64
	for _, t := range tables {
		n, err := deleteCount(ctx, s, "deleting old versions of "+t.Name, s.q(t.pruneHistory()), before)
		if total += n; err != nil {
			return total, err
		}
	}
	return total, nil
}
