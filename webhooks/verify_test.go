package webhooks_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Known-answer vectors computed once, outside Go, with
//
//	printf '%s' "1772702061.$BODY" | openssl dgst -sha256 -hmac "$SECRET"
//
// (BODY being the file's bytes for the fixtures), and the same with
// `-mac HMAC -macopt hexkey:$SECRET` for the hex-decoded key, which the
// service does not use and which must therefore fail.
const inlineBody = `{"payment_id": "p-1", "invoice_id": "i-1", "amount": "10.00", "payment_method": "bank_transfer", "received_at": "2026-03-05T09:14:21Z"}`

var knownAnswers = []struct {
	name       string
	body       func(testing.TB) []byte
	utf8Key    string // hex HMAC with the secret's UTF-8 bytes as key: valid
	hexDecoded string // hex HMAC with the hex-decoded secret as key: invalid
}{
	{
		name:       "inline payment.received",
		body:       func(testing.TB) []byte { return []byte(inlineBody) },
		utf8Key:    "f6a02d16e6cc13fd9fbd7b1b8c09ecd996b3cbe5d681ceebdac443d94b5525d2",
		hexDecoded: "56ef4e36f89c95c0e14dfa08583825c21d91002c960d0fe28b5170abe686f1ed",
	},
	{
		name:       "testdata/test.json",
		body:       func(t testing.TB) []byte { return fixture(t, "test.json") },
		utf8Key:    "a338b1c2b9148707e23f5d5e906c198fea4ba8fc36e32b95df8e24f51c094feb",
		hexDecoded: "ca5371b07f9e682424577ecdffbdd15defcae50b79229e60eab2586e0b9731c5",
	},
	{
		name:       "testdata/quote.accepted.json",
		body:       func(t testing.TB) []byte { return fixture(t, "quote.accepted.json") },
		utf8Key:    "df8f49274b7e7b9a7bd19664717c5d5af9910cfdaf365e4c7298126893142d0b",
		hexDecoded: "bdbe18afae1c510a0d344d56e7265bc0e008ff7279616196e8e84b908eb85b8c",
	},
}

func headerWith(ts, sig string) http.Header {
	h := http.Header{}
	h.Set(webhooks.HeaderTimestamp, ts)
	h.Set(webhooks.HeaderSignature, sig)
	return h
}

func TestVerifyKnownAnswers(t *testing.T) {
	v := newVerifier(t)
	for _, ka := range knownAnswers {
		t.Run(ka.name, func(t *testing.T) {
			body := ka.body(t)
			// The test's own HMAC agrees with openssl, so it can serve as
			// the oracle in the other tests.
			require.Equal(t, "sha256="+ka.utf8Key, hmacSignature(testSecret, testTimestamp, body))

			require.NoError(t, v.Verify(headerWith(testTimestamp, "sha256="+ka.utf8Key), body))

			err := v.Verify(headerWith(testTimestamp, "sha256="+ka.hexDecoded), body)
			require.ErrorIs(t, err, webhooks.ErrSignatureMismatch, "a signature made with the hex-decoded secret must not verify")
		})
	}
}

func TestVerifyAcceptsUpperCaseHex(t *testing.T) {
	v := newVerifier(t)
	sig := "sha256=" + strings.ToUpper(knownAnswers[0].utf8Key)
	require.NoError(t, v.Verify(headerWith(testTimestamp, sig), []byte(inlineBody)))
}

func TestVerifyEveryFixture(t *testing.T) {
	v := newVerifier(t)
	decodedKey, err := hex.DecodeString(testSecret)
	require.NoError(t, err)
	for name, eventType := range fixtures {
		body := fixture(t, name)
		require.NoError(t, v.Verify(signedHeader(testSecret, testTimestamp, eventType, body), body), name)

		// The same body signed with the hex-decoded secret is refused.
		mac := hmac.New(sha256.New, decodedKey)
		mac.Write([]byte(testTimestamp + "."))
		mac.Write(body)
		err := v.Verify(headerWith(testTimestamp, "sha256="+hex.EncodeToString(mac.Sum(nil))), body)
		require.ErrorIs(t, err, webhooks.ErrSignatureMismatch, name)
	}
}

