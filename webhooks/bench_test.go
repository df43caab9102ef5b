package webhooks_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The benchmarks compare the package (sdk) with the hand-written baseline on
// the ~4 KB quote.accepted fixture, in one loop (internal/benchpair: every
// iteration runs both, alternating which goes first). Each reports
// baseline-ns/op, sdk-ns/op, their B/op and allocs/op, and the ratio
// sdk/baseline:
//
//	go test -run '^$' -bench . -count 10 ./webhooks | tee bench.txt
//	benchstat bench.txt

// runPair measures baseline and sdk with benchpair.Run.
func runPair(b *testing.B, baseline, sdk func() error) {
	benchpair.Run(b, 100, benchpair.Variant{Name: "baseline", Run: baseline}, benchpair.Variant{Name: "sdk", Run: sdk})
}

func BenchmarkVerify(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)
	key := []byte(testSecret)

	runPair(b, func() error {
		_, err := webhooktest.BaselineVerify(key, header, body, testNow)
		return err
	}, func() error {
		return v.Verify(header, body)
	})
}

// BenchmarkVerifyParse measures a quote.accepted delivery verified and
// parsed: the baseline is the package before encoding/json/v2 (the same
// Verifier's Verify, then encoding/json into the old struct, v1QuoteAccepted);
// sdk is ParseDelivery. sdk/baseline must stay at or below 1/1.5 = 0.67.
func BenchmarkVerifyParse(b *testing.B) {
	body := fixture(b, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	v := newVerifier(b)

	runPair(b, func() error {
		if err := v.Verify(header, body); err != nil {
			return err
		}
		e := new(v1QuoteAccepted)
		if err := json.Unmarshal(body, e); err != nil {
			return err
		}
		if len(e.LineItems) != 5 {
			return errors.New("wrong parse")
		}
		return nil
	}, func() error {
		d, err := v.ParseDelivery(header, body)
		if err != nil {
			return err
		}
		if len(d.Event.(*webhooks.QuoteAccepted).LineItems) != 5 {
			return errors.New("wrong parse")
		}
		return nil
	})
}
