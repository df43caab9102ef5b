package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// mirror_budgets: each business's request budget, a token bucket shared by
// every replica, its adaptive rate, and its pause; and the mirror's total
// budget, when it has one, in the row of TotalBudget.

// TotalBudget is the business column of the row of the mirror's total
// budget (a name no business can have).
const TotalBudget = "*"

// The adaptive rate (requests per second): a business without a ceiling
// starts at MaxAdaptive, one with a ceiling at it, and neither rises above
// it. A 429 (or a Retry-After) drops the rate to AdaptiveBackoff of the
// rate in use (the tokens taken over about the last second, when lower
// than the rate allowed), at most once a second, down to MinAdaptive; each
// second without one, the rate creeps up by AdaptiveCreep of what it was
// set to (back to above the rate that was refused in a few seconds,
// whatever the service's limit): additive increase, multiplicative
// decrease, from the rate actually sent.
const (
	MaxAdaptive     = 1000.0
	MinAdaptive     = 0.5
	AdaptiveBackoff = 0.7
	AdaptiveCreep   = 0.1
)

const createBudgetSQL = `INSERT INTO @.mirror_budgets (business, tokens, rate, rate_at, spent_at)
VALUES ($1, $2, $2, clock_timestamp(), clock_timestamp()) ON CONFLICT DO NOTHING`

// takeSQL takes tokens of business $1 (ceiling $2: a rate, or 0 for none),
// for a walk when $3 (which leaves a fifth of the bucket for events),
// dropping the rate first when $4 is the time a 429 was heard (NULL for
// none; at most once a second) to AdaptiveBackoff of the rate spent then,
// and from the total budget's row too ($5 its rate). A 429 heard empties
// the bucket besides (every time, not once a second): the service's own is
// empty, so the next request waits for a token at the lower rate. The rate is the one
// set at rate_at crept up since, at most the ceiling; the bucket refills
// at it up to one second's worth (at least one token), and a statement
// takes a twentieth of a second's worth at most (at least one). It returns
// the tokens there were, how many it took, the rate, how long the business
// stays paused (0 when not), why it was paused ("" once it answered
// again), and the total's tokens there were. A paused business's bucket
// is left alone. takeOneSQL is the same without a total budget ($5 0): it
// touches the business's row alone.
var takeSQL, takeOneSQL = takeStatement(`total AS (
	SELECT t.business, least(greatest($5::float8, 1), t.tokens + $5::float8 * extract(epoch FROM now.now - t.at)) AS avail
	FROM @.mirror_budgets AS t, now WHERE $5::float8 > 0 AND t.business = '`+TotalBudget+`' FOR UPDATE OF t),`, `,
took_total AS (
	UPDATE @.mirror_budgets AS t SET tokens = total.avail - n.n, at = (SELECT now FROM now)
	FROM total, n WHERE t.business = '`+TotalBudget+`')`),
	takeStatement(`total AS (SELECT NULL::float8 AS avail WHERE $5::float8 > 0 AND false),`, ``)

// takeStatement is takeSQL with the CTE total, which reads the total
// budget's tokens, and tookTotal, which takes them.
func takeStatement(total, tookTotal string) string {
	return `WITH now AS (SELECT clock_timestamp() AS now),
cur AS (
	SELECT b.business, b.tokens, b.at, b.paused_until, b.pause_reason, now.now,
		b.paused_until > now.now AS paused,
		least(CASE WHEN $2::float8 > 0 THEN $2::float8 ELSE ` + maxAdaptive + ` END,
			coalesce(b.rate, ` + maxAdaptive + `) * (1 + ` + adaptiveCreep + ` * extract(epoch FROM now.now - coalesce(b.rate_at, now.now)))) AS crept,
		b.spent * exp(-least(greatest(0, extract(epoch FROM least($4::timestamptz, now.now) - coalesce(b.spent_at, now.now))), ` + maxDecay + `)) AS spent,
		$4::timestamptz IS NOT NULL AND (b.rate_at IS NULL OR b.rate_at <= now.now - interval '1 second') AS slow
	FROM @.mirror_budgets AS b, now WHERE b.business = $1 FOR UPDATE OF b),
r AS (
	SELECT cur.*, CASE WHEN slow THEN greatest(` + minAdaptive + `, least(crept, spent) * ` + adaptiveBackoff + `) ELSE crept END AS rate
	FROM cur),
bucket AS (
	SELECT r.*, CASE WHEN $4::timestamptz IS NOT NULL THEN 0
		ELSE least(greatest(r.rate, 1), r.tokens + r.rate * extract(epoch FROM r.now - r.at)) END AS avail,
		CASE WHEN $3::boolean THEN greatest(1, greatest(r.rate, 1) / 5) ELSE 0 END AS reserve,
		greatest(1, floor(r.rate / 20)) AS chunk
	FROM r),
` + total + `
n AS (
	SELECT CASE WHEN coalesce(bucket.paused, false) THEN 0
		ELSE greatest(0, least(bucket.chunk, floor(bucket.avail - bucket.reserve),
			coalesce((SELECT floor(total.avail) FROM total), bucket.chunk))) END AS n
	FROM bucket),
took AS (
	UPDATE @.mirror_budgets AS b
	SET tokens = bucket.avail - n.n, at = bucket.now,
		spent = b.spent * exp(-least(extract(epoch FROM bucket.now - coalesce(b.spent_at, bucket.now)), ` + maxDecay + `)) + n.n, spent_at = bucket.now,
		rate = CASE WHEN bucket.slow THEN bucket.rate ELSE b.rate END,
		rate_at = CASE WHEN bucket.slow OR b.rate_at IS NULL THEN bucket.now ELSE b.rate_at END
	FROM bucket, n WHERE b.business = $1 AND NOT coalesce(bucket.paused, false))` + tookTotal + `
SELECT avail, n.n::int, rate, CASE WHEN paused THEN extract(epoch FROM paused_until - now) ELSE 0 END::float8,
	coalesce(pause_reason, ''), coalesce((SELECT avail FROM total), 0)
FROM bucket, n`
}

