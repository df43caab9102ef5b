package benchpair

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The webhook headers BaselineVerify reads and the tolerance it allows: the
// values of webhooks.HeaderTimestamp, webhooks.HeaderSignature and
// webhooks.DefaultTolerance, written out so that this package needs only
// the standard library (the webhooks tests check that they agree).
const (
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderSignature = "X-Service-Signature"
	Tolerance       = 5 * time.Minute
)

// BaselineVerify is what a careful receiver writes by hand with crypto/hmac,
// the baseline of the webhook benchmarks (webhooks, webhooks/pginbox,
// webhooks/redisdedup): the checks of webhooks.Verifier.Verify for one
// secret (key) and the default tolerance, without the package. It returns
// the time the delivery was signed at.
func BaselineVerify(key []byte, h http.Header, body []byte, now time.Time) (time.Time, error) {
	ts := h.Get(HeaderTimestamp)
	sig, ok := strings.CutPrefix(h.Get(HeaderSignature), "sha256=")
	if ts == "" || !ok {
		return time.Time{}, errors.New("missing or malformed header")
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return time.Time{}, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), want) {
		return time.Time{}, errors.New("signature mismatch")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	signedAt := time.Unix(sec, 0)
	if now.Sub(signedAt).Abs() > Tolerance {
		return time.Time{}, errors.New("timestamp outside tolerance")
	}
	return signedAt, nil
}
