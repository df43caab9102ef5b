package seal_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
)

var aad = []byte("business-1\x00api_key")

func TestRoundTrip(t *testing.T) {
	kr := keyring(t, "k1")
	for _, pt := range [][]byte{nil, {}, []byte("x"), []byte("sk_live_0123456789"), bytes.Repeat([]byte{0, 255}, 5000)} {
		for _, ad := range [][]byte{nil, aad} {
			sealed, err := kr.Seal(pt, ad)
			require.NoError(t, err)
			assert.Len(t, sealed, len(pt)+2+len("k1")+12+16)
			if len(pt) > 4 {
				assert.False(t, bytes.Contains(sealed, pt), "plaintext visible in the sealed value")
			}
			id, err := seal.KeyID(sealed)
			require.NoError(t, err)
			assert.Equal(t, "k1", id)
			got, err := kr.Open(sealed, ad)
			require.NoError(t, err)
			assert.Equal(t, len(pt), len(got))
			assert.True(t, bytes.Equal(pt, got))
		}
	}
}

// TestFormat seals by hand, following the format in the package doc, and
// opens the result: the format is the documented one.
func TestFormat(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, 12)
	header := append([]byte{1, 2}, "k1"...)
	block, err := aes.NewCipher(secret("k1"))
	require.NoError(t, err)
	gcm, err := cipher.NewGCM(block)
	require.NoError(t, err)
	sealed := append(append(bytes.Clone(header), nonce...),
		gcm.Seal(nil, nonce, []byte("hello"), append(bytes.Clone(header), aad...))...)

	got, err := keyring(t, "k1").Open(sealed, aad)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))

	// And Seal's output opens by hand.
	sealed, err = keyring(t, "k1").Seal([]byte("world"), aad)
	require.NoError(t, err)
	require.Equal(t, header, sealed[:4])
	got, err = gcm.Open(nil, sealed[4:16], sealed[16:], append(bytes.Clone(header), aad...))
	require.NoError(t, err)
	assert.Equal(t, "world", string(got))
}

func TestWrongAAD(t *testing.T) {
	kr := keyring(t, "k1")
	sealed, err := kr.Seal([]byte("secret"), []byte("business-1\x00api_key"))
	require.NoError(t, err)
	for _, other := range [][]byte{
		nil,
		[]byte("business-2\x00api_key"),
		[]byte("business-1\x00webhook_secret"),
		[]byte("business-1\x00api_ke"),
		[]byte("business-1\x00api_key\x00"),
	} {
		_, err := kr.Open(sealed, other)
		assert.ErrorIs(t, err, seal.ErrCorrupt, "%q", other)
	}
}

func TestTamperEveryByte(t *testing.T) {
	// The same secret under two ids: changing the id in the header must
	// still fail, since the header is authenticated.
	kr, err := seal.NewKeyring(seal.Key{ID: "k1", Secret: secret("k1")}, seal.Key{ID: "k2", Secret: secret("k1")})
	require.NoError(t, err)
	sealed, err := kr.Seal([]byte("sk_live_0123456789"), aad)
	require.NoError(t, err)
	for i := range sealed {
		for _, mask := range []byte{0x01, 0x80, 0xff, 0x03 /* "k1" ^ 3 = "k2" */} {
			bad := bytes.Clone(sealed)
			bad[i] ^= mask
			got, err := kr.Open(bad, aad)
			require.Error(t, err, "byte %d ^ %#x", i, mask)
			assert.Nil(t, got)
			if !errors.Is(err, seal.ErrUnknownKey) {
				assert.ErrorIs(t, err, seal.ErrCorrupt)
			}
		}
	}
	// Appending a byte fails too.
	_, err = kr.Open(append(bytes.Clone(sealed), 0), aad)
	assert.ErrorIs(t, err, seal.ErrCorrupt)
}

func TestTruncateEveryLength(t *testing.T) {
	kr := keyring(t, "k1")
	sealed, err := kr.Seal([]byte("sk_live_0123456789"), aad)
	require.NoError(t, err)
	for n := range len(sealed) {
		for _, cut := range [][]byte{sealed[:n], sealed[len(sealed)-n:]} {
			got, err := kr.Open(bytes.Clone(cut), aad)
			assert.ErrorIs(t, err, seal.ErrCorrupt, "length %d", n)
			assert.Nil(t, got)
		}
		if n < 2+len("k1")+12+16 { // shorter than an empty plaintext's value
			_, err = seal.KeyID(sealed[:n])
			assert.ErrorIs(t, err, seal.ErrCorrupt, "length %d", n)
			assert.True(t, kr.NeedsResealing(sealed[:n]), "length %d", n)
		}
	}
}

