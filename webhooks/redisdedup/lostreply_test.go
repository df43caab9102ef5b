package redisdedup_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// The reply to a replica's claim is lost on the network after Redis made
// the claim: go-redis sends the command again on a new connection, and
// Redis answers with the replica's own token. That is the replica's claim:
// it processes the delivery (rather than answering 409 until the lease
// ends, past the service's 1-minute retry), once.
func TestClaimWhoseReplyWasLostIsOwnClaim(t *testing.T) {
	proxy := newProxy(t, server.Addr)
	p := prefix(t)
	var processed webhooktest.Counter
	replica := webhooks.Handler(webhooktest.NewVerifier(t), func(_ context.Context, d *webhooks.Delivery) error {
		processed.Add(d.ID)
		return nil
	}, webhooks.WithDeduper(redisdedup.New(clientOf(t, proxy.Addr), redisdedup.WithKeyPrefix(p))))
	d := webhooktest.Deliveries(1)[0]

	dropped := proxy.DropReply(mentions(p + d.ID)) // the claim, the first command naming the key
	start := time.Now()
	assert.Equal(t, http.StatusOK, d.Send(replica), "the claim Redis made for the replica is the replica's")
	requireClosed(t, dropped, "the loss of the claim's reply")
	assert.Less(t, time.Since(start), 2*redisdedup.DefaultTimeout, "answered within the bound")
	assert.Equal(t, 1, processed.Count(d.ID))

	assert.Equal(t, http.StatusOK, d.Send(replica), "the service's retry")
	assert.Equal(t, 1, processed.Count(d.ID), "processed once")
}

// The reply to a Release is lost after Redis ended the claim: go-redis
// runs the release again, which finds the claim already ended by this
// replica. That is a success, not ErrLeaseExpired ("may have been
// processed twice"); a success stays remembered.
func TestReleaseWhoseReplyWasLostSucceeds(t *testing.T) {
	for name, processed := range map[string]bool{"processed": true, "failed": false} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			proxy := newProxy(t, server.Addr)
			p := prefix(t)
			d := redisdedup.New(clientOf(t, proxy.Addr), redisdedup.WithKeyPrefix(p))
			other := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))

			for _, id := range []string{"warm-up", "d1"} { // a first release loads any script it runs into Redis
				requireClaim(t, d, id, webhooks.ClaimNew)
			}
			require.NoError(t, d.Release(ctx, "warm-up", processed))
			dropped := proxy.DropReply(mentions(p + "d1"))
			require.NoError(t, d.Release(ctx, "d1", processed))
			requireClosed(t, dropped, "the loss of the release's reply")

			want := map[bool]webhooks.ClaimStatus{true: webhooks.ClaimDuplicate, false: webhooks.ClaimNew}[processed]
			s, err := other.Claim(ctx, "d1")
			require.NoError(t, err)
			assert.Equal(t, want, s)
		})
	}
}
