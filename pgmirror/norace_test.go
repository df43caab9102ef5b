//go:build !race

package pgmirror_test

// raceDetector is true when the tests run with the race detector, which
// makes every instrumented line several times slower.
const raceDetector = false
