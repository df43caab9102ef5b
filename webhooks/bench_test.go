package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// baselineVerify is what a careful receiver writes by hand with crypto/hmac:
// the same checks as Verifier.Verify for one secret and the default
// tolerance, without the package.
func baselineVerify(key []byte, h http.Header, body []byte, now time.Time) error {
	ts := h.Get("X-Service-Timestamp")
	sig, ok := strings.CutPrefix(h.Get("X-Service-Signature"), "sha256=")
	if ts == "" || !ok {
		return errors.New("missing or malformed header")
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), want) {
		return errors.New("signature mismatch")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	if skew := now.Sub(time.Unix(sec, 0)); skew > 5*time.Minute || skew < -5*time.Minute {
		return errors.New("timestamp outside tolerance")
	}
	return nil
}

// The benchmarks compare the package (impl=sdk) with the hand-written
// baseline (impl=baseline) on the ~4 KB quote.accepted fixture, in the same
// run; compare them with `benchstat -col /impl`.

func BenchmarkVerify(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)
	key := []byte(testSecret)

	b.Run("impl=sdk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := v.Verify(header, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=baseline", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := baselineVerify(key, header, body, testNow); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkVerifyParse(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)
	key := []byte(testSecret)

	b.Run("impl=sdk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			d, err := v.ParseDelivery(header, body)
			if err != nil {
				b.Fatal(err)
			}
			if len(d.Event.(*webhooks.QuoteAccepted).LineItems) != 5 {
				b.Fatal("wrong parse")
			}
		}
	})
	b.Run("impl=baseline", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := baselineVerify(key, header, body, testNow); err != nil {
				b.Fatal(err)
			}
			e := new(webhooks.QuoteAccepted)
			if err := json.Unmarshal(body, e); err != nil {
				b.Fatal(err)
			}
			if len(e.LineItems) != 5 {
				b.Fatal("wrong parse")
			}
		}
	})
}
