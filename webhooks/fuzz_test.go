package webhooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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

// sigValues is the test's statement of which signature values Verify looks
// at: the first eight non-empty ones, across lines and comma-separated
// values, trimmed of spaces and tabs.
func sigValues(lines ...string) []string {
	var values []string
	for _, line := range lines {
		for _, v := range strings.Split(line, ",") {
			if v = strings.Trim(v, " \t"); v != "" && len(values) < 8 {
				values = append(values, v)
			}
		}
	}
	return values
}

// matchesAny reports whether one of values is good, the hex digits in any
// case.
func matchesAny(values []string, good string) bool {
	return slices.ContainsFunc(values, func(v string) bool {
		return len(v) == len(good) && strings.HasPrefix(v, "sha256=") && strings.EqualFold(v, good)
	})
}

func FuzzVerify(f *testing.F) {
	for _, ka := range knownAnswers {
		body := ka.body(f)
		f.Add(testSecret, testTimestamp, "sha256="+ka.utf8Key, "", body)
		f.Add(testSecret, testTimestamp, "sha256="+ka.hexDecoded, "sha256="+ka.utf8Key, body)
		f.Add(testSecret, testTimestamp, "sha256="+ka.hexDecoded+", sha256="+ka.utf8Key, "sha1=00", body)
	}
	f.Add(testSecret, "", "", "", []byte{})
	f.Add("s", "-1", "sha256=", ",,", []byte("{}"))
	f.Add("", "1772702061", "sha1=00", "", []byte("{}"))
	f.Add(" \t", "1772702061", "a,b,c,d,e,f,g", "h", []byte("{}"))
	f.Add("秘密", "253402300800", "SHA256="+strings.Repeat("A", 64), " ", []byte("\xff"))

	f.Fuzz(func(t *testing.T, secret, ts, sig, other string, body []byte) {
		v, err := webhooks.NewVerifier(secret, webhooks.WithoutTimestampCheck())
		if strings.TrimSpace(secret) == "" {
			require.ErrorIs(t, err, webhooks.ErrEmptySecret)
			require.Nil(t, v)
			return
		}
		require.NoError(t, err)
		good := hmacSignature(secret, ts, body)

		// Whatever the headers, Verify accepts only the true signature.
		for _, lines := range [][]string{{sig}, {sig, other}} {
			err = v.Verify(headerLines(ts, lines...), body)
			if err == nil {
				require.True(t, matchesAny(sigValues(lines...), good), "accepted %q for %q", lines, good)
			} else {
				require.True(t, isOneOf(err, verifyErrors), "unexpected error %v", err)
			}
		}

		// The true signature, alone or among others, verifies exactly when
		// it is among the values looked at and the timestamp is well formed.
		for _, lines := range [][]string{
			{good},
			{good, sig, other},
			{sig, good},
			{sig, other, good},
			{sig + "," + good},
			append(slices.Repeat([]string{sig}, 8), good),
		} {
			err = v.Verify(headerLines(ts, lines...), body)
			switch {
			case ts == "":
				require.ErrorIs(t, err, webhooks.ErrMissingHeader)
			case !matchesAny(sigValues(lines...), good):
				require.True(t, isOneOf(err, verifyErrors), "accepted %q, the true signature not among the first eight", lines)
			case !timestampOK(ts):
				require.ErrorIs(t, err, webhooks.ErrMalformedTimestamp, "%q", ts)
			default:
				require.NoError(t, err, "%q", lines)
			}
		}
		if ts == "" || !timestampOK(ts) {
			return
		}
		// Any change to the body breaks the true signature.
		if len(body) > 0 {
			tampered := bytes.Clone(body)
			tampered[len(tampered)/2] ^= 0x20
			require.ErrorIs(t, v.Verify(headerWith(ts, good), tampered), webhooks.ErrSignatureMismatch)
		}
		require.ErrorIs(t, v.Verify(headerWith(ts, good), append(bytes.Clone(body), ' ')), webhooks.ErrSignatureMismatch)
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
	f.Add("invoice.paid", []byte(`{"invoice_id": "i", "paid_at": "2026-03-20T23:05:44.5+11:00"}`))
	f.Add("bill.created", []byte(`{"bill_id": "", "created_at": "2026-03-20T23:05:44Z"}`))
	f.Add("quote.viewed", []byte(`{"quote_id": "q", "viewed_at": null}`))

	f.Fuzz(func(t *testing.T, eventType string, body []byte) {
		original := bytes.Clone(body)
		e, err := webhooks.Parse(webhooks.EventType(eventType), body)
		require.Equal(t, original, body, "Parse must not modify the body")
		if err != nil {
			require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
			require.Nil(t, e)
			return
		}
		require.True(t, jsontext.Value(body).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
			"accepted invalid JSON")
		require.Equal(t, webhooks.EventType(eventType), e.EventType())
		key := (&webhooks.Delivery{Type: e.EventType(), Event: e}).EventKey()
		switch e := e.(type) {
		case *webhooks.RawEvent:
			require.False(t, webhooks.EventType(eventType).Known())
			require.Equal(t, body, []byte(e.Body))
			require.Empty(t, key)
		case *webhooks.Test:
			require.Empty(t, key)
		default:
			require.True(t, webhooks.EventType(eventType).Known())
			// Every other known event has its id and time, hence a key:
			// "<type>/<id>/<time>", where the id may hold slashes too.
			rest, ok := strings.CutPrefix(key, eventType+"/")
			require.True(t, ok, "key %q", key)
			require.Greater(t, strings.LastIndexByte(rest, '/'), 0, "key %q has no id", key)
			require.False(t, strings.HasSuffix(key, "/0001-01-01T00:00:00Z"), "key %q", key)
		}
		// A parsed event can be stored again as JSON, with encoding/json/v2
		// and with encoding/json (v1), which calls its MarshalJSON: the same
		// JSON, though v1 also escapes <, > and & in strings.
		b, err := jsonv2.Marshal(e)
		require.NoError(t, err)
		b1, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, decodeAny(t, b), decodeAny(t, b1))
	})
}