func TestVerifyTamperedBody(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "payment.received.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventPaymentReceived, body)
	require.NoError(t, v.Verify(header, body))

	tampered := map[string][]byte{
		"amount changed":       bytes.Replace(body, []byte(`"500.00"`), []byte(`"900.00"`), 1),
		"trailing newline":     append(bytes.Clone(body), '\n'),
		"leading space":        append([]byte{' '}, body...),
		"last byte dropped":    body[:len(body)-1],
		"empty":                {},
		"other fixture":        fixture(t, "invoice.paid.json"),
		"one bit flipped":      flipBit(body, len(body)/2),
		"first byte bit flip":  flipBit(body, 0),
		"field order swapped":  swapFirstTwoFields(t, body),
		"unicode escape equal": bytes.Replace(body, []byte(`"bank_transfer"`), []byte(`"bank\u005ftransfer"`), 1),
	}
	for name, b := range tampered {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, body, b, "the tampered body must differ")
			require.ErrorIs(t, v.Verify(header, b), webhooks.ErrSignatureMismatch)
		})
	}
}

func flipBit(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

// swapFirstTwoFields rewrites a compact JSON object with its first two fields
// swapped: the same JSON value, different bytes.
func swapFirstTwoFields(t testing.TB, body []byte) []byte {
	var fields [][]byte
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	_, err := dec.ReadToken() // {
	require.NoError(t, err)
	for dec.PeekKind() == '"' {
		k, err := dec.ReadValue()
		require.NoError(t, err)
		field := append(k.Clone(), ": "...)
		v, err := dec.ReadValue()
		require.NoError(t, err)
		fields = append(fields, append(field, v...))
	}
	fields[0], fields[1] = fields[1], fields[0]
	return append(append([]byte("{"), bytes.Join(fields, []byte(", "))...), '}')
}

func TestVerifyWrongSecret(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "invoice.created.json")
	for _, secret := range []string{
		"048dc250456cf874a398a6eb149d1ba97a83a8037aceca937f2955a4354c900b", // first digit changed
		strings.ToUpper(testSecret),                                        // the same hex, other case: other bytes
		testSecret[:63],
		testSecret + "\n",
	} {
		header := signedHeader(secret, testTimestamp, webhooks.EventInvoiceCreated, body)
		require.ErrorIs(t, v.Verify(header, body), webhooks.ErrSignatureMismatch)
	}
}

func TestVerifyRejectsReserialisedBody(t *testing.T) {
	v := newVerifier(t)
	for _, name := range []string{"quote.accepted.json", "payment.received.json", "test.json"} {
		body := fixture(t, name)
		eventType := fixtures[name]
		header := signedHeader(testSecret, testTimestamp, eventType, body)

		var generic map[string]any
		require.NoError(t, json.Unmarshal(body, &generic))
		viaMap, err := json.Marshal(generic)
		require.NoError(t, err)

		event, err := webhooks.Parse(eventType, body)
		require.NoError(t, err)
		viaStruct, err := json.Marshal(event)
		require.NoError(t, err)

		for _, re := range [][]byte{viaMap, viaStruct} {
			require.NotEqual(t, body, re)
			require.ErrorIs(t, v.Verify(header, re), webhooks.ErrSignatureMismatch, name)
		}
	}
}

