package testkit

import (
	"iter"
	"testing"

	"github.com/stretchr/testify/require"
)

// Collect returns every value seq yields, in order, and fails t at once if
// it yields an error.
func Collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}
