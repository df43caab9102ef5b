package store

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Migrations are numbered from 1 without gaps and never drop or empty
// anything: a mirror is migrated in place, its data kept. Keys, indexes and
// defaults may be replaced (migration 5 puts business first in every key),
// and mirror_reconcile's singleton column (always true) gave way to its
// business (its placeholder row, in a mirror that never backfilled, is no
// business's).
func TestMigrationsOnlyAdd(t *testing.T) {
	ms, err := Migrations()
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	comment := regexp.MustCompile(`--[^\n]*`)
	destructive := regexp.MustCompile(`(?i)\b(DROP|TRUNCATE|DELETE\s+FROM|ALTER\s+\w+\s+\w+\s+RENAME)\b`)
	replaced := regexp.MustCompile(`(?i)\bDROP\s+(CONSTRAINT\s+\w+|INDEX\s+\w+|DEFAULT|NOT NULL|COLUMN\s+singleton|SEQUENCE\s+\w+)\b|` +
		`DELETE FROM mirror_reconcile WHERE last_started_at IS NULL AND last_finished_at IS NULL`) // an empty placeholder
	for i, m := range ms {
		assert.Equal(t, i+1, m.Version)
		sql := replaced.ReplaceAllString(comment.ReplaceAllString(m.SQL, ""), "")
		assert.False(t, destructive.MatchString(sql), "migration %s drops, deletes or renames: %s", m.Name, destructive.FindString(sql))
	}
}