func TestVerifyTolerance(t *testing.T) {
	body := fixture(t, "invoice.sent.json")
	signedAt := func(offset time.Duration) http.Header {
		ts := strconv.FormatInt(testNow.Add(offset).Unix(), 10)
		return signedHeader(testSecret, ts, webhooks.EventInvoiceSent, body)
	}
	tests := []struct {
		name   string
		offset time.Duration // signing time relative to the clock
		opts   []webhooks.Option
		ok     bool
	}{
		{"now", 0, nil, true},
		{"five minutes old", -5 * time.Minute, nil, true},
		{"five minutes ahead", 5 * time.Minute, nil, true},
		{"stale by a second", -5*time.Minute - time.Second, nil, false},
		{"future by a second", 5*time.Minute + time.Second, nil, false},
		{"a day old", -24 * time.Hour, nil, false},
		{"custom tolerance, inside", -29 * time.Second, []webhooks.Option{webhooks.WithTolerance(30 * time.Second)}, true},
		{"custom tolerance, stale", -31 * time.Second, []webhooks.Option{webhooks.WithTolerance(30 * time.Second)}, false},
		{"custom tolerance, future", 31 * time.Second, []webhooks.Option{webhooks.WithTolerance(30 * time.Second)}, false},
		{"check off, a year old", -365 * 24 * time.Hour, []webhooks.Option{webhooks.WithoutTimestampCheck()}, true},
		{"check off, a year ahead", 365 * 24 * time.Hour, []webhooks.Option{webhooks.WithoutTimestampCheck()}, true},
		{"check off then on again", -time.Hour, []webhooks.Option{webhooks.WithoutTimestampCheck(), webhooks.WithTolerance(time.Minute)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newVerifier(t, tt.opts...).Verify(signedAt(tt.offset), body)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, webhooks.ErrTimestampOutOfTolerance)
			}
		})
	}
}

func TestVerifyUsesTheClock(t *testing.T) {
	now := testNow
	v, err := webhooks.NewVerifier(testSecret, webhooks.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	body := fixture(t, "test.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventTest, body)
	require.NoError(t, v.Verify(header, body))
	now = now.Add(6 * time.Minute)
	require.ErrorIs(t, v.Verify(header, body), webhooks.ErrTimestampOutOfTolerance)
}

func TestVerifyDefaultClockRejectsOldTimestamps(t *testing.T) {
	v, err := webhooks.NewVerifier(testSecret)
	require.NoError(t, err)
	body := fixture(t, "test.json")
	old := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	require.ErrorIs(t, v.Verify(signedHeader(testSecret, old, webhooks.EventTest, body), body), webhooks.ErrTimestampOutOfTolerance)
	fresh := strconv.FormatInt(time.Now().Unix(), 10)
	require.NoError(t, v.Verify(signedHeader(testSecret, fresh, webhooks.EventTest, body), body))
}

func TestVerifyToleranceIsCheckedAfterTheSignature(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "test.json")
	stale := strconv.FormatInt(testNow.Add(-time.Hour).Unix(), 10)
	header := signedHeader("some other secret", stale, webhooks.EventTest, body)
	require.ErrorIs(t, v.Verify(header, body), webhooks.ErrSignatureMismatch)
}

func TestVerifyMissingHeaders(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "invoice.created.json")
	for _, name := range []string{webhooks.HeaderSignature, webhooks.HeaderTimestamp} {
		for _, value := range []string{"absent", ""} {
			header := signedHeader(testSecret, testTimestamp, webhooks.EventInvoiceCreated, body)
			if value == "absent" {
				header.Del(name)
			} else {
				header.Set(name, value)
			}
			err := v.Verify(header, body)
			require.ErrorIs(t, err, webhooks.ErrMissingHeader, name)
			require.ErrorContains(t, err, name)
		}
	}
	require.ErrorIs(t, v.Verify(nil, body), webhooks.ErrMissingHeader)
}

func TestVerifyMalformedSignature(t *testing.T) {
	v := newVerifier(t)
	body := []byte(inlineBody)
	good := knownAnswers[0].utf8Key
	for _, sig := range []string{
		good,                         // no prefix
		"sha1=" + good,               // other algorithm
		"SHA256=" + good,             // prefix is lower case
		"sha256:" + good,             // other separator
		"sha256=" + good[:63],        // short
		"sha256=" + good + "0",       // long
		"sha256=" + good[:62] + "zz", // not hex
		"sha256= " + good[1:],        // space
		"t=1772702061,v1=" + good,    // two values, neither well formed
		"sha256=" + good + ";sha256=" + good,
	} {
		err := v.Verify(headerWith(testTimestamp, sig), body)
		require.ErrorIs(t, err, webhooks.ErrMalformedSignature, sig)
	}
}

