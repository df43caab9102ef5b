package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Sign returns the timestamp and signature header values the service would
// send with body when signing at timestamp with secret, so that tests can
// build signed deliveries for their own handlers. timestamp is truncated to
// whole Unix seconds (one before 1970 gives a header no Verifier accepts).
// Sign signs with any secret, even "" (which no Verifier accepts); it is not
// needed to receive webhooks. TestDelivery builds whole signed requests.
//
//	ts, sig := webhooks.Sign(secret, time.Now(), body)
//	req.Header.Set(webhooks.HeaderTimestamp, ts)
//	req.Header.Set(webhooks.HeaderSignature, sig)
func Sign(secret string, timestamp time.Time, body []byte) (timestampHeader, signatureHeader string) {
	timestampHeader = strconv.FormatInt(timestamp.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	writeSigned(mac, timestampHeader, body)
	return timestampHeader, "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
