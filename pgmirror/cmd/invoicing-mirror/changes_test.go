package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

func TestChangesUsageErrors(t *testing.T) {
	t.Parallel()
	dbURL := map[string]string{"DATABASE_URL": fullEnv["DATABASE_URL"]}
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		"no database":       {env: map[string]string{}, code: exitUsage, want: "set DATABASE_URL"},
		"an unknown flag":   {args: []string{"--folow"}, env: dbURL, code: exitUsage, want: "unknown flag --folow (did you mean --follow?)"},
		"a negative after":  {args: []string{"--after", "-1"}, env: dbURL, code: exitUsage, want: "--after must not be negative"},
		"an argument":       {args: []string{"extra"}, env: dbURL, code: exitUsage, want: `unexpected argument "extra"`},
		"no database there": {env: dbURL, code: exitUsage, want: "invoicing-mirror changes: "},
		"help":              {args: []string{"--help"}, env: dbURL, code: exitOK, want: "JSON lines"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), append([]string{"changes"}, c.args...), env(c.env), &out, &out)
			assert.Equal(t, c.code, code)
			assert.Contains(t, out.String(), c.want)
			assert.NotContains(t, out.String(), "db-password-that-must-not-show")
		})
	}
}

// decodeChanges decodes JSON lines of changes.
func decodeChanges(t *testing.T, lines []string) []pgmirror.Change {
	t.Helper()
	var out []pgmirror.Change
	for _, l := range lines {
		var c pgmirror.Change
		require.NoError(t, json.Unmarshal([]byte(l), &c), l)
		out = append(out, c)
	}
	return out
}

// invoicing-mirror changes prints the feed as JSON lines and exits 0 at its
// end; --after resumes; --follow prints the changes written later, until
// interrupted; changes deleted by retention make it exit 1.
func TestChangesPrintsTheFeed(t *testing.T) {
	t.Parallel()
	pg, err := testservers.StartPostgres()
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	srv := invoicingtest.NewTestServer(t)
	ctx := context.Background()
	const schema = "mirror_changes_cmd"
	m, err := pgmirror.Open(ctx, pg.URL, pgmirror.Config{Client: srv.Client(), Schema: schema})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Migrate(ctx))
	require.NoError(t, m.Backfill(ctx))
	vars := env(map[string]string{"DATABASE_URL": pg.URL})

	var out, errOut testkit.Buffer
	require.Equal(t, exitOK, run(ctx, []string{"changes", "--schema", schema}, vars, &out, &errOut), errOut.String())
	all := decodeChanges(t, out.Lines())
	require.NotEmpty(t, all)
	var rows int
	for _, res := range pgmirror.Resources() {
		var n int
		require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM `+res).Scan(&n))
		rows += n
	}
	assert.Len(t, all, rows, "a change per row backfilled")
	for i, c := range all {
		assert.Equal(t, pgmirror.OpInsert, c.Op)
		assert.Equal(t, pgmirror.CauseBackfill, c.Cause)
		assert.NotEmpty(t, c.New)
		if i > 0 {
			assert.Greater(t, c.Seq, all[i-1].Seq)
		}
	}

	var after testkit.Buffer
	half := all[len(all)/2].Seq
	require.Equal(t, exitOK, run(ctx, []string{"changes", "--schema", schema, "--after", itoa(half)}, vars, &after, &errOut))
	assert.Equal(t, all[len(all)/2+1:], decodeChanges(t, after.Lines()))

	// --follow: the changes so far, then one written later.
	fctx, cancel := context.WithCancel(ctx)
	var followed testkit.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(fctx, []string{"changes", "--schema", schema, "--follow"}, vars, &followed, &errOut)
	}()
	require.Eventually(t, func() bool { return len(followed.Lines()) == len(all) }, 10*time.Second, 10*time.Millisecond)
	srv.AddClient(invoicingtest.Contact{Name: "Quiet client"})
	_, err = m.Reconcile(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(followed.Lines()) == len(all)+1 }, 10*time.Second, 10*time.Millisecond)
	last := decodeChanges(t, followed.Lines())[len(all)]
	assert.Equal(t, pgmirror.Clients, last.Resource)
	assert.Equal(t, pgmirror.CauseReconciliation, last.Cause)
	cancel()
	assert.Equal(t, exitOK, <-code)

	// Retention deleted changes the reader has not seen.
	db, err := pgxpool.New(ctx, pg.URL)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, `UPDATE `+schema+`.mirror_reconcile SET changes_pruned_through = $1`, half)
	require.NoError(t, err)
	var pruned testkit.Buffer
	assert.Equal(t, exitError, run(ctx, []string{"changes", "--schema", schema, "--after", "1"}, vars, &out, &pruned))
	assert.Contains(t, pruned.String(), "deleted by retention (asked for those after 1; deleted through "+itoa(half)+")")
	assert.Equal(t, exitOK, run(ctx, []string{"changes", "--schema", schema, "--after", itoa(half)}, vars, &out, &errOut))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
