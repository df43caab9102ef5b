package webhooks

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignaturesLooksAtEightValues sends 100,000 signature values, on lines
// and joined by commas: only the first eight are parsed, so a hostile request
// cannot make verification cost more than eight signatures do.
func TestSignaturesLooksAtEightValues(t *testing.T) {
	v, err := NewVerifier("secret")
	require.NoError(t, err)
	sig := "sha256=" + string(slices.Repeat([]byte("ab"), sha256.Size))
	for name, lines := range map[string][]string{
		"lines":  slices.Repeat([]string{sig}, 100_000),
		"joined": {string(slices.Repeat([]byte(sig+","), 100_000))},
	} {
		var sigs [maxSignatures][sha256.Size]byte
		wellFormed, seen := v.signatures(http.Header{HeaderSignature: lines}, &sigs)
		require.Equal(t, maxSignatures, seen, name)
		require.Equal(t, maxSignatures, wellFormed, name)
	}
	require.Equal(t, 8, maxSignatures)
}
