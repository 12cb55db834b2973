package inkwell

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// maxBodyBytes caps a request body: a megabyte holds any article, and no client needs more.
const maxBodyBytes = 1 << 20

// argon2MaxConcurrent bounds the password hashes computed at once: each takes 19 MiB and a core
// for tens of milliseconds, so a burst of logins queues instead of exhausting memory.
const argon2MaxConcurrent = 8

// IdempotencyWait is how long a request repeating an Idempotency-Key waits for the first one to
// finish before it is answered 409: longer than a write takes, short enough that a retrying
// client is not held (a setting until 0.1.0).
const IdempotencyWait = 3 * time.Second

// NewRouterConfig returns the router's settings; request spans only when tracing is on.
func NewRouterConfig(s ioc.ServerConfig, u ioc.UploadsConfig, tracing *ioc.Tracing) web.RouterConfig {
	rc := web.RouterConfig{MaxBodyBytes: maxBodyBytes, UploadMaxBytes: NewUploadConfig(u).MaxBytes, RequestTimeout: s.RequestTimeout}
	if tracing.On() {
		rc.Tracer = tracing.Provider
	}
	for _, o := range strings.Split(s.CORSOrigins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o == "*" {
			rc.CORS.AllowAll = true
		} else if o != "" {
			rc.CORS.Origins = append(rc.CORS.Origins, o)
		}
	}
	if s.CORSOrigins == "" && s.Env == "dev" {
		rc.CORS.AllowAll = true
	}
	n, w, _ := ioc.ParseRate(s.RateAuth)
	rc.RateLimits.Auth = web.RateRule{Name: "auth", Limit: n, Window: w}
	n, w, _ = ioc.ParseRate(s.RateWrites)
	rc.RateLimits.Writes = web.RateRule{Name: "writes", Limit: n, Window: w}
	n, w, _ = ioc.ParseRate(s.RateSearch)
	rc.RateLimits.Search = web.RateRule{Name: "search", Limit: n, Window: w}
	// Reports: a constant, not an operator's decision so far (settings are kept few).
	rc.RateLimits.Reports = web.DefaultReportRate
	rc.RateLimits.Uploads = web.DefaultUploadRate
	rc.TrustedProxies, _ = ioc.ParseTrustedProxies(s.TrustedProxies) // Validate refused a bad entry
	return rc
}

// NewHasherConfig returns the Argon2id settings: OWASP's minimum raised to the configured memory
// (iterations and lanes stay OWASP's: 2 and 1).
func NewHasherConfig(a ioc.AuthConfig) auth.HasherConfig {
	p := auth.OWASPMinimum
	p.MemoryKiB = uint32(a.Argon2MemoryKiB)
	return auth.HasherConfig{Params: p, MaxConcurrent: argon2MaxConcurrent}
}

// NewJWTConfig returns the access-token settings.
func NewJWTConfig(a ioc.AuthConfig) auth.JWTConfig {
	return auth.JWTConfig{Secret: []byte(a.JWTSecret), Issuer: a.JWTIssuer, Lifetime: a.JWTLifetime}
}

// NewSessionConfig returns token lifetimes and the revocation lease: 3 s, so a logout while Redis
// is unreachable waits about that long; renewals look 30 s back while the lease holds.
func NewSessionConfig(a ioc.AuthConfig) service.SessionConfig {
	return service.SessionConfig{AccessTTL: a.JWTLifetime, RefreshTTL: a.RefreshLifetime, PerUser: a.SessionsPerUser,
		RevocationLease: 3 * time.Second, RecentRevocations: 30 * time.Second}
}

// NewIdempotencyWait returns how long a duplicate Idempotency-Key request waits for the first.
func NewIdempotencyWait(tune ioc.Tuning) service.IdempotencyWait {
	return service.IdempotencyWait(ioc.Or(tune.IdempotencyWait, IdempotencyWait))
}

// NewBreakerConfig returns the settings of the circuit breaker every Redis call goes through
// (see cache.Breaker).
func NewBreakerConfig(tune ioc.Tuning) cache.BreakerConfig {
	return cache.BreakerConfig{FailuresToOpen: cache.BreakerFailures, OpenFor: ioc.Or(tune.BreakerOpen, cache.BreakerOpenFor)}
}

// NewKeyspace returns the Redis key prefix.
func NewKeyspace(r ioc.RedisConfig) cache.Keyspace { return cache.Keyspace(r.Prefix) }

