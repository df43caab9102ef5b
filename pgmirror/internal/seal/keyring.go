package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key in bytes (AES-256).
const KeySize = 32

// maxIDLen is the longest key id, in bytes.
const maxIDLen = 32

// Key is one key for [NewKeyring]: an id (1 to 32 characters of
// A-Z a-z 0-9 _ -) and a secret of exactly [KeySize] bytes. It formats
// (with any fmt verb) as its id only.
type Key struct {
	ID     string
	Secret []byte
}

// Format writes the key's id and never its secret, whatever the verb.
func (k Key) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "seal.Key{ID: %q, Secret: [redacted]}", k.ID)
}

// Keyring holds keys by id. The first is the current one, which seals; all
// of them open. Build one with [ParseKeyring] or [NewKeyring]; it is
// immutable and safe for concurrent use. It holds no raw key bytes (only the
// ciphers made from them), and formats as its ids only.
type Keyring struct {
	keys []keyEntry // keys[0] seals
}

type keyEntry struct {
	id   string
	aead cipher.AEAD
	mac  []byte // the key of MAC: HMAC-SHA256(secret, macLabel), not the secret
}

// macLabel derives a key's MAC key from its secret, so that the values it
// hashes and the values it seals use different keys.
const macLabel = "pgmirror member hash v1"

// NewKeyring returns a keyring of keys, the first being the current one.
// It fails if keys is empty, an id is invalid or repeated, or a secret is
// not [KeySize] bytes. The secrets are not kept: the caller may clear them.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: a keyring needs at least one key")
	}
	kr := &Keyring{keys: make([]keyEntry, 0, len(keys))}
	for i, key := range keys {
		if !validID(key.ID) {
			return nil, fmt.Errorf("seal: key %d: the id must be 1 to %d characters of A-Z a-z 0-9 _ -", i+1, maxIDLen)
		}
		if kr.find(key.ID) != nil {
			return nil, fmt.Errorf("seal: key id %q appears twice", key.ID)
		}
		if len(key.Secret) != KeySize {
			return nil, fmt.Errorf("seal: key %q is %d bytes, want %d", key.ID, len(key.Secret), KeySize)
		}
		aead, err := newAEAD(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("seal: key %q: %w", key.ID, err)
		}
		h := hmac.New(sha256.New, key.Secret)
		h.Write([]byte(macLabel))
		kr.keys = append(kr.keys, keyEntry{id: key.ID, aead: aead, mac: h.Sum(nil)})
	}
	return kr, nil
}

// newAEAD returns AES-256-GCM with random 12-byte nonces prepended to the
// ciphertext. aes.NewCipher copies the key.
func newAEAD(secret []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(block)
}

// ParseKeyring parses an environment value of the form
// "id:base64key[,id:base64key...]": the first key is the current one. Each
// key is standard base64, padded or not, of exactly [KeySize] bytes;
// whitespace around items is ignored. Errors name the item by its position
// or id and never include key material.
func ParseKeyring(s string) (*Keyring, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("seal: the keyring is empty, want id:base64key[,id:base64key...]")
	}
	items := strings.Split(s, ",")
	keys := make([]Key, 0, len(items))
	defer func() {
		for _, k := range keys {
			clear(k.Secret)
		}
	}()
	for i, item := range items {
		id, encoded, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("seal: keyring item %d: want id:base64key", i+1)
		}
		if !validID(id) {
			return nil, fmt.Errorf("seal: keyring item %d: the id must be 1 to %d characters of A-Z a-z 0-9 _ -", i+1, maxIDLen)
		}
		secret, err := decodeKey(encoded)
		if err != nil {
			return nil, fmt.Errorf("seal: keyring item %d: key %q is not standard base64", i+1, id)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return NewKeyring(keys...)
}

// decodeKey decodes standard base64, padded or not. Its error says nothing
// of the input.
func decodeKey(s string) ([]byte, error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.StdEncoding
	}
	b, err := enc.Strict().DecodeString(s)
	if err != nil {
		clear(b)
		return nil, errors.New("bad base64")
	}
	return b, nil
}

// GenerateKey returns a new keyring item "id:base64key" holding 32 random
// bytes in padded standard base64, for "invoicing-mirror keygen". It fails
// only if id is not 1 to 32 characters of A-Z a-z 0-9 _ -.
func GenerateKey(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("seal: the id must be 1 to %d characters of A-Z a-z 0-9 _ -", maxIDLen)
	}
	secret := make([]byte, KeySize)
	rand.Read(secret) // never fails (crypto/rand crashes the program instead)
	defer clear(secret)
	return id + ":" + base64.StdEncoding.EncodeToString(secret), nil
}

// Current returns the id of the key that seals ("" for a zero Keyring).
func (k *Keyring) Current() string {
	if len(k.keys) == 0 {
		return ""
	}
	return k.keys[0].id
}

// MAC returns HMAC-SHA256 of data under a key derived from the secret of
// the key id (not the secret itself: sealing and hashing never share a
// key), or false when the keyring has no key id. Equal data give equal MACs
// under one key; without the key, data cannot be found from its MAC but by
// guessing it.
func (k *Keyring) MAC(id string, data []byte) ([]byte, bool) {
	e := k.find(id)
	if e == nil {
		return nil, false
	}
	h := hmac.New(sha256.New, e.mac)
	h.Write(data)
	return h.Sum(nil), true
}

// String returns the keyring's ids, current first, e.g.
// "seal.Keyring{current: k2, keys: [k2 k1]}"; never key material.
func (k *Keyring) String() string {
	if k == nil {
		return "seal.Keyring(nil)"
	}
	ids := make([]string, len(k.keys))
	for i, e := range k.keys {
		ids[i] = e.id
	}
	return fmt.Sprintf("seal.Keyring{current: %s, keys: [%s]}", k.Current(), strings.Join(ids, " "))
}

// GoString is String, for %#v.
func (k *Keyring) GoString() string { return k.String() }

// find returns the key with this id, or nil.
func (k *Keyring) find(id string) *keyEntry {
	for i := range k.keys {
		if k.keys[i].id == id {
			return &k.keys[i]
		}
	}
	return nil
}

// validID reports whether id is 1 to 32 characters of A-Z a-z 0-9 _ -.
func validID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