func TestVerifyMalformedTimestamp(t *testing.T) {
	v := newVerifier(t, webhooks.WithoutTimestampCheck())
	body := []byte(inlineBody)
	for _, ts := range []string{
		"abc", "-1772702061", "+1772702061", "1772702061.5", "1772702061 ", " 1772702061",
		"1.772702061e9", "0x69a94a2d", "1772702061\x00", "99999999999999999999", "253402300800",
		"2026-03-05T09:14:21Z",
	} {
		// Signed with the malformed value, so only the format is at fault.
		err := v.Verify(headerWith(ts, hmacSignature(testSecret, ts, body)), body)
		require.ErrorIs(t, err, webhooks.ErrMalformedTimestamp, "%q", ts)
	}
	// Leading zeros and the last second of year 9999 are well formed.
	for _, ts := range []string{"01772702061", "0", "253402300799"} {
		require.NoError(t, v.Verify(headerWith(ts, hmacSignature(testSecret, ts, body)), body), ts)
	}
}

func TestVerifyBodyLimit(t *testing.T) {
	v := newVerifier(t, webhooks.WithMaxBodyBytes(64))
	body := bytes.Repeat([]byte("a"), 64)
	require.NoError(t, v.Verify(headerWith(testTimestamp, hmacSignature(testSecret, testTimestamp, body)), body))
	body = append(body, 'a')
	err := v.Verify(headerWith(testTimestamp, hmacSignature(testSecret, testTimestamp, body)), body)
	require.ErrorIs(t, err, webhooks.ErrBodyTooLarge)

	def := newVerifier(t)
	big := bytes.Repeat([]byte(" "), webhooks.DefaultMaxBodyBytes+1)
	require.ErrorIs(t, def.Verify(headerWith(testTimestamp, hmacSignature(testSecret, testTimestamp, big)), big), webhooks.ErrBodyTooLarge)
}

// headerLines returns timestamp and signature headers with one signature
// header line per sig.
func headerLines(ts string, sigs ...string) http.Header {
	return http.Header{webhooks.HeaderTimestamp: {ts}, webhooks.HeaderSignature: sigs}
}

