package webhooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
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
	for _, name := range fixtureNames(f) {
		body := fixture(f, name)
		f.Add(string(fixtures[name]), body)
		f.Add("credit_note.created", body)
	}
	f.Add("quote.accepted", []byte(`{"line_items": [{"quantity": 1e400}], "invoice_id": null}`))
	f.Add("test", []byte(`{"timestamp": "2026-03-01T10:00:00+14:00"}`))
	f.Add("invoice.created", []byte(` {"total": "-0.000"}`))
	f.Add("invoice.paid", []byte(`{"invoice_id": "i", "paid_at": "2026-03-20T23:05:44.5+11:00"}`))
	f.Add("bill.created", []byte(`{"bill_id": "", "created_at": "2026-03-20T23:05:44Z"}`))
	f.Add("quote.viewed", []byte(`{"quote_id": "q", "viewed_at": null}`))
	f.Add("\xb2", []byte(`{"a": 1}`))
	f.Add("credit_note.created", []byte(`{"a": "\ud800", "b": ["\xff"]}`))

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
		// and with encoding/json (v1), which calls its MarshalJSON, and
		// marshals back to its body.
		if raw, ok := e.(*webhooks.RawEvent); ok {
			checkRawEventMarshalsBack(t, body, raw)
			return
		}
		checkMarshalsBack(t, e.EventType(), body, e)
	})
}

// checkRawEventMarshalsBack checks that the RawEvent e of body marshals,
// with either API, to its Type and its body (a name given twice needs
// jsontext.AllowDuplicateNames for encoding/json/v2), in valid UTF-8, and
// unmarshals back to the same.
func checkRawEventMarshalsBack(t *testing.T, body []byte, e *webhooks.RawEvent) {
	t.Helper()
	twice := hasDuplicateNames(body)
	v1, err := json.Marshal(e)
	require.NoError(t, err)
	v2, err := jsonv2.Marshal(e)
	if twice {
		require.ErrorIs(t, err, jsontext.ErrDuplicateName)
		v2, err = jsonv2.Marshal(e, jsontext.AllowDuplicateNames(true))
	}
	require.NoError(t, err)
	require.True(t, validJSON(v1) && validJSON(v2), "%q", v2)
	require.Equal(t, decodeAny(t, v2), decodeAny(t, v1))
	typ, err := json.Marshal(string(e.Type)) // invalid UTF-8 as U+FFFD
	require.NoError(t, err)
	require.Equal(t, map[string]any{"Type": decodeAny(t, typ), "Body": decodeAny(t, body)}, decodeAny(t, v2))
	var again webhooks.RawEvent
	require.NoError(t, json.Unmarshal(v1, &again))
	require.Equal(t, decodeAny(t, typ), string(again.Type))
	require.Equal(t, decodeAny(t, body), decodeAny(t, again.Body))
}

// FuzzParseAsEveryType parses each body as every known event type and
// checks every event Parse gives with checkMarshalsBack: it marshals back
// to its body with either API, stably, and its fields hold the body's
// values. (It replaces a comparison with encoding/json (v1) decoding into
// copies of the event structs: the properties need no copy.)
func FuzzParseAsEveryType(f *testing.F) {
	for _, name := range fixtureNames(f) {
		body := fixture(f, name)
		f.Add(body)
		f.Add(withUnknownMembers(body))
	}
	const at = `"2026-03-05T09:14:21Z"`
	f.Add([]byte(`{"invoice_id": "i", "Invoice_ID": "j", "created_at": ` + at + `, "total": 12.50}`))
	f.Add([]byte(`{"invoice_id": "i", "invoice_id": null, "paid_at": "2026-03-05T09:14:21+11:00", "amount_paid": "-0.000"}`))
	f.Add([]byte(`{"quote_id": "q", "viewed_at": "2026-03-05T09:14:21.5Z", "viewer": {"contact_name": "a"}, "viewer": null, "view_count": 0}`))
	f.Add([]byte(`{"quote_id": "q", "accepted_at": ` + at + `, "line_items": [{"id": "a"}], "line_items": [{"title": "b"}]}`))
	f.Add([]byte(`{"quote_id": "q", "accepted_at": ` + at + `, "interactive_selections": {"a": null, "b/~": [ 1 ]}, "previous_acceptance": null}`))
	f.Add([]byte(`{"quote_id": "q", "sent_at": ` + at + `, "line_items": [null, {}], "issue_date": "", "total": 1e2, "client_address": null}`))
	f.Add([]byte(`{"payment_id": "p", "received_at": "2026-03-05T09:14:21.000+00:00", "invoice_id": null, "amount": 0.10, "reference": null, "x": {"y": [1, 2]}}`))
	f.Add([]byte("{\"a\": {\"b\": 1, \"b\": \"\xff\"}, \"event\": \"e\", \"event\": null}"))
	f.Add([]byte("{\"event\": \"t\\u00e9st\xff\", \"timestamp\": \"2026-03-05T9:14:21,5+24:00\", \"message\": \"\\ud800\"}"))

	f.Fuzz(func(t *testing.T, body []byte) {
		for _, eventType := range knownEventTypes {
			e, err := webhooks.Parse(eventType, body)
			if err != nil {
				require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
				continue
			}
			checkMarshalsBack(t, eventType, body, e)
		}
	})
}
