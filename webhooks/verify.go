package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTolerance is how far, in either direction, a delivery's timestamp
// may be from the Verifier's clock unless WithTolerance or
// WithoutTimestampCheck says otherwise. The API documentation suggests five
// minutes.
const DefaultTolerance = 5 * time.Minute

// DefaultMaxBodyBytes is the largest body, in bytes, a Verifier accepts
// unless WithMaxBodyBytes says otherwise (1 MiB).
const DefaultMaxBodyBytes = 1 << 20

// maxUnixSeconds is 9999-12-31T23:59:59Z, the last second a timestamp may
// name; it keeps every later time computation far from overflow.
const maxUnixSeconds = 253402300799

// maxSignatures is how many signature values Verify looks at, at most: the
// first ones, across header lines and comma-separated values. It bounds the
// work a request with thousands of signature lines can cause.
const maxSignatures = 8

// A Verifier checks that deliveries were signed with the webhook's secret and
// are recent. Create it with NewVerifier; it is safe for concurrent use. The
// zero Verifier has no secret and refuses every delivery.
type Verifier struct {
	// macs holds one pool of *macState per secret. The secrets live only
	// inside the pools' New closures and the pooled states, which printing
	// a Verifier (%v, %#v, slog) does not reach.
	macs           []*sync.Pool
	checkTimestamp bool
	tolerance      time.Duration
	now            func() time.Time
	maxBody        int64
	headers        headerNames
}

// An Option configures a Verifier built by NewVerifier.
type Option func(*config)

type config struct {
	secrets        []string
	checkTimestamp bool
	tolerance      time.Duration
	now            func() time.Time
	maxBody        int64
	prefix         string
}

// WithSecrets makes the Verifier also accept signatures made with each of
// secrets, so a receiver can be given a new secret before the old one is
// rotated out (the service invalidates the old secret at once on rotation).
// A secret that is empty or only white space makes NewVerifier fail with
// ErrEmptySecret.
func WithSecrets(secrets ...string) Option {
	return func(c *config) { c.secrets = append(c.secrets, secrets...) }
}

// WithTolerance sets how far, in either direction, the timestamp header may be
// from the clock (DefaultTolerance when not given). d must be positive, or
// NewVerifier fails with ErrInvalidOption; use WithoutTimestampCheck to turn
// the check off.
func WithTolerance(d time.Duration) Option {
	return func(c *config) { c.checkTimestamp, c.tolerance = true, d }
}

// WithoutTimestampCheck turns off the tolerance check, for replaying stored
// deliveries or tests. The timestamp header is still required, must be well
// formed and is still covered by the signature.
func WithoutTimestampCheck() Option {
	return func(c *config) { c.checkTimestamp = false }
}

// WithClock sets the clock the tolerance is measured against (time.Now when
// not given). A nil clock makes NewVerifier fail with ErrInvalidOption.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithMaxBodyBytes sets the largest body, in bytes, that is read and verified
// (DefaultMaxBodyBytes when not given); longer bodies fail with
// ErrBodyTooLarge. n must be positive, or NewVerifier fails with
// ErrInvalidOption.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) { c.maxBody = n }
}

