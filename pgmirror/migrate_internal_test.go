package pgmirror

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Migrations are numbered from 1 without gaps and never drop or empty
// anything: a mirror is migrated in place, its data kept.
func TestMigrationsOnlyAdd(t *testing.T) {
	ms, err := migrations()
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	comment := regexp.MustCompile(`--[^\n]*`)
	destructive := regexp.MustCompile(`(?i)\b(DROP|TRUNCATE|DELETE\s+FROM|ALTER\s+\w+\s+\w+\s+RENAME)\b`)
	for i, m := range ms {
		assert.Equal(t, i+1, m.version)
		sql := comment.ReplaceAllString(m.sql, "")
		assert.False(t, destructive.MatchString(sql), "migration %s drops, deletes or renames: %s", m.name, destructive.FindString(sql))
	}
}
