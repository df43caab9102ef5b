//go:build !race

package invoicing_test

// raceEnabled reports whether the tests run under the race detector, which
// makes sync.Pool drop some of the items put in it.
const raceEnabled = false
