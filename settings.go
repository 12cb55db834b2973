package inkwell

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// NewRouterConfig returns the router's settings; request spans only when tracing is on.
func NewRouterConfig(cfg *ioc.Config, tracing *ioc.Tracing) web.RouterConfig {
	rc := web.RouterConfig{MaxBodyBytes: cfg.MaxBodyBytes, RequestTimeout: cfg.RequestTimeout}
	if tracing.On() {
		rc.Tracer = tracing.Provider
	}
	for _, o := range strings.Split(cfg.CORSOrigins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o == "*" {
			rc.CORS.AllowAll = true
		} else if o != "" {
			rc.CORS.Origins = append(rc.CORS.Origins, o)
		}
	}
	if cfg.CORSOrigins == "" && cfg.Env == "dev" {
		rc.CORS.AllowAll = true
	}
	n, w, _ := ioc.ParseRate(cfg.RateAuth)
	rc.RateLimits.Auth = web.RateRule{Name: "auth", Limit: n, Window: w}
	n, w, _ = ioc.ParseRate(cfg.RateWrites)
	rc.RateLimits.Writes = web.RateRule{Name: "writes", Limit: n, Window: w}
	n, w, _ = ioc.ParseRate(cfg.RateSearch)
	rc.RateLimits.Search = web.RateRule{Name: "search", Limit: n, Window: w}
	rc.TrustedProxies, _ = ioc.ParseTrustedProxies(cfg.TrustedProxies) // Validate refused a bad entry
	return rc
}

// NewHasherConfig returns the Argon2id settings: OWASP's minimum raised to the configured cost.
func NewHasherConfig(cfg *ioc.Config) auth.HasherConfig {
	p := auth.OWASPMinimum
	p.MemoryKiB = uint32(cfg.Argon2MemoryKiB)
	p.Iterations = uint32(cfg.Argon2Iterations)
	p.Parallelism = uint8(cfg.Argon2Parallelism)
	return auth.HasherConfig{Params: p, MaxConcurrent: cfg.Argon2MaxConcurrent}
}

// NewJWTConfig returns the access-token settings.
func NewJWTConfig(cfg *ioc.Config) auth.JWTConfig {
	return auth.JWTConfig{Secret: []byte(cfg.JWTSecret), Issuer: cfg.JWTIssuer, Lifetime: cfg.JWTLifetime}
}

// NewSessionConfig returns token lifetimes and the revocation lease: 3 s, so a logout while Redis
// is unreachable waits about that long; renewals look 30 s back while the lease holds.
func NewSessionConfig(cfg *ioc.Config) service.SessionConfig {
	return service.SessionConfig{AccessTTL: cfg.JWTLifetime, RefreshTTL: cfg.RefreshLifetime, PerUser: cfg.SessionsPerUser,
		RevocationLease: 3 * time.Second, RecentRevocations: 30 * time.Second}
}

// NewIdempotencyWait returns how long a duplicate Idempotency-Key request waits for the first.
func NewIdempotencyWait(cfg *ioc.Config) repository.IdempotencyWait {
	return repository.IdempotencyWait(cfg.IdempotencyWait)
}

// NewBreakerConfig returns the settings of the circuit breaker every Redis call goes through
// (see cache.Breaker).
func NewBreakerConfig(cfg *ioc.Config) cache.BreakerConfig {
	return cache.BreakerConfig{FailuresToOpen: uint32(cfg.RedisBreakerFailures), OpenFor: cfg.RedisBreakerOpen}
}

// NewKeyspace returns the Redis key prefix.
func NewKeyspace(cfg *ioc.Config) cache.Keyspace { return cache.Keyspace(cfg.RedisPrefix) }

// NewCachePolicy returns the read-through cache policy; changes are broadcast to the other
// instances through b.
func NewCachePolicy(cfg *ioc.Config, b *cache.Broadcaster, fallback *cache.FallbackLimit, repair *cache.Repairer) cache.Policy {
	return cache.Policy{TTL: cfg.CacheTTL, NullTTL: cfg.CacheNullTTL, Jitter: cfg.CacheJitter, LoadTimeout: cfg.CacheLoadWait,
		LocalTTL: cfg.CacheLocalTTL, LocalMax: 10_000, Broadcast: b, Fallback: fallback, Repair: repair}
}

// NewFallbackLimit bounds the cache reads this instance sends to PostgreSQL while Redis fails
// (INKWELL_DB_FALLBACK_CONCURRENCY, by default half the pool's connections, so writes and the
// other half of the traffic keep connections; INKWELL_DB_FALLBACK_WAIT for a turn).
func NewFallbackLimit(cfg *ioc.Config, pool *pgxpool.Pool) *cache.FallbackLimit {
	n := cfg.DBFallbackConcurrency
	if n == 0 {
		n = max(int(pool.Config().MaxConns)/2, 1)
	}
	return cache.NewFallbackLimit(n, cfg.DBFallbackWait)
}

// NewCodePolicy is the one-time code policy (INKWELL_CODE_* settings): by default valid 10
// minutes, one send a minute, 3 wrong tries a code, 10 wrong tries and 10 sends per target a day,
// 600 sends a minute in all.
func NewCodePolicy(cfg *ioc.Config) cache.CodePolicy {
	return cache.CodePolicy{
		Validity: cfg.CodeValidity, Resend: cfg.CodeResend, Attempts: cfg.CodeAttempts,
		FailureBudget: cfg.CodeFailureBudget, DailySends: cfg.CodeDailySends, BudgetWindow: cfg.CodeBudgetWindow,
		GlobalSends: cfg.CodeGlobalSends, GlobalWindow: cfg.CodeGlobalWindow,
	}
}

// NewCodeStore is the login-code store: Redis, with PostgreSQL taking over the steps Redis
// cannot decide (see service.FallbackCodeStore).
func NewCodeStore(primary *cache.CodeStore, fallback *repository.CodeFallback, log *slog.Logger) *service.FallbackCodeStore {
	return service.NewFallbackCodeStore(primary, fallback, log)
}

// NewCodeKeys derives the keys that hash stored login codes and seal them in send_code jobs from
// the JWT secret (see service.CodeKeys): rotating the secret voids pending codes, nothing more.
func NewCodeKeys(cfg *ioc.Config) (service.CodeKeys, error) {
	return service.NewCodeKeys([]byte(cfg.JWTSecret))
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

// NewSearchLanguage checks INKWELL_SEARCH_LANGUAGE against the database's text search
// configurations: a name PostgreSQL does not know stops the start with a clear error, rather than
// every publish and search failing.
func NewSearchLanguage(cfg *ioc.Config, pool *pgxpool.Pool) (search.Language, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return search.CheckLanguage(ctx, pool, repository.NewQuerier(), strings.TrimSpace(cfg.SearchLanguage))
}
