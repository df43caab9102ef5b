package invoicing

// WithClock makes the Client read the time from clk and do all its waiting
// (backoff, pauses after a 429, the rate limit) through clk.Sleep, so that
// tests of those paths run instantly and deterministically.
func WithClock(clk clock) Option { return func(o *options) { o.clk = clk } }

// DecodePage decodes the list response b, the records under key, as the
// pipeline decodes a page.
func DecodePage[T any](b []byte, key string) (*Page[T], error) {
	env := listEnvelope[T]{key: key, limit: MaxPageSize}
	if err := decodeBody(b, &env); err != nil {
		return nil, err
	}
	return &env.page, nil
}
