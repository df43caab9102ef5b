// Package redisdedup is a webhooks.Deduper kept in Redis, for webhook
// receivers that run as several replicas behind a load balancer: the service
// retries a delivery (after 1 min, 5 min, 30 min, 2 h and 24 h) and each
// retry may reach another replica, which must know whether the delivery was
// already processed or is being processed right now.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	h := webhooks.Handler(verifier, process,
//		webhooks.WithDeduper(redisdedup.New(rdb)))
//
// It keeps the semantics of webhooks.MemoryDeduper: a delivery claimed by
// one replica and still being processed answers 409 on the others (so the
// service retries it later), a success is remembered for a TTL (later copies
// are acknowledged without processing), and a failure or a panic releases
// the claim (the service's next retry is processed).
//
// # Keys and claims
//
// Each delivery id has one string key, the key prefix followed by the id
// (DefaultKeyPrefix unless WithKeyPrefix says otherwise). While a replica
// processes the delivery the key holds that claim's token, a random value
// unique to the claim, and expires after the lease; once processed it holds
// "done:" and that token, and expires after the TTL; a released failure
// deletes it.
//
// Claim is one atomic command, SET key token NX PX <lease> GET: it claims
// the id when the key is absent and otherwise returns what the key holds, so
// it tells "done..." (ClaimDuplicate) from another replica's token
// (ClaimInFlight). It needs Redis 7.0 or later, or a compatible server.
//
// Release of a processed delivery is one command too, SET key
// done:<token> PX <ttl> GET: whatever the key held, the success is
// remembered, and the previous value tells Release how it went. The claim's
// token, or nothing (the lease ran out and nobody claimed since), is a plain
// release; its own done:<token> means go-redis ran the command again after
// its reply was lost, also a success; another claim's token or success
// means the lease ran out and the delivery may have been processed twice
// (ErrLeaseExpired). Release of a delivery not processed runs a Lua script
// that deletes the key only when it holds the claim's token, so a replica
// never forgets a claim that is not its own.
//
// The Claims and Releases of one Deduper that run at the same time share
// round trips: one goroutine of the Deduper sends its commands; while one
// command or pipeline is in flight, the commands that arrive wait and then
// go together as one pipeline; when none is in flight a command is sent at
// once. Claim and Release wait for their command's reply for up to the
// Deduper's timeout (WithTimeout, DefaultTimeout unless set), whatever the
// client's own timeouts; a command whose caller stopped waiting before it
// was sent is not sent.
//
// webhooks.Deduper.Release gets no token: the Deduper keeps the token of
// each claim it holds in memory, keyed by delivery id, from Claim until
// Redis has recorded the claim's end. One Deduper therefore never holds two
// claims on the same id: while it knows of one, its own Claim of that id
// answers without asking Redis (ClaimDuplicate when the delivery was
// processed and its release is still on its way, ClaimInFlight otherwise).
//
// # What the Deduper needs from Redis
//
// The Deduper remembers a success only as long as Redis keeps its key, so
// the Redis it uses must keep keys across a restart and never evict them:
//
//   - Persistence: turn the append-only file on (appendonly yes). With
//     appendfsync always, a write is on disk before Redis answers it, and a
//     crash loses nothing the Deduper was told was written; with everysec
//     (the usual setting) a crash of the machine loses up to about a
//     second of writes. RDB snapshots alone lose every write since the last
//     snapshot, often minutes. Without persistence a restart forgets every
//     record: each delivery already processed that the service sends again
//     (a retry whose answer was lost, a manual retry) is processed again,
//     and the claims in flight are gone, so a delivery being processed can
//     be claimed and processed by another replica at the same time.
//   - No eviction: Redis evicts keys when it reaches maxmemory unless
//     maxmemory-policy is noeviction, and since every key of the Deduper has
//     a TTL the volatile-* policies evict them too, with the same effects as
//     a restart without persistence. Under noeviction a full Redis refuses
//     writes instead: Claim fails, the Handler answers 500, and the service
//     retries later, which is safe. Use a Redis instance whose policy is
//     noeviction, or one without a memory limit; a database number of a
//     shared instance is not enough, since maxmemory and the policy are the
//     instance's. Size it for the deliveries of one TTL, at about 250
//     bytes each.
//   - Failover: replication is asynchronous, so a replica promoted after
//     its primary died may lack the last records; the deliveries they
//     recorded may be processed again.
//
// CheckRedis reads the configuration and reports a Redis without
// persistence or with an evicting policy; call it at startup.
//
// # When Redis or a replica fails
//
// A claim whose reply is lost on the network is sent again by go-redis on a
// new connection (up to the client's MaxRetries, 3 by default); Redis then
// answers with the claim's own token, and Claim takes the claim as its own.
// When every try fails, Claim returns the error, the Handler answers 500,
// and a claim Redis made meanwhile is orphaned until its lease ends.
//
// # How long the Handler waits
//
// The Handler answers within twice the timeout (4 seconds by default) plus
// the time of its callback, whatever Redis does: hang (a paused process, a
// full network buffer), refuse connections, or lose replies. A Claim that
// Redis has not answered within the timeout returns an error wrapping
// ErrTimeout and the Handler answers 500, so the service retries the
// delivery later; if Redis made that claim after all, the Deduper ends it
// in the background once Redis answers (as the release of a delivery not
// processed), and until then answers 409 to copies itself.
//
// A Release that Redis does not answer within the timeout, or that cannot
// reach it (a network failure, a restart, a failover), returns an error
// wrapping ErrReleasePending: the Handler logs it and answers (200 after a
// success), and the Deduper goes on trying in the background until Redis
// answers, 50ms after the first try, then twice as long after each, up to a
// second (a Claim of the Deduper that Redis answers starts the next try at
// once). It tries for up to the TTL after a success, so "done" is written
// however long the outage lasts, and for up to the lease after a failure,
// whose claim Redis then drops by itself. Meanwhile the Deduper
// answers copies of the delivery itself (200 for a success, 409 otherwise),
// and the claim, kept by Redis for its lease, makes other replicas answer
// 409. An outage of any length therefore processes no delivery twice,
// with two exceptions: the replica dies with releases pending (Flush, at
// shutdown, waits for them), or Redis comes back after the claim's lease
// ran out and another replica claims a copy of the delivery before the next
// background try (at most a second later).
//
// A replica that dies between Claim and Release leaves its claim behind;
// the lease (WithLease, DefaultLease unless set) makes Redis drop it, and the
// service's next retry after that is processed by whichever replica gets it.
// Until then that delivery answers 409. This leaves a window no deduper can
// close: a replica that dies after the callback's effect (a row written, an
// e-mail sent) and before Release has done the work without recording it,
// and the service, which got no answer, retries; the retry is processed
// again once the lease ends. Make the callback's effects idempotent where
// that matters, or use webhooks/pginbox, whose ProcessTx commits the effect
// and the record in one transaction.
//
// Processing must finish within the lease: a claim whose lease ran out can
// be taken by another replica, and the late Release then returns
// ErrLeaseExpired, meaning the delivery may have been processed twice.
package redisdedup