// WithHeaderPrefix sets the prefix of the four delivery headers, for
// deliveries whose headers name the product instead of the neutral
// DefaultHeaderPrefix ("X-Service-"). "X-Acme-" makes the Verifier read
// X-Acme-Event, X-Acme-Delivery, X-Acme-Timestamp and X-Acme-Signature.
// An empty prefix makes NewVerifier fail with ErrInvalidOption.
func WithHeaderPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// NewVerifier returns a Verifier for the webhook signing secret, used as the
// UTF-8 text it is shown as (never hex-decoded), exactly as given: surrounding
// white space is part of the key. It fails with ErrEmptySecret when secret, or
// one given to WithSecrets, is empty or only white space, and with
// ErrInvalidOption when an option's value is unusable.
func NewVerifier(secret string, opts ...Option) (*Verifier, error) {
	c := config{
		secrets:        []string{secret},
		checkTimestamp: true,
		tolerance:      DefaultTolerance,
		now:            time.Now,
		maxBody:        DefaultMaxBodyBytes,
		prefix:         DefaultHeaderPrefix,
	}
	for _, opt := range opts {
		opt(&c)
	}
	for i, s := range c.secrets {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%w (secret %d of %d)", ErrEmptySecret, i+1, len(c.secrets))
		}
	}
	switch {
	case c.checkTimestamp && c.tolerance <= 0:
		return nil, fmt.Errorf("%w: tolerance %v is not positive (use WithoutTimestampCheck to turn the check off)", ErrInvalidOption, c.tolerance)
	case c.now == nil:
		return nil, fmt.Errorf("%w: nil clock", ErrInvalidOption)
	case c.maxBody <= 0:
		return nil, fmt.Errorf("%w: body limit %d is not positive", ErrInvalidOption, c.maxBody)
	case c.prefix == "":
		return nil, fmt.Errorf("%w: empty header prefix", ErrInvalidOption)
	}
	v := &Verifier{
		checkTimestamp: c.checkTimestamp,
		tolerance:      c.tolerance,
		now:            c.now,
		maxBody:        c.maxBody,
		headers: headerNames{
			event:     textproto.CanonicalMIMEHeaderKey(c.prefix + "Event"),
			delivery:  textproto.CanonicalMIMEHeaderKey(c.prefix + "Delivery"),
			timestamp: textproto.CanonicalMIMEHeaderKey(c.prefix + "Timestamp"),
			signature: textproto.CanonicalMIMEHeaderKey(c.prefix + "Signature"),
		},
	}
	for _, s := range c.secrets {
		key := []byte(s)
		v.macs = append(v.macs, &sync.Pool{New: func() any { return &macState{mac: hmac.New(sha256.New, key)} }})
	}
	return v, nil
}

// Verify checks the signature and timestamp headers against body, which must
// be the request body exactly as received. It returns nil for an authentic
// delivery, or an error matching ErrNotVerified and one of ErrBodyTooLarge,
// ErrMissingHeader, ErrMalformedSignature, ErrMalformedTimestamp,
// ErrSignatureMismatch or ErrTimestampOutOfTolerance (checked only once the
// signature matched, so it means a genuine but stale or early delivery).
//
// The signature header may hold several signatures, on several lines or
// separated by commas (as a proxy may join repeated lines); the delivery is
// authentic when any of the first eight matches under any of the secrets.
// Signatures after the eighth are ignored, and so are empty values. When none
// matches, the error wraps ErrSignatureMismatch if at least one of them was
// well formed, and ErrMalformedSignature otherwise.
func (v *Verifier) Verify(header http.Header, body []byte) error {
	_, err := v.verify(header, body)
	return err
}

// verify is Verify that also returns the signing time.
func (v *Verifier) verify(header http.Header, body []byte) (time.Time, error) {
	signedAt, err := v.check(header, body)
	if err != nil {
		return time.Time{}, notVerified{err}
	}
	return signedAt, nil
}

// notVerified is an error of verification: it matches its own sentinel and
// ErrNotVerified, and reads as its own.
type notVerified struct{ err error }

func (e notVerified) Error() string   { return e.err.Error() }
func (e notVerified) Unwrap() []error { return []error{e.err, ErrNotVerified} }

