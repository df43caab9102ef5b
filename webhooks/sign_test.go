package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

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
