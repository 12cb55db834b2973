package ioc

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"inkwell/cache"
	"inkwell/service"
)

// NewPgPool opens the PostgreSQL pool and checks it answers. The cleanup closes it.
func NewPgPool(cfg *Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("PostgreSQL at %s:%d does not answer (is it running? `make run` starts one): %w",
			pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, err)
	}
	return pool, func() { pool.Close(); log.Info("postgres pool closed") }, nil
}

// NewRedis opens the Redis client. A Redis that does not answer at start is logged, not fatal:
// every Redis use falls back or fails open, so the service works (slower) until Redis returns.
func NewRedis(cfg *Config, log *slog.Logger) (redis.UniversalClient, func(), error) {
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// Short timeouts: a slow Redis must cost a request milliseconds, then the fallback path runs.
	opts.DialTimeout = time.Second
	opts.ReadTimeout = 500 * time.Millisecond
	opts.WriteTimeout = 500 * time.Millisecond
	opts.MaxRetries = 1
	opts.DialerRetries = 1 // go-redis would otherwise retry a refused dial 5 times, 100 ms apart
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		log.Warn("redis does not answer; serving from PostgreSQL until it does", "addr", opts.Addr, "err", err)
	}
	return rdb, func() { _ = rdb.Close(); log.Info("redis client closed") }, nil
}

// NewKeyspace returns the Redis key prefix.
func NewKeyspace(cfg *Config) cache.Keyspace { return cache.Keyspace(cfg.RedisPrefix) }

// NewCachePolicy returns the read-through cache policy.
func NewCachePolicy(cfg *Config) cache.Policy {
	return cache.Policy{TTL: cfg.CacheTTL, NullTTL: cfg.CacheNullTTL, Jitter: cfg.CacheJitter, LoadTimeout: cfg.CacheLoadWait}
}

// NewSlugSuffix returns the random tail added to a slug whose title is already taken: six
// base-36 characters, so collisions among suffixes of one title are rare.
func NewSlugSuffix() service.SlugSuffix {
	return func() string {
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, 6)
		for i := range b {
			b[i] = alphabet[rand.IntN(len(alphabet))]
		}
		return string(b)
	}
}
