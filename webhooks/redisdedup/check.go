package redisdedup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrNotDurable is wrapped by the errors of CheckRedis that say Redis may
// lose the Deduper's records: processed deliveries would then be processed
// again when the service sends them again.
var ErrNotDurable = errors.New("redisdedup: Redis may lose the records of processed deliveries")

// CheckRedis reads the configuration of the Redis the Deduper uses (INFO,
// and CONFIG GET save when the append-only file is off; every master of a
// *redis.ClusterClient, every shard of a *redis.Ring) and returns an error
// wrapping ErrNotDurable when it keeps nothing across a restart (no
// append-only file and no RDB snapshots) or may evict the Deduper's keys (a
// maxmemory limit with a policy other than noeviction: every key has a TTL,
// so the volatile-* policies evict them too). It returns another error when
// Redis cannot be asked, such as a managed Redis that refuses CONFIG; check
// its settings in its console then. It changes nothing: call it at startup
// and log what it says. See the package documentation, "What the Deduper
// needs from Redis".
func (d *Deduper) CheckRedis(ctx context.Context) error {
	switch c := d.client.(type) {
	case *redis.ClusterClient:
		return forEach(ctx, c.ForEachMaster)
	case *redis.Ring:
		return forEach(ctx, c.ForEachShard)
	}
	return checkServer(ctx, d.client)
}

// forEach checks each server that each visits, at once, and joins what
// they say.
func forEach(ctx context.Context, each func(context.Context, func(context.Context, *redis.Client) error) error) error {
	var mu sync.Mutex
	var errs []error
	err := each(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := checkServer(ctx, c); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("%s: %w", c.Options().Addr, err))
			mu.Unlock()
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// checkServer checks one server, as CheckRedis says.
func checkServer(ctx context.Context, c redis.Cmdable) error {
	info, err := c.Info(ctx, "persistence", "memory").Result()
	if err != nil {
		return fmt.Errorf("redisdedup: checking Redis: %w", err)
	}
	fields := infoFields(info)
	var errs []error
	if fields["aof_enabled"] != "1" {
		save, err := c.ConfigGet(ctx, "save").Result()
		switch {
		case err != nil:
			return fmt.Errorf("redisdedup: checking Redis: its append-only file is off, and asking whether it takes RDB snapshots failed: %w", err)
		case strings.TrimSpace(save["save"]) == "":
			errs = append(errs, fmt.Errorf("%w: it keeps nothing across a restart (appendonly no, save \"\"); turn on the append-only file", ErrNotDurable))
		}
	}
	if limit, policy := fields["maxmemory"], fields["maxmemory_policy"]; limit != "" && limit != "0" && policy != "noeviction" {
		errs = append(errs, fmt.Errorf("%w: with maxmemory %s and maxmemory-policy %s it evicts keys when full; use noeviction", ErrNotDurable, limit, policy))
	}
	return errors.Join(errs...)
}

// infoFields returns the "name:value" lines of an INFO reply.
func infoFields(info string) map[string]string {
	fields := make(map[string]string)
	for _, line := range strings.Split(info, "\n") {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[name] = value
		}
	}
	return fields
}