func TestVerifySeveralSignatures(t *testing.T) {
	const oldSecret = "9c0b2f6e1d8a4735b6c2e9f01a3d5b7c8e4f6a2b0d1c3e5f7a9b8c6d4e2f0a1b"
	body := []byte(inlineBody)
	good := hmacSignature(testSecret, testTimestamp, body)
	old := hmacSignature(oldSecret, testTimestamp, body)
	wrong := hmacSignature("another secret", testTimestamp, body)
	const malformed = "sha256=not-hex"
	v := newVerifier(t)
	rotating := newVerifier(t, webhooks.WithSecrets(oldSecret))
	eight := func(last string) []string {
		return append(slices.Repeat([]string{wrong}, 7), last)
	}

	tests := []struct {
		name  string
		v     *webhooks.Verifier
		lines []string
		want  error // nil: accepted
	}{
		{"good then wrong", v, []string{good, wrong}, nil},
		{"wrong then good", v, []string{wrong, good}, nil},
		{"malformed then good", v, []string{malformed, good}, nil},
		{"good then malformed", v, []string{good, malformed}, nil},
		{"empty line then good", v, []string{"", good}, nil},
		{"good in a comma-joined line", v, []string{wrong + ", " + good}, nil},
		{"good among empty values", v, []string{" ,," + good + ", "}, nil},
		{"the old secret's signature second", rotating, []string{wrong, old}, nil},
		{"good eighth", v, eight(good), nil},
		{"good ninth is ignored", v, append(eight(wrong), good), webhooks.ErrSignatureMismatch},
		{"good ninth after eight malformed", v, append(slices.Repeat([]string{malformed}, 8), good), webhooks.ErrMalformedSignature},
		{"good ninth in a joined line", v, []string{strings.Repeat(wrong+",", 8) + good}, webhooks.ErrSignatureMismatch},
		{"good after empty values is not ninth", v, append(slices.Repeat([]string{"", " , "}, 20), eight(good)...), nil},
		{"the old secret's signature to a verifier without it", v, []string{wrong, old}, webhooks.ErrSignatureMismatch},
		{"all wrong", v, []string{wrong, old}, webhooks.ErrSignatureMismatch},
		{"wrong and malformed", v, []string{malformed, wrong, malformed}, webhooks.ErrSignatureMismatch},
		{"all malformed", v, []string{malformed, "sha1=00", good[7:]}, webhooks.ErrMalformedSignature},
		{"all empty", v, []string{"", " ", " , "}, webhooks.ErrMissingHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Verify(headerLines(testTimestamp, tt.lines...), body)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestVerifyRotation(t *testing.T) {
	const oldSecret = "9c0b2f6e1d8a4735b6c2e9f01a3d5b7c8e4f6a2b0d1c3e5f7a9b8c6d4e2f0a1b"
	v := newVerifier(t, webhooks.WithSecrets(oldSecret))
	body := fixture(t, "quote.sent.json")
	for _, secret := range []string{testSecret, oldSecret} {
		require.NoError(t, v.Verify(signedHeader(secret, testTimestamp, webhooks.EventQuoteSent, body), body))
	}
	other := "1" + oldSecret[1:]
	require.ErrorIs(t, v.Verify(signedHeader(other, testTimestamp, webhooks.EventQuoteSent, body), body), webhooks.ErrSignatureMismatch)
}

func TestNewVerifierRefusesBadConfiguration(t *testing.T) {
	_, err := webhooks.NewVerifier("")
	require.ErrorIs(t, err, webhooks.ErrEmptySecret)
	_, err = webhooks.NewVerifier(testSecret, webhooks.WithSecrets("other", ""))
	require.ErrorIs(t, err, webhooks.ErrEmptySecret)
	for _, blank := range []string{" ", "\t", "\n", " \r\n ", "\u00a0", "\u3000"} {
		v, err := webhooks.NewVerifier(blank)
		require.ErrorIs(t, err, webhooks.ErrEmptySecret, "%q", blank)
		require.Nil(t, v)
		_, err = webhooks.NewVerifier(testSecret, webhooks.WithSecrets(blank))
		require.ErrorIs(t, err, webhooks.ErrEmptySecret, "%q", blank)
	}
	// A secret with white space around it is used as given, spaces included.
	v, err := webhooks.NewVerifier(" "+testSecret+"\n", webhooks.WithoutTimestampCheck())
	require.NoError(t, err)
	body := []byte(inlineBody)
	require.NoError(t, v.Verify(headerWith(testTimestamp, hmacSignature(" "+testSecret+"\n", testTimestamp, body)), body))
	require.ErrorIs(t, v.Verify(headerWith(testTimestamp, hmacSignature(testSecret, testTimestamp, body)), body), webhooks.ErrSignatureMismatch)

	for name, opt := range map[string]webhooks.Option{
		"zero tolerance":     webhooks.WithTolerance(0),
		"negative tolerance": webhooks.WithTolerance(-time.Minute),
		"nil clock":          webhooks.WithClock(nil),
		"zero body limit":    webhooks.WithMaxBodyBytes(0),
		"negative limit":     webhooks.WithMaxBodyBytes(-1),
		"empty prefix":       webhooks.WithHeaderPrefix(""),
	} {
		v, err := webhooks.NewVerifier(testSecret, opt)
		require.ErrorIs(t, err, webhooks.ErrInvalidOption, name)
		require.Nil(t, v)
	}
}

func TestZeroVerifierRefusesEverything(t *testing.T) {
	var v webhooks.Verifier
	body := []byte(inlineBody)
	require.ErrorIs(t, v.Verify(headerWith(testTimestamp, hmacSignature("", testTimestamp, body)), body), webhooks.ErrEmptySecret)
}

func TestHeaderPrefix(t *testing.T) {
	v := newVerifier(t, webhooks.WithHeaderPrefix("x-acme-"))
	body := fixture(t, "test.json")
	sig := hmacSignature(testSecret, testTimestamp, body)

	acme := http.Header{}
	acme.Set("X-Acme-Timestamp", testTimestamp)
	acme.Set("X-Acme-Signature", sig)
	acme.Set("X-Acme-Event", "test")
	acme.Set("X-Acme-Delivery", "d-1")
	d, err := v.ParseDelivery(acme, body)
	require.NoError(t, err)
	require.Equal(t, "d-1", d.ID)
	require.Equal(t, webhooks.EventTest, d.Type)

	// The default headers are not looked at.
	err = v.Verify(signedHeader(testSecret, testTimestamp, webhooks.EventTest, body), body)
	require.ErrorIs(t, err, webhooks.ErrMissingHeader)
	require.ErrorContains(t, err, "X-Acme-Signature")
}

func TestSecretNeverPrinted(t *testing.T) {
	v := newVerifier(t, webhooks.WithSecrets("second-secret-value"))
	for _, s := range []string{
		fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), fmt.Sprintf("%+v", *v),
	} {
		assert.NotContains(t, s, testSecret)
		assert.NotContains(t, s, "second-secret-value")
		assert.NotContains(t, s, fmt.Sprint([]byte(testSecret)))
	}
	// Nor in an error.
	body := []byte(inlineBody)
	header := signedHeader("wrong", testTimestamp, webhooks.EventPaymentReceived, body)
	err := v.Verify(header, body)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), testSecret)
}

