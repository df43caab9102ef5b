package store

import (
	"context"
	"strings"
	"time"
)

// mirror_budgets: each business's request budget, a token bucket shared by
// every replica, and its pause.

const (
	createBudgetSQL = `INSERT INTO @.mirror_budgets (business, tokens) VALUES ($1, $2) ON CONFLICT DO NOTHING`

	// takeSQL takes up to $5 tokens of business $1 (rate $2 per second,
	// burst $3), those above the reserve $4 after refilling, and returns the
	// tokens there were before, how many it took, how long the business
	// stays paused (0 when not), and why it was paused ("" once it answered
	// again). A paused business's bucket is left alone.
	takeSQL = `WITH now AS (SELECT clock_timestamp() AS now),
cur AS (
	SELECT b.business, least($3::float8, b.tokens + $2::float8 * extract(epoch FROM now.now - b.at)) AS avail,
	       b.paused_until > now.now AS paused, b.paused_until, b.pause_reason, now.now
	FROM @.mirror_budgets AS b, now WHERE b.business = $1 FOR UPDATE OF b),
n AS (
	SELECT CASE WHEN coalesce(cur.paused, false) THEN 0 ELSE greatest(0, least($5::float8, floor(cur.avail - $4::float8))) END AS n
	FROM cur),
took AS (
	UPDATE @.mirror_budgets AS b
	SET tokens = cur.avail - n.n, at = cur.now
	FROM cur, n WHERE b.business = cur.business AND NOT coalesce(cur.paused, false))
SELECT avail, n.n::int, CASE WHEN paused THEN extract(epoch FROM paused_until - now) ELSE 0 END::float8, coalesce(pause_reason, '')
FROM cur, n`

	pauseSQL = `UPDATE @.mirror_budgets
SET paused_until = greatest(paused_until, clock_timestamp() + $2::interval), pause_reason = $3
WHERE business = $1`
	resumeSQL      = `UPDATE @.mirror_budgets SET paused_until = NULL, pause_reason = NULL WHERE business = $1 AND pause_reason IS NOT NULL`
	countPausedSQL = `SELECT count(*) FROM @.mirror_budgets WHERE business = ANY($1) AND pause_reason IS NOT NULL`
)

// CreateBudget makes business's bucket, holding tokens, unless it exists.
func (s *Store) CreateBudget(ctx context.Context, business string, tokens float64) error {
	_, err := exec(ctx, s.pool, "creating the request budget", s.q(createBudgetSQL), business, tokens)
	return err
}

// A Take is what TakeTokens found and took.
type Take struct {
	Available float64       // the tokens there were, refilled
	Took      int           // the tokens taken
	Paused    time.Duration // how long the business stays paused; 0 when not
	Reason    string        // why it was paused, "" once a call succeeded again
}

// TakeTokens takes up to chunk tokens of business's bucket (rate a second,
// up to burst), those above reserve (see takeSQL).
func (s *Store) TakeTokens(ctx context.Context, business string, rate, burst, reserve, chunk float64) (Take, error) {
	var t Take
	var paused float64
	err := scan(ctx, s.pool, "taking a request token", s.q(takeSQL), []any{business, rate, burst, reserve, chunk},
		&t.Available, &t.Took, &paused, &t.Reason)
	t.Paused = time.Duration(paused * float64(time.Second))
	return t, err
}

// Pause stops every replica's calls for business until d from now, with
// reason, unless it is paused longer already.
func (s *Store) Pause(ctx context.Context, business string, d time.Duration, reason string) error {
	_, err := exec(ctx, s.pool, "pausing a business", s.q(pauseSQL), business, d, clip(reason))
	return err
}

// Resume ends business's pause and clears its reason.
func (s *Store) Resume(ctx context.Context, business string) error {
	_, err := exec(ctx, s.pool, "ending a business's pause", s.q(resumeSQL), business)
	return err
}

// CountPaused counts the businesses of names that are paused.
func (s *Store) CountPaused(ctx context.Context, names []string) (int, error) {
	var n int
	err := scan(ctx, s.pool, "counting the paused businesses", s.q(countPausedSQL), []any{names}, &n)
	return n, err
}

// clip makes a message storable as text: at most 2000 bytes of valid UTF-8
// without NUL bytes.
func clip(s string) string {
	if len(s) > 2000 {
		s = s[:2000]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
