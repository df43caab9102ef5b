package seal

import (
	"errors"
	"fmt"
)

// version is the first byte of every sealed value.
const version = 1

// overhead is the nonce and the GCM tag: 12 + 16 bytes.
const overhead = 12 + 16

// ErrCorrupt is returned by [Keyring.Open] and [KeyID] for a value that is
// malformed, truncated, altered, or sealed with another aad (for another
// place).
var ErrCorrupt = errors.New("seal: corrupt sealed value, or sealed for another place")

// ErrUnknownKey is wrapped by the error [Keyring.Open] returns for a value
// sealed with a key the keyring does not hold; the error names the key id.
var ErrUnknownKey = errors.New("seal: unknown key")

type unknownKeyError struct{ id string }

func (e *unknownKeyError) Error() string {
	return fmt.Sprintf("seal: sealed with key %q which the keyring does not hold", e.id)
}

func (e *unknownKeyError) Unwrap() error { return ErrUnknownKey }

// Seal encrypts plaintext with the current key and returns the sealed
// value (see the package doc for its format): len(plaintext)+30+len(id)
// bytes. aad binds the value to its place (e.g. "business\x00field"): Open
// must be given the same aad. It fails only for a Keyring with no key.
func (k *Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	if len(k.keys) == 0 {
		return nil, errors.New("seal: the keyring has no key")
	}
	key := k.keys[0]
	out := make([]byte, 0, 2+len(key.id)+overhead+len(plaintext))
	out = append(out, version, byte(len(key.id)))
	out = append(out, key.id...)
	return key.aead.Seal(out, nil, plaintext, additionalData(out, aad)), nil
}

// Open decrypts a value sealed by [Keyring.Seal] with the same aad, under
// any key of the keyring. It fails with an error wrapping [ErrUnknownKey]
// if the key is not in the keyring, and with [ErrCorrupt] for anything
// else; errors never include the value's bytes.
func (k *Keyring) Open(sealed, aad []byte) ([]byte, error) {
	id, body, err := split(sealed)
	if err != nil {
		return nil, err
	}
	key := k.find(id)
	if key == nil {
		return nil, &unknownKeyError{id: id}
	}
	plaintext, err := key.aead.Open(nil, nil, body, additionalData(sealed[:len(sealed)-len(body)], aad))
	if err != nil {
		return nil, ErrCorrupt
	}
	return plaintext, nil
}

// KeyID returns the id of the key that sealed the value, without opening
// it, or [ErrCorrupt] if the value is malformed. For rotation: re-seal
// values whose KeyID is not [Keyring.Current].
func KeyID(sealed []byte) (string, error) {
	id, _, err := split(sealed)
	return id, err
}

// NeedsResealing reports whether the value should be opened and sealed
// again: it was sealed with a key other than the current one, or it is
// malformed.
func (k *Keyring) NeedsResealing(sealed []byte) bool {
	id, err := KeyID(sealed)
	return err != nil || id != k.Current()
}

// split checks a sealed value's header and returns its key id and the
// nonce, ciphertext and tag that follow.
func split(sealed []byte) (id string, body []byte, err error) {
	if len(sealed) < 2 || sealed[0] != version {
		return "", nil, ErrCorrupt
	}
	n := int(sealed[1])
	if len(sealed) < 2+n+overhead {
		return "", nil, ErrCorrupt
	}
	id = string(sealed[2 : 2+n])
	if !validID(id) {
		return "", nil, ErrCorrupt
	}
	return id, sealed[2+n:], nil
}

// additionalData returns the GCM additional data: the header, then aad.
func additionalData(header, aad []byte) []byte {
	ad := make([]byte, 0, len(header)+len(aad))
	ad = append(ad, header...)
	return append(ad, aad...)
}