const (
	createTotalSQL = `INSERT INTO @.mirror_budgets (business, tokens) VALUES ('` + TotalBudget + `', $1) ON CONFLICT DO NOTHING`

	pauseSQL = `UPDATE @.mirror_budgets
SET paused_until = greatest(paused_until, clock_timestamp() + $2::interval), pause_reason = $3
WHERE business = $1`
	resumeSQL      = `UPDATE @.mirror_budgets SET paused_until = NULL, pause_reason = NULL WHERE business = $1 AND pause_reason IS NOT NULL`
	countPausedSQL = `SELECT count(*) FROM @.mirror_budgets WHERE business = ANY($1) AND pause_reason IS NOT NULL`
)

// maxDecay bounds the seconds of the spending's decay, e^-seconds: beyond
// about 708 its value, a numeric, is too small for a float8 (an error, not
// 0); e^-700 is nothing already.
const maxDecay = "700"

// The constants of the adaptive rate, as SQL.
var (
	maxAdaptive     = sqlFloat(MaxAdaptive)
	minAdaptive     = sqlFloat(MinAdaptive)
	adaptiveBackoff = sqlFloat(AdaptiveBackoff)
	adaptiveCreep   = sqlFloat(AdaptiveCreep)
)

// CreateBudget makes business's bucket, holding tokens, at the rate of
// tokens (a second's worth), unless it exists.
func (s *Store) CreateBudget(ctx context.Context, business string, tokens float64) error {
	_, err := exec(ctx, s.pool, "creating the request budget", s.q(createBudgetSQL), business, tokens)
	return err
}

// CreateTotalBudget makes the mirror's total bucket, holding tokens,
// unless it exists.
func (s *Store) CreateTotalBudget(ctx context.Context, tokens float64) error {
	_, err := exec(ctx, s.pool, "creating the total request budget", s.q(createTotalSQL), tokens)
	return err
}

// A Take is what TakeTokens found and took.
type Take struct {
	Available float64       // the tokens there were, refilled
	Took      int           // the tokens taken
	Rate      float64       // the business's rate now, requests per second
	Paused    time.Duration // how long the business stays paused; 0 when not
	Reason    string        // why it was paused, "" once a call succeeded again
	Total     float64       // the total budget's tokens there were (0 without one)
}

// TakeTokens takes tokens of business's bucket (see takeSQL): ceiling is
// its rate's ceiling (0: none), walk leaves the events' reserve, a
// non-zero heard (when a 429 was heard) drops its rate first to
// AdaptiveBackoff of the rate in use then, total is the mirror's total
// rate (0: none), whose bucket must exist (CreateTotalBudget).
func (s *Store) TakeTokens(ctx context.Context, business string, ceiling float64, walk bool, heard time.Time, total float64) (Take, error) {
	var t Take
	var paused float64
	var at *time.Time
	if !heard.IsZero() {
		at = &heard
	}
	sql := takeSQL
	if total == 0 {
		sql = takeOneSQL
	}
	err := scan(ctx, s.pool, "taking a request token", s.q(sql), []any{business, ceiling, walk, at, total},
		&t.Available, &t.Took, &t.Rate, &paused, &t.Reason, &t.Total)
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

// sqlFloat is f as an SQL float8 literal.
func sqlFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) + "::float8" }
