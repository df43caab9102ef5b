package webhooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

var wellFormedTimestamp = regexp.MustCompile(`^[0-9]{1,20}$`)

// timestampOK is the test's own statement of which timestamp headers are
// well formed: decimal digits naming a second up to 9999-12-31T23:59:59Z.
func timestampOK(ts string) bool {
	if !wellFormedTimestamp.MatchString(ts) {
		return false
	}
	n, err := strconv.ParseUint(ts, 10, 64)
	return err == nil && n <= 253402300799
}

var verifyErrors = []error{
	webhooks.ErrMissingHeader, webhooks.ErrMalformedSignature, webhooks.ErrMalformedTimestamp,
	webhooks.ErrSignatureMismatch, webhooks.ErrTimestampOutOfTolerance, webhooks.ErrBodyTooLarge,
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func FuzzVerify(f *testing.F) {
	for _, ka := range knownAnswers {
		body := ka.body(f)
		f.Add(testSecret, testTimestamp, "sha256="+ka.utf8Key, body)
		f.Add(testSecret, testTimestamp, "sha256="+ka.hexDecoded, body)
	}
	f.Add(testSecret, "", "", []byte{})
	f.Add("s", "-1", "sha256=", []byte("{}"))
	f.Add("", "1772702061", "sha1=00", []byte("{}"))
	f.Add("秘密", "253402300800", "SHA256="+strings.Repeat("A", 64), []byte("\xff"))

	f.Fuzz(func(t *testing.T, secret, ts, sig string, body []byte) {
		v, err := webhooks.NewVerifier(secret, webhooks.WithoutTimestampCheck())
		if secret == "" {
			require.ErrorIs(t, err, webhooks.ErrEmptySecret)
			return
		}
		require.NoError(t, err)
		good := hmacSignature(secret, ts, body)

		// Whatever the headers, Verify accepts only the true signature.
		err = v.Verify(headerWith(ts, sig), body)
		if err == nil {
			require.True(t, strings.EqualFold(sig, good), "accepted %q for %q", sig, good)
		} else {
			require.True(t, isOneOf(err, verifyErrors), "unexpected error %v", err)
		}

		// The true signature verifies exactly when the timestamp is well
		// formed.
		err = v.Verify(headerWith(ts, good), body)
		switch {
		case ts == "":
			require.ErrorIs(t, err, webhooks.ErrMissingHeader)
		case !timestampOK(ts):
			require.ErrorIs(t, err, webhooks.ErrMalformedTimestamp, "%q", ts)
		default:
			require.NoError(t, err)
			// And any change to the body breaks it.
			if len(body) > 0 {
				tampered := bytes.Clone(body)
				tampered[len(tampered)/2] ^= 0x20
				require.ErrorIs(t, v.Verify(headerWith(ts, good), tampered), webhooks.ErrSignatureMismatch)
			}
			require.ErrorIs(t, v.Verify(headerWith(ts, good), append(bytes.Clone(body), ' ')), webhooks.ErrSignatureMismatch)
		}
	})
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(string(fixtures[filepath.Base(file)]), body)
		f.Add("credit_note.created", body)
	}
	f.Add("quote.accepted", []byte(`{"line_items": [{"quantity": 1e400}], "invoice_id": null}`))
	f.Add("test", []byte(`{"timestamp": "2026-03-01T10:00:00+14:00"}`))
	f.Add("invoice.created", []byte(` {"total": "-0.000"}`))

	f.Fuzz(func(t *testing.T, eventType string, body []byte) {
		original := bytes.Clone(body)
		e, err := webhooks.Parse(webhooks.EventType(eventType), body)
		require.Equal(t, original, body, "Parse must not modify the body")
		if err != nil {
			require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
			require.Nil(t, e)
			return
		}
		require.True(t, json.Valid(body), "accepted invalid JSON")
		require.Equal(t, webhooks.EventType(eventType), e.EventType())
		if raw, ok := e.(*webhooks.RawEvent); ok {
			require.False(t, webhooks.EventType(eventType).Known())
			require.Equal(t, body, []byte(raw.Body))
		} else {
			require.True(t, webhooks.EventType(eventType).Known())
		}
		// A parsed event can be stored again as JSON.
		_, err = json.Marshal(e)
		require.NoError(t, err)
	})
}