func TestUnknownKey(t *testing.T) {
	sealed, err := keyring(t, "old").Seal([]byte("v"), aad)
	require.NoError(t, err)
	_, err = keyring(t, "k2", "k1").Open(sealed, aad)
	require.ErrorIs(t, err, seal.ErrUnknownKey)
	assert.NotErrorIs(t, err, seal.ErrCorrupt)
	assert.EqualError(t, err, `seal: sealed with key "old" which the keyring does not hold`)
}

func TestMalformedHeader(t *testing.T) {
	kr := keyring(t, "k1")
	sealed, err := kr.Seal([]byte("v"), nil)
	require.NoError(t, err)
	body := sealed[4:]
	for name, header := range map[string][]byte{
		"version 0":   {0, 2, 'k', '1'},
		"version 2":   {2, 2, 'k', '1'},
		"empty id":    {1, 0},
		"bad id char": {1, 2, 'k', 0},
		"id too long": append([]byte{1, 33}, bytes.Repeat([]byte{'a'}, 33)...),
	} {
		v := append(bytes.Clone(header), body...)
		_, err := kr.Open(v, nil)
		assert.ErrorIs(t, err, seal.ErrCorrupt, name)
		_, err = seal.KeyID(v)
		assert.ErrorIs(t, err, seal.ErrCorrupt, name)
		assert.True(t, kr.NeedsResealing(v), name)
	}
	_, err = kr.Open(nil, nil)
	assert.ErrorIs(t, err, seal.ErrCorrupt)
}

func TestRotation(t *testing.T) {
	old, err := keyring(t, "k1").Seal([]byte("sk_live_1"), aad)
	require.NoError(t, err)

	kr, err := seal.ParseKeyring(item("k2") + "," + item("k1"))
	require.NoError(t, err)
	assert.Equal(t, "k2", kr.Current())
	assert.True(t, kr.NeedsResealing(old))

	pt, err := kr.Open(old, aad)
	require.NoError(t, err)
	resealed, err := kr.Seal(pt, aad)
	require.NoError(t, err)
	id, err := seal.KeyID(resealed)
	require.NoError(t, err)
	assert.Equal(t, "k2", id)
	assert.False(t, kr.NeedsResealing(resealed))

	// Once every value is re-sealed, the old key can go.
	newOnly, err := seal.ParseKeyring(item("k2"))
	require.NoError(t, err)
	got, err := newOnly.Open(resealed, aad)
	require.NoError(t, err)
	assert.Equal(t, "sk_live_1", string(got))
	_, err = newOnly.Open(old, aad)
	assert.ErrorIs(t, err, seal.ErrUnknownKey)
}

func TestNoncesDiffer(t *testing.T) {
	kr := keyring(t, "k1")
	a, err := kr.Seal([]byte("same"), aad)
	require.NoError(t, err)
	b, err := kr.Seal([]byte("same"), aad)
	require.NoError(t, err)
	assert.NotEqual(t, a[4:16], b[4:16], "nonce")
	assert.NotEqual(t, a[16:], b[16:], "ciphertext")
}

func TestZeroKeyring(t *testing.T) {
	var kr seal.Keyring
	assert.Equal(t, "", kr.Current())
	_, err := kr.Seal([]byte("v"), nil)
	assert.Error(t, err)
	sealed, err := keyring(t, "k1").Seal([]byte("v"), nil)
	require.NoError(t, err)
	_, err = kr.Open(sealed, nil)
	assert.ErrorIs(t, err, seal.ErrUnknownKey)
	assert.True(t, kr.NeedsResealing(sealed))
}

func TestConcurrentUse(t *testing.T) {
	kr := keyring(t, "k2", "k1")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				sealed, err := kr.Seal([]byte("v"), aad)
				if !assert.NoError(t, err) {
					return
				}
				got, err := kr.Open(sealed, aad)
				if !assert.NoError(t, err) || !assert.Equal(t, "v", string(got)) {
					return
				}
			}
		})
	}
	wg.Wait()
}
