package redisdedup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

func TestClaimReleaseSemantics(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	a := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))
	b := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))

	claim := func(d *redisdedup.Deduper, id string) webhooks.ClaimStatus {
		t.Helper()
		s, err := d.Claim(ctx, id)
		require.NoError(t, err)
		return s
	}

	assert.Equal(t, webhooks.ClaimNew, claim(a, "d1"))
	assert.Equal(t, webhooks.ClaimInFlight, claim(b, "d1"), "another replica sees the claim")
	assert.Equal(t, webhooks.ClaimInFlight, claim(a, "d1"), "the holder's own second claim is in flight too")

	require.NoError(t, a.Release(ctx, "d1", false))
	assert.Equal(t, webhooks.ClaimNew, claim(b, "d1"), "a failure releases the claim")

	require.NoError(t, b.Release(ctx, "d1", true))
	assert.Equal(t, webhooks.ClaimDuplicate, claim(a, "d1"), "a success is remembered")
	assert.Equal(t, webhooks.ClaimDuplicate, claim(b, "d1"))

	assert.Equal(t, webhooks.ClaimNew, claim(a, "d2"), "ids are independent")
}

func TestKeysPrefixTTLAndLease(t *testing.T) {
	ctx := context.Background()
	rdb := newClient(t)
	p := prefix(t)
	d := redisdedup.New(rdb, redisdedup.WithKeyPrefix(p), redisdedup.WithTTL(time.Hour), redisdedup.WithLease(30*time.Second))

	_, err := d.Claim(ctx, "d1")
	require.NoError(t, err)
	token, err := rdb.Get(ctx, p+"d1").Result()
	require.NoError(t, err)
	assert.Len(t, token, 26, "a claim holds a random token")
	lease, err := rdb.PTTL(ctx, p+"d1").Result()
	require.NoError(t, err)
	assert.InDelta(t, 30*time.Second, lease, float64(2*time.Second), "a claim lives for the lease")

	require.NoError(t, d.Release(ctx, "d1", true))
	assert.Equal(t, "done:"+token, rdb.Get(ctx, p+"d1").Val(), "a success records the token of its claim")
	ttl, err := rdb.PTTL(ctx, p+"d1").Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour, ttl, float64(2*time.Second), "a success is remembered for the TTL")

	_, err = d.Claim(ctx, "d2")
	require.NoError(t, err)
	require.NoError(t, d.Release(ctx, "d2", false))
	assert.Zero(t, rdb.Exists(ctx, p+"d2").Val(), "a released failure leaves no key")

	assert.Equal(t, "invoicing:webhooks:delivery:", redisdedup.DefaultKeyPrefix)
}

func TestSuccessIsForgottenAfterTTL(t *testing.T) {
	ctx := context.Background()
	d := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(prefix(t)), redisdedup.WithTTL(50*time.Millisecond))
	_, err := d.Claim(ctx, "d1")
	require.NoError(t, err)
	require.NoError(t, d.Release(ctx, "d1", true))
	eventuallyClaimsNew(t, d, "d1")
}

func TestAbandonedClaimExpiresWithLease(t *testing.T) {
	p := prefix(t)
	dead := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p), redisdedup.WithLease(time.Second))
	alive := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))

	requireClaim(t, dead, "d1", webhooks.ClaimNew)
	// dead never releases, as a replica that crashed.
	requireClaim(t, alive, "d1", webhooks.ClaimInFlight)
	eventuallyClaimsNew(t, alive, "d1")
}

func TestNeverReleasesAnotherReplicasClaim(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	slow, others := replicas(t, p, 2)
	other, third := others[0], others[1]

	_, err := slow.Claim(ctx, "d1")
	require.NoError(t, err)
	eventuallyClaimsNew(t, other, "d1") // slow's lease runs out; other claims

	requireClaim(t, slow, "d1", webhooks.ClaimInFlight, "slow still holds its own, expired, claim")
	err = slow.Release(ctx, "d1", false)
	assert.ErrorIs(t, err, redisdedup.ErrLeaseExpired)
	requireClaim(t, third, "d1", webhooks.ClaimInFlight, "other's claim survives slow's late release")

	require.NoError(t, other.Release(ctx, "d1", true))
	requireClaim(t, third, "d1", webhooks.ClaimDuplicate)
}