// NewCachePolicy returns the read-through cache policy; changes are broadcast to the other
// instances through b.
func NewCachePolicy(tune ioc.Tuning, b *cache.Broadcaster, fallback *cache.FallbackLimit, repair *cache.Repairer) cache.Policy {
	return cache.Policy{TTL: cache.TTL, NullTTL: cache.NullTTL, Jitter: ioc.Or(tune.CacheJitter, cache.TTLJitter), LoadTimeout: cache.LoadTimeout,
		LocalTTL: ioc.Or(tune.CacheLocalTTL, cache.LocalTTL), LocalMax: 10_000, Broadcast: b, Fallback: fallback, Repair: repair}
}

// NewFallbackLimit bounds the cache reads this instance sends to PostgreSQL while Redis fails
// (cache.FallbackConcurrency: half the pool's connections, so writes and the other half of the
// traffic keep connections; cache.FallbackWait for a turn).
func NewFallbackLimit(tune ioc.Tuning, pool *pgxpool.Pool) *cache.FallbackLimit {
	n := ioc.Or(tune.DBFallbackConcurrency, cache.FallbackConcurrency)
	if n == 0 {
		n = max(int(pool.Config().MaxConns)/2, 1)
	}
	return cache.NewFallbackLimit(n, ioc.Or(tune.DBFallbackWait, cache.FallbackWait))
}

// NewCodePolicy is the one-time code policy: valid INKWELL_CODE_VALIDITY (10 minutes by default),
// and the cache.Code* budgets: one send a minute, 3 wrong tries a code, 10 wrong tries and 10
// sends per target a day, 600 sends a minute in all.
func NewCodePolicy(a ioc.AuthConfig, t ioc.Tuning) cache.CodePolicy {
	return cache.CodePolicy{
		Validity: a.CodeValidity, Resend: cache.CodeResend, Attempts: ioc.Or(t.CodeAttempts, cache.CodeAttempts),
		FailureBudget: ioc.Or(t.CodeFailureBudget, cache.CodeFailureBudget), DailySends: ioc.Or(t.CodeDailySends, cache.CodeDailySends),
		BudgetWindow: cache.CodeBudgetWindow, GlobalSends: cache.CodeGlobalSends, GlobalWindow: cache.CodeGlobalWindow,
	}
}

// NewCodeStore is the login-code store: Redis, with PostgreSQL taking over the steps Redis
// cannot decide (see service.FallbackCodeStore).
func NewCodeStore(primary *cache.CodeStore, fallback *repository.CodeFallback, log *slog.Logger) *service.FallbackCodeStore {
	return service.NewFallbackCodeStore(primary, fallback, log)
}

// NewCodeKeys derives the keys that hash stored login codes and seal them in send_code jobs from
// the JWT secret (see service.CodeKeys): rotating the secret voids pending codes, nothing more.
func NewCodeKeys(a ioc.AuthConfig) (service.CodeKeys, error) {
	return service.NewCodeKeys([]byte(a.JWTSecret))
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
func NewSearchLanguage(s ioc.SearchConfig, pool *pgxpool.Pool) (search.Language, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return search.CheckLanguage(ctx, pool, repository.NewQuerier(), strings.TrimSpace(s.Language))
}

// NewUploadConfig returns the upload limits (Validate refused values that do not parse).
func NewUploadConfig(u ioc.UploadsConfig) service.UploadConfig {
	maxBytes, _ := ioc.ParseByteSize(u.MaxBytes)
	q, _ := ioc.ParseUploadQuota(u.Quota)
	return service.UploadConfig{MaxBytes: maxBytes, Quota: domain.UploadQuota{PerDay: q.PerDay, Total: q.Total}}
}

// NewPublicLinks returns the public links of feeds and sitemaps: INKWELL_PUBLIC_URL (or
// http://localhost:PORT of INKWELL_ADDR) and the INKWELL_ARTICLE_URL template; a value Validate let
// through that still makes no absolute URL stops the start.
func NewPublicLinks(s ioc.ServerConfig) (domain.PublicLinks, error) {
	links, err := domain.NewPublicLinks(ioc.PublicBaseURL(s), s.ArticleURL)
	if err != nil {
		return domain.PublicLinks{}, fmt.Errorf("INKWELL_PUBLIC_URL / INKWELL_ARTICLE_URL: %w", err)
	}
	return links, nil
}