// check does the checks of verify.
func (v *Verifier) check(header http.Header, body []byte) (time.Time, error) {
	if len(v.macs) == 0 {
		return time.Time{}, ErrEmptySecret
	}
	if int64(len(body)) > v.maxBody {
		return time.Time{}, fmt.Errorf("%w: %d bytes, limit %d", ErrBodyTooLarge, len(body), v.maxBody)
	}
	var sigs [maxSignatures][sha256.Size]byte
	wellFormed, seen := v.signatures(header, &sigs)
	if seen == 0 {
		return time.Time{}, fmt.Errorf("%w: %s", ErrMissingHeader, v.headers.signature)
	}
	tsHeader := header.Get(v.headers.timestamp)
	if tsHeader == "" {
		return time.Time{}, fmt.Errorf("%w: %s", ErrMissingHeader, v.headers.timestamp)
	}
	if wellFormed == 0 {
		return time.Time{}, fmt.Errorf("%w: %s is not sha256=<64 hex digits>", ErrMalformedSignature, v.headers.signature)
	}
	sec, ok := parseTimestamp(tsHeader)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %s is not a Unix time in seconds", ErrMalformedTimestamp, v.headers.timestamp)
	}
	if !v.signatureMatches(sigs[:wellFormed], tsHeader, body) {
		return time.Time{}, ErrSignatureMismatch
	}
	signedAt := time.Unix(sec, 0).UTC()
	if v.checkTimestamp {
		if skew := v.now().Sub(signedAt); skew > v.tolerance || skew < -v.tolerance {
			return time.Time{}, fmt.Errorf("%w: signed at %s, %v from now, tolerance %v",
				ErrTimestampOutOfTolerance, signedAt.Format(time.RFC3339), skew.Round(time.Second), v.tolerance)
		}
	}
	return signedAt, nil
}

// signatures reads the first maxSignatures non-empty values of the signature
// header, splitting each line at commas and trimming spaces and tabs. It puts
// the well-formed ones in sigs[:wellFormed] and returns how many values it
// looked at in seen.
func (v *Verifier) signatures(header http.Header, sigs *[maxSignatures][sha256.Size]byte) (wellFormed, seen int) {
	for _, line := range header.Values(v.headers.signature) {
		for value := range strings.SplitSeq(line, ",") {
			value = strings.Trim(value, " \t")
			if value == "" {
				continue
			}
			if seen == maxSignatures {
				return wellFormed, seen
			}
			seen++
			if sig, ok := parseSignature(value); ok {
				sigs[wellFormed] = sig
				wellFormed++
			}
		}
	}
	return wellFormed, seen
}

// macState is an HMAC-SHA256 under one secret, with room for the
// "<timestamp>." prefix and the sum, reused through the Verifier's pools so
// that Verify allocates nothing.
type macState struct {
	mac    hash.Hash
	prefix [maxTimestampLen + 1]byte
	sum    [sha256.Size]byte
}

// signatureMatches reports whether any of sigs is the HMAC-SHA256 of
// "<timestamp>.<body>" under any of the secrets. It computes one HMAC per
// secret and compares every pair in constant time, without stopping early.
func (v *Verifier) signatureMatches(sigs [][sha256.Size]byte, timestamp string, body []byte) bool {
	matched := false
	for _, pool := range v.macs {
		s := pool.Get().(*macState)
		s.mac.Reset()
		s.mac.Write(append(append(s.prefix[:0], timestamp...), '.'))
		s.mac.Write(body)
		want := s.mac.Sum(s.sum[:0])
		for i := range sigs {
			if hmac.Equal(want, sigs[i][:]) {
				matched = true
			}
		}
		pool.Put(s)
	}
	return matched
}

// writeSigned writes the signed message, "<timestamp>.<body>", to mac.
func writeSigned(mac hash.Hash, timestamp string, body []byte) {
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
}

// parseSignature decodes a "sha256=<64 hex digits>" header value. Upper-case
// digits are accepted; they denote the same bytes.
func parseSignature(s string) (sig [sha256.Size]byte, ok bool) {
	const prefix = "sha256="
	var digits [2 * sha256.Size]byte // on the stack: no allocation
	if len(s) != len(prefix)+len(digits) || s[:len(prefix)] != prefix {
		return sig, false
	}
	copy(digits[:], s[len(prefix):])
	_, err := hex.Decode(sig[:], digits[:])
	return sig, err == nil
}

// maxTimestampLen is the longest timestamp header parseTimestamp accepts.
const maxTimestampLen = 20

// parseTimestamp parses Unix seconds written as ASCII decimal digits only (no
// sign, space or fraction), up to the end of the year 9999.
func parseTimestamp(s string) (int64, bool) {
	if s == "" || len(s) > maxTimestampLen {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec > maxUnixSeconds {
		return 0, false
	}
	return sec, true
}
