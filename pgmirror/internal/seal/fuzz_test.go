package seal_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"testing"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
)

// sealWithNonce seals as Keyring.Seal does but with a fixed nonce, so that
// the fuzz seeds (and the set of genuine values) are the same in every
// fuzzing process.
func sealWithNonce(t testing.TB, id string, nonce byte, plaintext, ad []byte) []byte {
	header := append([]byte{1, byte(len(id))}, id...)
	block, err := aes.NewCipher(secret(id))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Repeat([]byte{nonce}, 12)
	out := append(bytes.Clone(header), n...)
	return gcm.Seal(out, n, plaintext, append(bytes.Clone(header), ad...))
}

// FuzzOpen checks that Open never panics, agrees with KeyID, and opens
// nothing but the genuine values it was seeded with.
func FuzzOpen(f *testing.F) {
	kr := keyring(f, "k2", "k1")
	genuine := map[string]string{}
	for i, v := range []struct{ id, pt string }{
		{"k2", "sk_live_0123456789"},
		{"k1", "whsec_abc"},
		{"k2", ""},
		{"k1", string(bytes.Repeat([]byte{0xfe}, 100))},
	} {
		sealed := sealWithNonce(f, v.id, byte(i), []byte(v.pt), aad)
		genuine[string(sealed)] = v.pt
		f.Add(sealed)
		f.Add(sealed[:len(sealed)-1])
		f.Add(sealed[:len(sealed)/2])
		f.Add(sealed[:3])
	}
	f.Add(sealWithNonce(f, "old", 9, []byte("x"), aad))
	f.Add([]byte{})
	f.Add([]byte{1})

	f.Fuzz(func(t *testing.T, sealed []byte) {
		orig := bytes.Clone(sealed)
		got, err := kr.Open(sealed, aad)
		if !bytes.Equal(orig, sealed) {
			t.Fatal("Open changed its input")
		}
		id, idErr := seal.KeyID(sealed)
		kr.NeedsResealing(sealed)
		if err == nil {
			want, ok := genuine[string(sealed)]
			if !ok {
				t.Fatalf("opened a value that was never sealed: %x", sealed)
			}
			if string(got) != want {
				t.Fatalf("opened to %q, want %q", got, want)
			}
			if idErr != nil || (id != "k1" && id != "k2") {
				t.Fatalf("KeyID = %q, %v for a value that opens", id, idErr)
			}
			return
		}
		if got != nil {
			t.Fatal("Open returned bytes with an error")
		}
		switch {
		case errors.Is(err, seal.ErrUnknownKey):
			if idErr != nil || id == "k1" || id == "k2" {
				t.Fatalf("unknown key but KeyID = %q, %v", id, idErr)
			}
		case errors.Is(err, seal.ErrCorrupt):
		default:
			t.Fatalf("unexpected error %v", err)
		}
		if idErr != nil && !errors.Is(err, seal.ErrCorrupt) {
			t.Fatalf("KeyID fails (%v) but Open says %v", idErr, err)
		}
	})
}
