// Package seal encrypts at rest the secrets pgmirror stores for each
// business (its API key, its webhook secrets) in PostgreSQL, with keys that
// come from the environment and can be rotated.
//
// A [Keyring] holds one or more 32-byte keys, each with an id. The first key
// is the current one: [Keyring.Seal] always uses it. [Keyring.Open] opens a
// value sealed with any key of the keyring. The environment value that
// [ParseKeyring] reads lists the keys as
//
//	id:base64key[,id:base64key...]
//
// with the key in standard base64, padded or not, of exactly 32 bytes, and
// the id 1 to 32 characters of A-Z a-z 0-9 _ -. [GenerateKey] makes one
// item ("invoicing-mirror keygen").
//
// # Format
//
// A sealed value is AES-256-GCM, with a fresh random 12-byte nonce for every
// value:
//
//	version (1 byte, 1) | id length (1 byte) | key id | nonce (12 bytes) | ciphertext and tag (16 bytes)
//
// The GCM additional data is the header (version, id length and id)
// followed by the caller's aad. The aad names the value's place (for
// example "business\x00field"), so a value copied to another row or field
// does not open there: Open fails with [ErrCorrupt], as it does for any
// value that is malformed, altered or truncated. A value sealed with a key
// the keyring does not hold fails with [ErrUnknownKey].
//
// A key must not seal more than 2^32 values (random nonces); secrets of a
// few thousand businesses, re-sealed at each rotation, are far below that.
//
// # Rotation
//
//  1. Generate a new key and put it FIRST in the environment value, keeping
//     the old key after it: "k2:NEW...,k1:OLD...". Restart (or reload)
//     every replica: new values are sealed with k2, old ones still open.
//  2. Re-seal every stored value for which [Keyring.NeedsResealing] is
//     true ([KeyID] differs from [Keyring.Current]): Open, then Seal.
//  3. When no value needs re-sealing, remove the old key from the
//     environment value.
//
// Nothing in this package prints or returns key material: errors name a
// key by its id or its position, and a Keyring formats as its ids only.
// A Keyring is immutable and safe for concurrent use.
package seal
