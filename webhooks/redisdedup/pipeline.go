package redisdedup

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// pipeline sends the commands of one Deduper's concurrent Claims and
// Releases to Redis together. When no command is in flight, a command is
// sent at once, alone. While one is, the commands that arrive wait, then go
// as one pipeline (one write, and the replies read in one go), sent by the
// goroutine of the first of them; so each caller sends at most one batch,
// its own, and an idle Deduper adds no delay. Under load this replaces a
// round trip per command (a write and a read on each side) with one per
// batch.
//
// A waiting command cannot be withdrawn: it waits for the batch in flight
// and then its own, each bounded by the client's timeouts (see
// redis.Options: ReadTimeout, WriteTimeout, MaxRetries). A command whose
// context has ended before its batch is sent is not sent. A batch is sent
// with a context that the end of its sender's context does not cancel.
//
// go-redis sends a batch again on a new connection after a network error,
// like a single command; Claim and Release recognise their own earlier
// writes, so the commands are safe to repeat.
type pipeline struct {
	client redis.UniversalClient

	mu    sync.Mutex
	busy  bool      // a command or a batch is in flight
	queue []*queued // the commands of the next batch, in order of arrival
}

// queued is a command waiting for its batch.
type queued struct {
	ctx   context.Context
	cmd   redis.Cmder
	lead  chan bool // receives true to send batch, false once it was sent
	batch []*queued // for the first of a batch: the batch, itself first
}

// do sends cmd, alone or in a batch, and returns its error once its reply
// (or a failure) is in cmd.
func (p *pipeline) do(ctx context.Context, cmd redis.Cmder) error {
	p.mu.Lock()
	if !p.busy {
		p.busy = true
		p.mu.Unlock()
		defer p.handOver() // even if a hook of the client panics
		_ = p.client.Process(ctx, cmd)
		return cmd.Err()
	}
	q := &queued{ctx: ctx, cmd: cmd, lead: make(chan bool, 1)}
	p.queue = append(p.queue, q)
	p.mu.Unlock()
	if <-q.lead {
		p.send(q.batch)
	}
	return cmd.Err()
}

// send sends batch, the caller's command first, as one pipeline, tells
// the others' callers they were sent, and hands over to the next batch.
func (p *pipeline) send(batch []*queued) {
	defer p.handOver() // even if a hook of the client panics
	defer func() {
		for _, q := range batch[1:] {
			q.lead <- false
		}
	}()
	pipe := p.client.Pipeline()
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.cmd.SetErr(err)
			continue
		}
		_ = pipe.Process(q.ctx, q.cmd)
	}
	_, _ = pipe.Exec(context.WithoutCancel(batch[0].ctx)) // each command keeps its own error
}

// handOver makes the queued commands the next batch, for the first of them
// to send, or marks the pipeline idle when none waits.
func (p *pipeline) handOver() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.busy = false
		return
	}
	first := p.queue[0]
	first.batch, p.queue = p.queue, nil
	first.lead <- true
}
