package invoicing

// WithClock makes the Client read the time from clk and do all its waiting
// (backoff, pauses after a 429, the rate limit) through clk.Sleep, so that
// tests of those paths run instantly and deterministically.
func WithClock(clk clock) Option { return func(o *options) { o.clk = clk } }