func TestHeaderNames(t *testing.T) {
	// API.md section 6.2 spells these out.
	assert.Equal(t, "X-Service-Event", webhooks.HeaderEvent)
	assert.Equal(t, "X-Service-Delivery", webhooks.HeaderDelivery)
	assert.Equal(t, "X-Service-Timestamp", webhooks.HeaderTimestamp)
	assert.Equal(t, "X-Service-Signature", webhooks.HeaderSignature)
	for _, name := range []string{webhooks.HeaderEvent, webhooks.HeaderDelivery, webhooks.HeaderTimestamp, webhooks.HeaderSignature} {
		assert.Equal(t, http.CanonicalHeaderKey(name), name, "constants must be canonical for http.Header lookups")
	}
}

// TestVerifyAllocatesNothing: Verify reuses its HMAC states (one sync.Pool
// per secret), so checking a delivery allocates nothing.
func TestVerifyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	v := newVerifier(t, webhooks.WithSecrets("second-secret-value"))
	body := fixture(t, "quote.accepted.json")
	header := signedHeader(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
	allocs := testing.AllocsPerRun(100, func() {
		if err := v.Verify(header, body); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestSignMatchesKnownAnswers(t *testing.T) {
	for _, ka := range knownAnswers {
		ts, sig := webhooks.Sign(testSecret, testNow.Add(999*time.Millisecond), ka.body(t))
		assert.Equal(t, testTimestamp, ts, "truncated to whole seconds")
		assert.Equal(t, "sha256="+ka.utf8Key, sig, ka.name)
	}
}

func TestSignedDeliveryVerifies(t *testing.T) {
	v := newVerifier(t)
	body := fixture(t, "quote.viewed.json")
	ts, sig := webhooks.Sign(testSecret, testNow, body)
	h := http.Header{}
	h.Set(webhooks.HeaderTimestamp, ts)
	h.Set(webhooks.HeaderSignature, sig)
	h.Set(webhooks.HeaderEvent, string(webhooks.EventQuoteViewed))
	h.Set(webhooks.HeaderDelivery, "d-1")
	d, err := v.ParseDelivery(h, body)
	require.NoError(t, err)
	assertSameEvent(t, expectedEvents["quote.viewed.json"], d.Event)

	_, other := webhooks.Sign("another secret", testNow, body)
	h.Set(webhooks.HeaderSignature, other)
	require.ErrorIs(t, v.Verify(h, body), webhooks.ErrSignatureMismatch)
}
