package seal_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
)

func TestParseKeyring(t *testing.T) {
	raw := "k1:" + base64.RawStdEncoding.EncodeToString(secret("k1"))
	kr, err := seal.ParseKeyring(" " + item("k2") + " ,\t" + raw + "\n")
	require.NoError(t, err)
	assert.Equal(t, "k2", kr.Current())

	// The parsed keys are the ones given: values sealed under each open.
	for _, name := range []string{"k1", "k2"} {
		sealed, err := keyring(t, name).Seal([]byte("s"), nil)
		require.NoError(t, err)
		got, err := kr.Open(sealed, nil)
		require.NoError(t, err, name)
		assert.Equal(t, "s", string(got))
	}
}

func TestParseKeyringErrors(t *testing.T) {
	k1 := secret("k1")
	b64 := base64.StdEncoding.EncodeToString(k1)
	short := base64.StdEncoding.EncodeToString(k1[:31])
	long := base64.StdEncoding.EncodeToString(append(k1, k1...))
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "empty"},
		{"blank", "  \t", "empty"},
		{"empty item", item("k1") + ",", "item 2"},
		{"no colon", b64, "item 1: want id:base64key"},
		{"empty id", ":" + b64, "item 1: the id"},
		{"id too long", strings.Repeat("a", 33) + ":" + b64, "item 1: the id"},
		{"bad id char", "k.1:" + b64, "item 1: the id"},
		{"id with space", "k 1:" + b64, "item 1: the id"},
		{"key as id", b64 + ":" + b64, "item 1: the id"},
		{"bad base64", "k1:" + b64[:20] + "*" + b64[21:], `item 1: key "k1" is not standard base64`},
		{"url base64", "k1:" + strings.NewReplacer("+", "-", "/", "_").Replace(b64) + "-", `key "k1" is not standard base64`},
		{"bad padding", "k1:" + b64 + "=", `key "k1" is not standard base64`},
		{"short", "k1:" + short, `key "k1" is 31 bytes, want 32`},
		{"long", "k1:" + long, `key "k1" is 64 bytes, want 32`},
		{"empty key", "k1:", `key "k1" is 0 bytes, want 32`},
		{"duplicate", item("k1") + "," + "k1:" + base64.StdEncoding.EncodeToString(secret("k2")), `key id "k1" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kr, err := seal.ParseKeyring(tc.in)
			require.Error(t, err)
			assert.Nil(t, kr)
			assert.Contains(t, err.Error(), tc.want)
			requireNoMaterial(t, err.Error(), "k1", "k2")
		})
	}
}

func TestNewKeyring(t *testing.T) {
	s := secret("k1")
	kr, err := seal.NewKeyring(seal.Key{ID: "k1", Secret: s})
	require.NoError(t, err)
	sealed, err := kr.Seal([]byte("v"), nil)
	require.NoError(t, err)

	// NewKeyring copies the secret: the caller may clear it.
	clear(s)
	got, err := kr.Open(sealed, nil)
	require.NoError(t, err)
	assert.Equal(t, "v", string(got))
	got, err = keyring(t, "k1").Open(sealed, nil)
	require.NoError(t, err, "sealed with the key as given, not the cleared one")
	assert.Equal(t, "v", string(got))
}

func TestNewKeyringErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []seal.Key
		want string
	}{
		{"none", nil, "at least one key"},
		{"bad id", []seal.Key{{ID: "k1", Secret: secret("k1")}, {ID: "k/2", Secret: secret("k2")}}, "key 2: the id"},
		{"duplicate", []seal.Key{{ID: "k1", Secret: secret("k1")}, {ID: "k1", Secret: secret("k2")}}, `key id "k1" appears twice`},
		{"short", []seal.Key{{ID: "k1", Secret: secret("k1")[:16]}}, `key "k1" is 16 bytes, want 32`},
		{"nil secret", []seal.Key{{ID: "k1"}}, `key "k1" is 0 bytes, want 32`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kr, err := seal.NewKeyring(tc.keys...)
			require.Error(t, err)
			assert.Nil(t, kr)
			assert.Contains(t, err.Error(), tc.want)
			requireNoMaterial(t, err.Error(), "k1", "k2")
		})
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := seal.GenerateKey("k3")
	require.NoError(t, err)
	b, err := seal.GenerateKey("k2")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(a, "k3:"))
	assert.Len(t, a, len("k3:")+44)
	assert.NotEqual(t, a[3:], b[3:], "two keys are different")

	kr, err := seal.ParseKeyring(a + "," + b)
	require.NoError(t, err)
	assert.Equal(t, "k3", kr.Current())

	for _, id := range []string{"", "a:b", strings.Repeat("x", 33), "é"} {
		_, err := seal.GenerateKey(id)
		assert.Error(t, err, "%q", id)
	}
}

func TestFormatPrintsNoKey(t *testing.T) {
	kr := keyring(t, "k2", "k1")
	want := "seal.Keyring{current: k2, keys: [k2 k1]}"
	assert.Equal(t, want, kr.String())
	assert.Equal(t, want, kr.GoString())

	type config struct {
		Name    string
		Keyring *seal.Keyring
		Key     seal.Key
		keyring *seal.Keyring
	}
	cfg := config{Name: "c", Keyring: kr, Key: seal.Key{ID: "k1", Secret: secret("k1")}, keyring: kr}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		for _, v := range []any{kr, *kr, cfg, &cfg, cfg.Key, []seal.Key{cfg.Key}} {
			out := fmt.Sprintf(verb, v)
			requireNoMaterial(t, out, "k1", "k2")
		}
	}
	assert.Contains(t, fmt.Sprintf("%+v", cfg), want)
	assert.Contains(t, fmt.Sprintf("%#v", cfg), want)
	assert.Equal(t, `seal.Key{ID: "k1", Secret: [redacted]}`, fmt.Sprint(cfg.Key))
	assert.Equal(t, "seal.Keyring(nil)", (*seal.Keyring)(nil).String())
}

// MAC is HMAC-SHA256 under a key derived from the secret: stable for a key,
// different across keys and from an HMAC under the secret itself, and
// refused for an id the keyring does not hold.
func TestMAC(t *testing.T) {
	kr := keyring(t, "k1", "k2")
	a, ok := kr.MAC("k1", []byte("ada@example.org"))
	require.True(t, ok)
	b, _ := kr.MAC("k1", []byte("ada@example.org"))
	assert.Equal(t, a, b, "equal values, equal MACs")
	c, _ := kr.MAC("k1", []byte("bob@example.org"))
	assert.NotEqual(t, a, c)
	d, _ := kr.MAC("k2", []byte("ada@example.org"))
	assert.NotEqual(t, a, d, "another key, another MAC")
	h := hmac.New(sha256.New, secret("k1"))
	h.Write([]byte("ada@example.org"))
	assert.NotEqual(t, h.Sum(nil), a, "not under the secret itself")
	_, ok = kr.MAC("k3", []byte("x"))
	assert.False(t, ok)
}