func TestLateSuccessIsRememberedWhenNobodyClaimed(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	rdb := newClient(t)
	slow := redisdedup.New(rdb, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(20*time.Millisecond))
	_, err := slow.Claim(ctx, "d1")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rdb.Exists(ctx, p+"d1").Val() == 0 }, 5*time.Second, 5*time.Millisecond,
		"the lease runs out; nobody claims meanwhile")
	require.NoError(t, slow.Release(ctx, "d1", true))
	s, err := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p)).Claim(ctx, "d1")
	require.NoError(t, err)
	assert.Equal(t, webhooks.ClaimDuplicate, s)
}

func TestReleaseOfUnclaimedID(t *testing.T) {
	d := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(prefix(t)))
	assert.ErrorIs(t, d.Release(context.Background(), "never-claimed", true), redisdedup.ErrNotClaimed)
}

func TestNewPanicsOnMistakes(t *testing.T) {
	rdb := newClient(t)
	assert.Panics(t, func() { redisdedup.New(nil) })
	assert.Panics(t, func() { redisdedup.New(rdb, redisdedup.WithTTL(0)) })
	assert.Panics(t, func() { redisdedup.New(rdb, redisdedup.WithLease(time.Microsecond)) })
	assert.Panics(t, func() { redisdedup.New(rdb, redisdedup.WithTimeout(0)) })
	assert.NotPanics(t, func() { redisdedup.New(rdb, redisdedup.WithTimeout(time.Millisecond)) })
}

func TestRedisUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rdb := newClient(t)
	require.NoError(t, rdb.Close()) // as a lost connection
	d := redisdedup.New(rdb)
	_, err := d.Claim(ctx, "d1")
	assert.ErrorContains(t, err, "redisdedup: claiming delivery d1")
}

// A release that finds the delivery done by another claim (this claim's
// lease ran out, another replica claimed and processed it) returns
// ErrLeaseExpired: unlike a release that finds its own "done", the delivery
// may have been processed twice.
func TestReleaseFindingAnotherClaimsSuccessIsLeaseExpired(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	slow, others := replicas(t, p, 1)
	other := others[0]

	_, err := slow.Claim(ctx, "d1")
	require.NoError(t, err)
	eventuallyClaimsNew(t, other, "d1") // slow's lease runs out; other claims
	require.NoError(t, other.Release(ctx, "d1", true))

	assert.ErrorIs(t, slow.Release(ctx, "d1", true), redisdedup.ErrLeaseExpired)
	requireClaim(t, other, "d1", webhooks.ClaimDuplicate, "the delivery stays done")
}

// A key written as "done" alone, before the token was recorded with it,
// still marks a processed delivery.
func TestDoneWithoutTokenIsDuplicate(t *testing.T) {
	ctx := context.Background()
	rdb := newClient(t)
	p := prefix(t)
	require.NoError(t, rdb.Set(ctx, p+"d1", "done", time.Minute).Err())
	s, err := redisdedup.New(rdb, redisdedup.WithKeyPrefix(p)).Claim(ctx, "d1")
	require.NoError(t, err)
	assert.Equal(t, webhooks.ClaimDuplicate, s)
}

// A success released after the claim's lease ran out and another replica
// claimed the delivery is still remembered: the delivery was processed, so
// copies are acknowledged without processing, though Release says it may
// have been processed twice. The other replica's late release, of a
// success or a failure, leaves it done.
func TestLateSuccessIsRememberedOverAnotherClaim(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	slow, others := replicas(t, p, 2)
	other, third := others[0], others[1]

	for _, otherProcessed := range []bool{true, false} {
		id := fmt.Sprint("d-", otherProcessed)
		_, err := slow.Claim(ctx, id)
		require.NoError(t, err)
		eventuallyClaimsNew(t, other, id) // slow's lease runs out; other claims

		assert.ErrorIs(t, slow.Release(ctx, id, true), redisdedup.ErrLeaseExpired)
		requireClaim(t, third, id, webhooks.ClaimDuplicate, "the success is remembered")

		assert.ErrorIs(t, other.Release(ctx, id, otherProcessed), redisdedup.ErrLeaseExpired)
		requireClaim(t, third, id, webhooks.ClaimDuplicate, "other's release (processed %t) leaves it done", otherProcessed)
	}
}
