package seal_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
)

// secret returns a fixed 32-byte test key derived from name.
func secret(name string) []byte {
	s := sha256.Sum256([]byte("seal test key " + name))
	return s[:]
}

// item returns the keyring item "name:base64(secret(name))".
func item(name string) string {
	return name + ":" + base64.StdEncoding.EncodeToString(secret(name))
}

// keyring returns a keyring of the named test keys, the first current.
func keyring(t testing.TB, names ...string) *seal.Keyring {
	t.Helper()
	keys := make([]seal.Key, len(names))
	for i, n := range names {
		keys[i] = seal.Key{ID: n, Secret: secret(n)}
	}
	kr, err := seal.NewKeyring(keys...)
	require.NoError(t, err)
	return kr
}

// requireNoMaterial fails if s holds any form of the named test keys.
func requireNoMaterial(t *testing.T, s string, names ...string) {
	t.Helper()
	for _, n := range names {
		k := secret(n)
		for _, form := range []string{
			string(k),
			base64.StdEncoding.EncodeToString(k),
			base64.RawStdEncoding.EncodeToString(k),
			base64.StdEncoding.EncodeToString(k)[:12],
			string(k[:8]),
		} {
			require.NotContains(t, s, form, "key %s material in %q", n, s)
		}
		require.NotContains(t, s, hex.EncodeToString(k[:8]))
	}
}
