package seal_test

import "testing"

// BenchmarkSealOpen seals and opens a 64-byte secret (an API key's size).
func BenchmarkSealOpen(b *testing.B) {
	kr := keyring(b, "k2", "k1")
	pt := make([]byte, 64)
	for b.Loop() {
		sealed, err := kr.Seal(pt, aad)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kr.Open(sealed, aad); err != nil {
			b.Fatal(err)
		}
	}
}
