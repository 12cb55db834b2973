package testenv

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// ErrRedisOutage is what every command fails with while a RedisOutage is on.
var ErrRedisOutage = errors.New("injected: redis does not answer")

// RedisOutage is a go-redis hook that fails every command while it is on, as a Redis that
// stopped answering would. Add it to a client with AddHook; switch it with On.
type RedisOutage struct{ on atomic.Bool }

// On starts (true) or ends (false) the outage.
func (o *RedisOutage) On(on bool) { o.on.Store(on) }

func (o *RedisOutage) DialHook(next redis.DialHook) redis.DialHook { return next }

func (o *RedisOutage) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if o.on.Load() {
			cmd.SetErr(ErrRedisOutage)
			return ErrRedisOutage
		}
		return next(ctx, cmd)
	}
}

func (o *RedisOutage) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if o.on.Load() {
			for _, c := range cmds {
				c.SetErr(ErrRedisOutage)
			}
			return ErrRedisOutage
		}
		return next(ctx, cmds)
	}
}
