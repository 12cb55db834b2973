package ioc

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/robfig/cron/v3"
)

// DefaultJWTLifetime is INKWELL_JWT_LIFETIME's default: long enough for a RealWorld front end,
// which never refreshes, to stay signed in for a day.
const DefaultJWTLifetime = 24 * time.Hour

// Config is every setting of inkwell. Each one comes from a command-line flag, else from the
// environment variable named in its help text, else from its default.
type Config struct {
	Env         string // "dev" or "prod"
	Addr        string
	DatabaseURL string
	// Server-side bounds on every session of the app and job-queue pools (0 leaves PostgreSQL's
	// own setting): one statement, and one transaction left idle by its client.
	DBStatementTimeout time.Duration
	DBIdleInTxTimeout  time.Duration
	// DBConnectTimeout bounds opening one PostgreSQL connection (0: no bound, or DATABASE_URL's
	// connect_timeout).
	DBConnectTimeout time.Duration
	// Reads sent to PostgreSQL because Redis failed: how many at once per process (0: half the
	// pool's connections) and how long one waits for its turn before it is answered 503.
	DBFallbackConcurrency int
	DBFallbackWait        time.Duration
	// RequestTimeout bounds the work of one HTTP request (its context's deadline; 0: none).
	RequestTimeout time.Duration
	// IdempotencyWait is how long a duplicate Idempotency-Key request waits for the first.
	IdempotencyWait time.Duration
	RedisURL        string
	RedisMode       string // "single", "cluster" or "sentinel": how RedisURL is read
	RedisMaster     string // Sentinel mode: the name the Sentinels know the master by
	RedisPrefix     string
	// The Redis circuit breaker: consecutive failures that open it, and how long it stays open.
	RedisBreakerFailures int
	RedisBreakerOpen     time.Duration
	MigrateOnStart       bool
	LogLevel             string
	LogFormat            string
	ShutdownTimeout      time.Duration
	// DrainDelay: after SIGTERM, how long /readyz answers 503 while the server still serves.
	DrainDelay time.Duration

	JWTSecret       string
	JWTIssuer       string
	JWTLifetime     time.Duration
	RefreshLifetime time.Duration
	SessionsPerUser int
	RateAuth        string
	RateWrites      string
	RateSearch      string
	TrustedProxies  string

	Argon2MemoryKiB     uint
	Argon2Iterations    uint
	Argon2Parallelism   uint
	Argon2MaxConcurrent int

	CacheTTL      time.Duration
	CacheNullTTL  time.Duration
	CacheJitter   time.Duration
	CacheLoadWait time.Duration
	CacheLocalTTL time.Duration

	MaxBodyBytes int64
	CORSOrigins  string

	ReadBuffer        int
	ReadPublishBatch  int
	ReadPublishFlush  time.Duration
	ReadTallyFlush    time.Duration
	ReadTallyMax      int
	ConsumerBatch     int
	ConsumerWait      time.Duration
	ConsumerClaimIdle time.Duration
	ConsumerClaimTick time.Duration
	// ConsumerMaxDeliveries: an entry delivered more often than this is tried once alone, then
	// moved to the stream's dead-letter stream (<stream>:dead).
	ConsumerMaxDeliveries int
	StreamMaxLen          int
	StreamTrimEvery       time.Duration

	QueueConcurrency int
	QueueLease       time.Duration
	QueuePoll        time.Duration
	QueueReapEvery   time.Duration
	OutboxPoll       time.Duration
	// The outbox's redelivery: an event published longer ago than OutboxRedeliverAfter and not
	// applied is published again, after a backoff capped at OutboxBackoffMax; the
	// OutboxMaxAttempts-th re-drive makes it dead.
	OutboxRedeliverAfter time.Duration
	OutboxMaxAttempts    int
	OutboxBackoffMax     time.Duration
	CodeSender           string
	CodeWebhookURL       string

	// SMTP delivery of every email (login codes, verification, password reset); MailHost empty
	// leaves email to CodeSender.
	MailHost          string
	MailPort          int
	MailUsername      string
	MailPassword      string
	MailFrom          string
	MailTLS           string // starttls, tls or none
	MailTimeout       time.Duration
	CodeValidity      time.Duration
	CodeResend        time.Duration
	CodeAttempts      int
	CodeFailureBudget int
	CodeDailySends    int
	CodeBudgetWindow  time.Duration
	CodeGlobalSends   int
	CodeGlobalWindow  time.Duration

	PprofAddr string
	// MetricsAddr is where GET /metrics is served, on a listener apart from Addr ("": nowhere).
	MetricsAddr string

	RankSchedule string
	RankTopN     int
	RankBatch    int
	RankCutoff   time.Duration
	RankTimeout  time.Duration
	RankLockTTL  time.Duration

	// The retention job (job/retention.go): when it runs, its batches, and how long each kind of
	// row is kept (0: for ever).
	RetentionSchedule      string // cron syntax, or "off"
	RetentionBatch         int
	RetentionPause         time.Duration
	RetentionInbox         time.Duration
	RetentionJobsDone      time.Duration
	RetentionJobsDead      time.Duration
	RetentionNotifications time.Duration
	RetentionSessions      time.Duration // grace after a session or refresh token became useless
	RetentionIdempotency   time.Duration
	RetentionCodes         time.Duration // grace after a code or meter expired
	RetentionHistory       int           // newest reading-history rows kept per user
	RetentionOutbox        time.Duration // applied outbox events
	RetentionOutboxDead    time.Duration
	// Full-text search: the PostgreSQL text search configuration (checked at start), and how often
	// each instance looks for published articles without a search document.
	SearchLanguage      string
	SearchBackfillEvery time.Duration

	// DevSecretFile holds the JWT secret in dev when JWTSecret is not set: created once, then read
	// by every process started with the same path, so tokens survive restarts and work on every
	// instance of a local fleet.
	DevSecretFile string
	// JWTSecretFromFile is set when the JWT secret was read from (or created in) DevSecretFile.
	JWTSecretFromFile bool

	envErrs []error // environment values that could not be parsed, reported by Validate

	// ConfigurePgPool, when set, adjusts every PostgreSQL pool's settings last. It is not a
	// setting (no flag or variable sets it): tests put their pools under a shared connection
	// budget with it (internal/testenv.LimitPool).
	ConfigurePgPool func(*pgxpool.Config)
}

// env reads an environment variable with a default.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// Flags registers every setting on fs and returns the Config they fill once fs is parsed.
func Flags(fs *flag.FlagSet) *Config {
	c := &Config{}
	str := func(p *string, name, envName, def, usage string) {
		fs.StringVar(p, name, env(envName, def), usage+" (env "+envName+")")
	}
	dur := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		d := def
		if v, ok := os.LookupEnv(envName); ok {
			if parsed, err := time.ParseDuration(v); err == nil {
				d = parsed
			} else {
				c.envErrs = append(c.envErrs, fmt.Errorf("%s=%q: %w", envName, v, err))
			}
		}
		fs.DurationVar(p, name, d, usage+" (env "+envName+")")
	}
	uintf := func(p *uint, name, envName string, def uint, usage string) {
		d := def
		if v, ok := os.LookupEnv(envName); ok {
			if parsed, err := strconv.ParseUint(v, 10, 32); err == nil {
				d = uint(parsed)
			} else {
				c.envErrs = append(c.envErrs, fmt.Errorf("%s=%q: not a whole number", envName, v))
			}
		}
		fs.UintVar(p, name, d, usage+" (env "+envName+")")
	}
	intf := func(p *int, name, envName string, def int, usage string) {
		d := def
		if v, ok := os.LookupEnv(envName); ok {
			if parsed, err := strconv.Atoi(v); err == nil {
				d = parsed
			} else {
				c.envErrs = append(c.envErrs, fmt.Errorf("%s=%q: not a whole number", envName, v))
			}
		}
		fs.IntVar(p, name, d, usage+" (env "+envName+")")
	}
	keep := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		*p = def
		if v, ok := os.LookupEnv(envName); ok {
			if err := (retentionAge{p}).Set(v); err != nil {
				c.envErrs = append(c.envErrs, fmt.Errorf("%s: %w", envName, err))
			}
		}
		fs.Var(retentionAge{p}, name, usage+" (env "+envName+")")
	}
	boolf := func(p *bool, name, envName string, usage string) {
		d := false
		if v, ok := os.LookupEnv(envName); ok {
			if parsed, err := strconv.ParseBool(v); err == nil {
				d = parsed
			} else {
				c.envErrs = append(c.envErrs, fmt.Errorf("%s=%q: want true or false", envName, v))
			}
		}
		fs.BoolVar(p, name, d, usage+" (env "+envName+")")
	}

	str(&c.Env, "env", "INKWELL_ENV", "dev", "environment: dev or prod; prod refuses to start without a JWT secret")
	str(&c.Addr, "addr", "INKWELL_ADDR", ":8080", "HTTP listen address")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable", "PostgreSQL connection URL")
	dur(&c.DBStatementTimeout, "db-statement-timeout", "INKWELL_DB_STATEMENT_TIMEOUT", 30*time.Second, "PostgreSQL cancels a statement of the server or job workers that runs longer (statement_timeout; 0 keeps the server's setting); not applied to migrate and seed")
	dur(&c.DBConnectTimeout, "db-connect-timeout", "INKWELL_DB_CONNECT_TIMEOUT", 5*time.Second, "give up opening a PostgreSQL connection after this long (DATABASE_URL's connect_timeout wins; 0: wait for ever), so a server that stops answering fails requests instead of holding them and the pool's slots")
	dur(&c.DBIdleInTxTimeout, "db-idle-in-tx-timeout", "INKWELL_DB_IDLE_IN_TX_TIMEOUT", time.Minute, "PostgreSQL ends a session whose transaction sits idle longer, releasing its locks (idle_in_transaction_session_timeout; 0 keeps the server's setting)")
	intf(&c.DBFallbackConcurrency, "db-fallback-concurrency", "INKWELL_DB_FALLBACK_CONCURRENCY", 0, "cache reads sent to PostgreSQL at once by this instance while Redis fails (0: half the pool's max connections); the rest wait INKWELL_DB_FALLBACK_WAIT, then get 503 with Retry-After: 1")
	dur(&c.DBFallbackWait, "db-fallback-wait", "INKWELL_DB_FALLBACK_WAIT", 100*time.Millisecond, "how long a cache read waits for one of the INKWELL_DB_FALLBACK_CONCURRENCY slots while Redis fails before it is answered 503")
	dur(&c.RequestTimeout, "request-timeout", "INKWELL_REQUEST_TIMEOUT", 30*time.Second, "deadline of one HTTP request's work (database and Redis calls stop with it; answered 503); 0 disables")
	dur(&c.IdempotencyWait, "idempotency-wait", "INKWELL_IDEMPOTENCY_WAIT", 3*time.Second, "how long a request repeating an Idempotency-Key waits for the first one to finish before it is answered 409")
	str(&c.RedisURL, "redis-url", "REDIS_URL", "redis://127.0.0.1:6379/0", "Redis URL, redis://[user:password@]host:port/db; in cluster and sentinel mode more nodes follow as ?addr=host:port&addr=host:port; read_timeout, write_timeout (300ms) and dial_timeout (1s) may be set the same way")
	str(&c.RedisMode, "redis-mode", "INKWELL_REDIS_MODE", "single", "how REDIS_URL is used: single (one server), cluster (seed nodes of a Redis Cluster) or sentinel (Sentinel addresses; needs INKWELL_REDIS_SENTINEL_MASTER)")
	str(&c.RedisMaster, "redis-sentinel-master", "INKWELL_REDIS_SENTINEL_MASTER", "", "sentinel mode: name of the master the Sentinels monitor")
	str(&c.RedisPrefix, "redis-prefix", "INKWELL_REDIS_PREFIX", "inkwell:", "prefix of every Redis key this instance writes")
	intf(&c.RedisBreakerFailures, "redis-breaker-failures", "INKWELL_REDIS_BREAKER_FAILURES", 5, "consecutive Redis timeouts or connection failures after which Redis calls fail fast (served from PostgreSQL)")
	dur(&c.RedisBreakerOpen, "redis-breaker-open", "INKWELL_REDIS_BREAKER_OPEN", time.Second, "how long Redis calls fail fast before one probe call tries Redis again")
	boolf(&c.MigrateOnStart, "migrate-on-start", "INKWELL_MIGRATE_ON_START", "apply pending migrations before serving")
	str(&c.LogLevel, "log-level", "INKWELL_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	str(&c.LogFormat, "log-format", "INKWELL_LOG_FORMAT", "json", "log format: json or text")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "INKWELL_SHUTDOWN_TIMEOUT", 15*time.Second, "how long graceful shutdown waits for requests and jobs to finish")
	dur(&c.DrainDelay, "drain-delay", "INKWELL_DRAIN_DELAY", 5*time.Second, "on SIGTERM or SIGINT, how long GET /readyz answers 503 draining while the server still serves, before it stops accepting connections (longer than the balancer takes to notice: its check interval times the failures it needs); a second signal cuts it short; 0 stops at once")

	str(&c.JWTSecret, "jwt-secret", "INKWELL_JWT_SECRET", "", "HS256 signing secret for access tokens, at least 32 bytes (required in prod)")
	str(&c.DevSecretFile, "dev-secret-file", "INKWELL_DEV_SECRET_FILE", DefaultDevSecretFile, "dev without INKWELL_JWT_SECRET: file holding the JWT secret (relative to the working directory), created once with 32 random bytes (mode 0600) and reused by every restart and every instance started with it")
	str(&c.JWTIssuer, "jwt-issuer", "INKWELL_JWT_ISSUER", "inkwell", "issuer (iss) written into and required of access tokens")
	// A day, not minutes: RealWorld front ends never refresh, and every request checks the token's
	// session for revocation, so a logout or password change still ends a token at once. Clients
	// that refresh can set it short (e.g. 15m) and rotate with refresh tokens.
	dur(&c.JWTLifetime, "jwt-lifetime", "INKWELL_JWT_LIFETIME", DefaultJWTLifetime, "access token lifetime (RealWorld front ends never refresh; native clients that refresh can set e.g. 15m)")
	dur(&c.RefreshLifetime, "refresh-lifetime", "INKWELL_REFRESH_LIFETIME", 30*24*time.Hour, "refresh token lifetime")
	intf(&c.SessionsPerUser, "sessions-per-user", "INKWELL_SESSIONS_PER_USER", 100, "live login sessions one user may hold; a login past it ends the least recently used (refreshed) one")
	str(&c.RateAuth, "rate-auth", "INKWELL_RATE_AUTH", "60/1m", "per-client-IP limit on registration, login and code login (N/duration; 0 disables)")
	str(&c.RateWrites, "rate-writes", "INKWELL_RATE_WRITES", "300/1m", "per-user limit on writes (N/duration; 0 disables)")
	str(&c.RateSearch, "rate-search", "INKWELL_RATE_SEARCH", "120/1m", "per-client limit on GET /api/search/* (the user when signed in, else the client IP; N/duration; 0 disables)")
	str(&c.TrustedProxies, "trusted-proxies", "INKWELL_TRUSTED_PROXIES", "", "comma-separated proxy IPs/CIDRs whose X-Forwarded-For names the client")

	uintf(&c.Argon2MemoryKiB, "argon2-memory-kib", "INKWELL_ARGON2_MEMORY_KIB", 19*1024, "Argon2id memory per hash in KiB (minimum 19456)")
	uintf(&c.Argon2Iterations, "argon2-iterations", "INKWELL_ARGON2_ITERATIONS", 2, "Argon2id iterations (minimum 2)")
	uintf(&c.Argon2Parallelism, "argon2-parallelism", "INKWELL_ARGON2_PARALLELISM", 1, "Argon2id lanes (minimum 1)")

	dur(&c.CacheTTL, "cache-ttl", "INKWELL_CACHE_TTL", 10*time.Minute, "base lifetime of cached entries")
	dur(&c.CacheJitter, "cache-ttl-jitter", "INKWELL_CACHE_TTL_JITTER", 2*time.Minute, "random extra added to each cached entry's lifetime")
	dur(&c.CacheNullTTL, "cache-null-ttl", "INKWELL_CACHE_NULL_TTL", 30*time.Second, "lifetime of 'does not exist' markers")
	dur(&c.CacheLoadWait, "cache-load-timeout", "INKWELL_CACHE_LOAD_TIMEOUT", 3*time.Second, "timeout of one cache-miss load from PostgreSQL")
	dur(&c.CacheLocalTTL, "cache-local-ttl", "INKWELL_CACHE_LOCAL_TTL", 2*time.Second, "in-process copy of hot user and article entries in front of Redis (0 disables); other instances' writes drop it through the invalidation channel, and this bounds a copy whose change was not broadcast")

	str(&c.CORSOrigins, "cors-origins", "INKWELL_CORS_ORIGINS", "", "comma-separated browser origins allowed to call the API (e.g. https://conduit.example); '*' allows any; empty means any in dev and none in prod")

	intf(&c.ReadBuffer, "read-buffer", "INKWELL_READ_BUFFER", 10000, "read events held in memory before new ones are dropped")
	intf(&c.ReadPublishBatch, "read-publish-batch", "INKWELL_READ_PUBLISH_BATCH", 256, "read events sent to the stream in one pipelined round trip")
	dur(&c.ReadPublishFlush, "read-publish-flush", "INKWELL_READ_PUBLISH_FLUSH", 20*time.Millisecond, "longest wait before a partial batch of read events is sent")
	dur(&c.ReadTallyFlush, "read-tally-flush", "INKWELL_READ_TALLY_FLUSH", 100*time.Millisecond, "how often the in-process tally of anonymous reads is sent (what a crash can lose)")
	intf(&c.ReadTallyMax, "read-tally-max", "INKWELL_READ_TALLY_MAX", 10000, "anonymous reads tallied in process before an early send")
	intf(&c.ConsumerBatch, "consumer-batch", "INKWELL_CONSUMER_BATCH", 1000, "stream entries a consumer applies in one batch (N)")
	dur(&c.ConsumerWait, "consumer-wait", "INKWELL_CONSUMER_WAIT", 200*time.Millisecond, "longest wait for a consumer batch to fill (T)")
	dur(&c.ConsumerClaimIdle, "consumer-claim-idle", "INKWELL_CONSUMER_CLAIM_IDLE", 30*time.Second, "how long an entry stays unacknowledged before another consumer reclaims it")
	dur(&c.ConsumerClaimTick, "consumer-claim-every", "INKWELL_CONSUMER_CLAIM_EVERY", 10*time.Second, "how often a consumer looks for entries to reclaim")
	intf(&c.ConsumerMaxDeliveries, "consumer-max-deliveries", "INKWELL_CONSUMER_MAX_DELIVERIES", 10, "deliveries of a stream entry before it is tried alone once more and then moved to <stream>:dead")
	intf(&c.StreamMaxLen, "stream-maxlen", "INKWELL_STREAM_MAXLEN", 100000, "approximate length each event stream (read events, outbox) is trimmed to (never past entries a consumer group has not acknowledged or read)")
	dur(&c.StreamTrimEvery, "stream-trim-every", "INKWELL_STREAM_TRIM_EVERY", 10*time.Second, "how often the event streams (read events, outbox) are trimmed")

	str(&c.RankSchedule, "rank-schedule", "INKWELL_RANK_SCHEDULE", "@every 1m", "when the hot-list ranking job runs (cron syntax, or @every <duration>)")
	intf(&c.RankTopN, "rank-top-n", "INKWELL_RANK_TOP_N", 100, "size of the hot list")
	intf(&c.RankBatch, "rank-batch", "INKWELL_RANK_BATCH", 10000, "articles the ranking job scans per query")
	dur(&c.RankCutoff, "rank-cutoff", "INKWELL_RANK_CUTOFF", 7*24*time.Hour, "articles published longer ago are not ranked")
	dur(&c.RankTimeout, "rank-timeout", "INKWELL_RANK_TIMEOUT", 30*time.Second, "a ranking run that takes longer is cancelled and keeps the previous list")
	dur(&c.RankLockTTL, "rank-lock-ttl", "INKWELL_RANK_LOCK_TTL", 15*time.Second, "lease of the ranking lock, renewed every third of it for as long as this instance holds it (between runs too)")

	str(&c.RetentionSchedule, "retention-schedule", "INKWELL_RETENTION_SCHEDULE", "@every 10m", "when the retention job deletes rows no longer kept, one instance of the fleet at a time (cron syntax, @every <duration>, or off)")
	intf(&c.RetentionBatch, "retention-batch", "INKWELL_RETENTION_BATCH", 5000, "rows one retention statement deletes at most (each its own transaction)")
	dur(&c.RetentionPause, "retention-pause", "INKWELL_RETENTION_PAUSE", 100*time.Millisecond, "pause between two retention statements of one table")
	keep(&c.RetentionInbox, "retention-inbox", "INKWELL_RETENTION_INBOX", 24*time.Hour, "consumer inbox records (event ids applied) are kept this long: at least 1h, far past any redelivery (a duration, Nd, or off for ever; so for every INKWELL_RETENTION_* age)")
	keep(&c.RetentionJobsDone, "retention-jobs-done", "INKWELL_RETENTION_JOBS_DONE", 7*24*time.Hour, "done background jobs are kept this long after they finished")
	keep(&c.RetentionJobsDead, "retention-jobs-dead", "INKWELL_RETENTION_JOBS_DEAD", 30*24*time.Hour, "dead background jobs are kept this long (for 'inkwell jobs retry')")
	keep(&c.RetentionNotifications, "retention-notifications", "INKWELL_RETENTION_NOTIFICATIONS", 90*24*time.Hour, "notifications are kept this long, read or not")
	keep(&c.RetentionSessions, "retention-sessions", "INKWELL_RETENTION_SESSIONS", 24*time.Hour, "grace before the rows of a refresh token past its expiry, and of a session that can no longer be refreshed (revoked, or not refreshed for INKWELL_REFRESH_LIFETIME), are deleted")
	keep(&c.RetentionIdempotency, "retention-idempotency", "INKWELL_RETENTION_IDEMPOTENCY", 24*time.Hour, "Idempotency-Key records are kept this long (at least 24h, how long they are replayed)")
	keep(&c.RetentionOutbox, "retention-outbox", "INKWELL_RETENTION_OUTBOX", 24*time.Hour, "outbox events their consumer applied are kept this long after they were made")
	keep(&c.RetentionOutboxDead, "retention-outbox-dead", "INKWELL_RETENTION_OUTBOX_DEAD", 30*24*time.Hour, "dead outbox events are kept this long after they were made (for 'inkwell outbox retry')")
	keep(&c.RetentionCodes, "retention-codes", "INKWELL_RETENTION_CODES", time.Hour, "grace before expired login codes, their PostgreSQL meters and email verification / password reset codes are deleted")
	c.RetentionHistory = 1000
	if v, ok := os.LookupEnv("INKWELL_RETENTION_HISTORY"); ok {
		if err := (retentionCount{&c.RetentionHistory}).Set(v); err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("INKWELL_RETENTION_HISTORY: %w", err))
		}
	}
	fs.Var(retentionCount{&c.RetentionHistory}, "retention-history", "reading-history rows kept per user, the newest (off keeps all) (env INKWELL_RETENTION_HISTORY)")
	str(&c.SearchLanguage, "search-language", "INKWELL_SEARCH_LANGUAGE", "english", "PostgreSQL text search configuration articles are indexed and searched in (SELECT cfgname FROM pg_ts_config); after changing it, run 'inkwell search reindex'")
	dur(&c.SearchBackfillEvery, "search-backfill-every", "INKWELL_SEARCH_BACKFILL_EVERY", time.Minute, "how often an instance indexes published articles that have no search document yet (written before the search migration, or by an older version); one instance of a fleet at a time")

	intf(&c.QueueConcurrency, "queue-concurrency", "INKWELL_QUEUE_CONCURRENCY", 4, "jobs this process runs at once per queue")
	dur(&c.QueueLease, "queue-lease", "INKWELL_QUEUE_LEASE", 30*time.Second, "lease of a claimed job; renewed while its handler runs")
	dur(&c.QueuePoll, "queue-poll", "INKWELL_QUEUE_POLL", time.Second, "how often idle workers look for jobs (LISTEN/NOTIFY wakes them sooner)")
	dur(&c.QueueReapEvery, "queue-reap-every", "INKWELL_QUEUE_REAP_EVERY", 5*time.Second, "how often expired job leases are returned to the queue")
	dur(&c.OutboxPoll, "outbox-poll", "INKWELL_OUTBOX_POLL", time.Second, "how often the outbox relay looks for events (LISTEN/NOTIFY wakes it sooner)")
	dur(&c.OutboxRedeliverAfter, "outbox-redeliver-after", "INKWELL_OUTBOX_REDELIVER_AFTER", 2*time.Minute, "an outbox event published this long ago and not applied is published again (must exceed the consumer's claim idle plus its claim interval)")
	intf(&c.OutboxMaxAttempts, "outbox-max-attempts", "INKWELL_OUTBOX_MAX_ATTEMPTS", 10, "re-drives of an unapplied outbox event before it is dead ('inkwell outbox')")
	dur(&c.OutboxBackoffMax, "outbox-backoff-max", "INKWELL_OUTBOX_BACKOFF_MAX", 10*time.Minute, "longest wait before a re-driven outbox event is published again (10s doubling per attempt, up to this)")
	str(&c.CodeSender, "code-sender", "INKWELL_CODE_SENDER", "log", "how login codes are delivered: log (development: written to the log) or webhook")
	str(&c.CodeWebhookURL, "code-webhook-url", "INKWELL_CODE_WEBHOOK_URL", "", "URL the webhook code sender POSTs {channel, to, code} to")

	str(&c.MailHost, "mail-host", "INKWELL_MAIL_HOST", "", "SMTP server that sends every email (login codes, verification, password reset); empty leaves email to INKWELL_CODE_SENDER")
	intf(&c.MailPort, "mail-port", "INKWELL_MAIL_PORT", 587, "SMTP port (587 for starttls, 465 for tls)")
	str(&c.MailUsername, "mail-username", "INKWELL_MAIL_USERNAME", "", "SMTP user name; empty sends without authentication")
	str(&c.MailPassword, "mail-password", "INKWELL_MAIL_PASSWORD", "", "SMTP password")
	str(&c.MailFrom, "mail-from", "INKWELL_MAIL_FROM", "", "From address of the mails, e.g. 'inkwell <no-reply@example.com>' (required with INKWELL_MAIL_HOST)")
	str(&c.MailTLS, "mail-tls", "INKWELL_MAIL_TLS", "starttls", "SMTP encryption: starttls (required, not opportunistic), tls (implicit, port 465) or none (a relay on a trusted network only)")
	dur(&c.MailTimeout, "mail-timeout", "INKWELL_MAIL_TIMEOUT", 10*time.Second, "SMTP connect and command timeout")
	dur(&c.CodeValidity, "code-validity", "INKWELL_CODE_VALIDITY", 10*time.Minute, "how long a login code is valid")
	dur(&c.CodeResend, "code-resend", "INKWELL_CODE_RESEND", time.Minute, "at most one login code per email or phone this often")
	intf(&c.CodeAttempts, "code-attempts", "INKWELL_CODE_ATTEMPTS", 3, "wrong guesses one login code allows before it burns")
	intf(&c.CodeFailureBudget, "code-failure-budget", "INKWELL_CODE_FAILURE_BUDGET", 10, "wrong login-code guesses per email or phone per INKWELL_CODE_BUDGET_WINDOW, across codes; then six-digit codes for it answer 429 and sends make strong codes")
	intf(&c.CodeDailySends, "code-daily-sends", "INKWELL_CODE_DAILY_SENDS", 10, "login codes one client (IP) may have sent to one email or phone per INKWELL_CODE_BUDGET_WINDOW")
	dur(&c.CodeBudgetWindow, "code-budget-window", "INKWELL_CODE_BUDGET_WINDOW", 24*time.Hour, "window of the per-target failure budget and send cap, from the target's first send or wrong guess")
	intf(&c.CodeGlobalSends, "code-global-sends", "INKWELL_CODE_GLOBAL_SENDS", 600, "login codes sent to anyone per INKWELL_CODE_GLOBAL_WINDOW (SMS pumping guard)")
	dur(&c.CodeGlobalWindow, "code-global-window", "INKWELL_CODE_GLOBAL_WINDOW", time.Minute, "window of INKWELL_CODE_GLOBAL_SENDS")

	str(&c.MetricsAddr, "metrics-addr", "INKWELL_METRICS_ADDR", ":9464", "serve GET /metrics (Prometheus) on this address, a listener apart from INKWELL_ADDR that the balancer does not forward; empty disables")
	str(&c.PprofAddr, "pprof-addr", "INKWELL_PPROF_ADDR", "", "serve /debug/pprof on this loopback address (e.g. 127.0.0.1:6060); empty disables")

	c.MaxBodyBytes = 1 << 20
	c.Argon2MaxConcurrent = 8
	return c
}

// Validate checks the settings and fills what dev mode may generate. log receives the warning
// about a generated JWT secret.
func (c *Config) Validate(log *slog.Logger) error {
	errs := append([]error(nil), c.envErrs...)
	switch c.Env {
	case "dev", "prod":
	default:
		errs = append(errs, fmt.Errorf("INKWELL_ENV must be dev or prod, not %q", c.Env))
	}
	if c.JWTSecret == "" {
		if c.Env == "prod" {
			errs = append(errs, errors.New("INKWELL_JWT_SECRET is required when INKWELL_ENV=prod (use at least 32 random bytes, e.g. `openssl rand -hex 32`)"))
		}
	} else if len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("INKWELL_JWT_SECRET must be at least 32 bytes"))
	}
	if c.JWTLifetime <= 0 || c.RefreshLifetime <= 0 {
		errs = append(errs, errors.New("INKWELL_JWT_LIFETIME and INKWELL_REFRESH_LIFETIME must be positive"))
	}
	if c.IdempotencyWait <= 0 {
		errs = append(errs, fmt.Errorf("INKWELL_IDEMPOTENCY_WAIT must be positive, not %s", c.IdempotencyWait))
	}
	if c.SessionsPerUser < 1 {
		errs = append(errs, fmt.Errorf("INKWELL_SESSIONS_PER_USER must be at least 1, not %d", c.SessionsPerUser))
	}
	for name, v := range map[string]string{"INKWELL_RATE_AUTH": c.RateAuth, "INKWELL_RATE_WRITES": c.RateWrites, "INKWELL_RATE_SEARCH": c.RateSearch} {
		if _, _, err := ParseRate(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	redisMode := true
	switch c.RedisMode {
	case "", RedisSingle, RedisCluster, RedisSentinel: // empty means single
	default:
		redisMode = false
		errs = append(errs, fmt.Errorf("INKWELL_REDIS_MODE must be single, cluster or sentinel, not %q", c.RedisMode))
	}
	if !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		errs = append(errs, fmt.Errorf("REDIS_URL must look like redis://host:port/db, not %q", c.RedisURL))
	} else if redisMode {
		if _, err := RedisOptions(c); err != nil {
			errs = append(errs, err)
		}
	}
	if c.CodeValidity <= c.CodeResend || c.CodeResend < time.Second || c.CodeBudgetWindow < time.Second || c.CodeGlobalWindow < time.Second {
		errs = append(errs, errors.New("INKWELL_CODE_RESEND, _BUDGET_WINDOW and _GLOBAL_WINDOW must be at least 1s, and INKWELL_CODE_VALIDITY longer than INKWELL_CODE_RESEND"))
	}
	if c.CodeAttempts < 1 || c.CodeFailureBudget < 1 || c.CodeDailySends < 1 || c.CodeGlobalSends < 1 {
		errs = append(errs, errors.New("INKWELL_CODE_ATTEMPTS, _FAILURE_BUDGET, _DAILY_SENDS and _GLOBAL_SENDS must be at least 1"))
	}
	if c.CacheTTL <= 0 || c.CacheNullTTL <= 0 || c.CacheJitter < 0 || c.CacheLoadWait <= 0 || c.CacheLocalTTL < 0 {
		errs = append(errs, errors.New("cache TTLs and the load timeout must be positive (jitter may be 0)"))
	}
	if c.ReadBuffer < 1 || c.ReadPublishBatch < 1 || c.ReadTallyMax < 1 || c.ConsumerBatch < 1 || c.StreamMaxLen < 1 {
		errs = append(errs, errors.New("read-event buffer, batch sizes and stream length must be at least 1"))
	}
	if c.ReadPublishFlush <= 0 || c.ReadTallyFlush <= 0 || c.ConsumerWait <= 0 || c.ConsumerClaimIdle <= 0 || c.ConsumerClaimTick <= 0 || c.StreamTrimEvery <= 0 {
		errs = append(errs, errors.New("read-event intervals must be positive"))
	}
	if c.RankTopN < 1 || c.RankTopN > 10000 || c.RankBatch < 1 {
		errs = append(errs, errors.New("INKWELL_RANK_TOP_N must be 1..10000 and INKWELL_RANK_BATCH at least 1"))
	}
	if strings.TrimSpace(c.SearchLanguage) == "" || c.SearchBackfillEvery <= 0 {
		errs = append(errs, errors.New("INKWELL_SEARCH_LANGUAGE must name a text search configuration and INKWELL_SEARCH_BACKFILL_EVERY be positive"))
	}
	if c.RankCutoff <= 0 || c.RankTimeout <= 0 || c.RankLockTTL < 300*time.Millisecond {
		errs = append(errs, errors.New("ranking cutoff and timeout must be positive and the lock TTL at least 300ms"))
	}
	if _, err := cron.ParseStandard(c.RankSchedule); err != nil {
		errs = append(errs, fmt.Errorf("INKWELL_RANK_SCHEDULE %q: %w", c.RankSchedule, err))
	}
	if c.DBFallbackConcurrency < 0 || c.DBFallbackWait < 0 || c.RequestTimeout < 0 {
		errs = append(errs, errors.New("INKWELL_DB_FALLBACK_CONCURRENCY, INKWELL_DB_FALLBACK_WAIT and INKWELL_REQUEST_TIMEOUT must not be negative"))
	}
	errs = append(errs, c.validateRetention()...)
	if c.DBConnectTimeout < 0 {
		errs = append(errs, errors.New("INKWELL_DB_CONNECT_TIMEOUT must be 0 (no bound) or positive"))
	}
	if c.DBStatementTimeout < 0 || c.DBIdleInTxTimeout < 0 || (c.DBStatementTimeout > 0 && c.DBStatementTimeout < time.Millisecond) || (c.DBIdleInTxTimeout > 0 && c.DBIdleInTxTimeout < time.Millisecond) {
		errs = append(errs, errors.New("INKWELL_DB_STATEMENT_TIMEOUT and INKWELL_DB_IDLE_IN_TX_TIMEOUT must be 0 (server's setting) or at least 1ms"))
	}
	if c.QueueConcurrency < 1 || c.QueueLease < time.Second || c.QueuePoll <= 0 || c.QueueReapEvery <= 0 || c.OutboxPoll <= 0 {
		errs = append(errs, errors.New("queue concurrency must be at least 1, the lease at least 1s, and intervals positive"))
	}
	if c.ConsumerMaxDeliveries < 1 || c.OutboxMaxAttempts < 1 || c.OutboxBackoffMax <= 0 {
		errs = append(errs, errors.New("INKWELL_CONSUMER_MAX_DELIVERIES and INKWELL_OUTBOX_MAX_ATTEMPTS must be at least 1, INKWELL_OUTBOX_BACKOFF_MAX positive"))
	}
	if c.OutboxRedeliverAfter <= c.ConsumerClaimIdle+c.ConsumerClaimTick {
		errs = append(errs, fmt.Errorf("INKWELL_OUTBOX_REDELIVER_AFTER (%s) must exceed INKWELL_CONSUMER_CLAIM_IDLE plus INKWELL_CONSUMER_CLAIM_EVERY (%s): a healthy consumer's reclaim would race the re-drive",
			c.OutboxRedeliverAfter, c.ConsumerClaimIdle+c.ConsumerClaimTick))
	}
	switch c.CodeSender {
	case "log":
		if c.Env == "prod" {
			errs = append(errs, errors.New("INKWELL_CODE_SENDER=log only logs codes; in prod use webhook with INKWELL_CODE_WEBHOOK_URL"))
		}
	case "webhook":
		if !strings.HasPrefix(c.CodeWebhookURL, "http://") && !strings.HasPrefix(c.CodeWebhookURL, "https://") {
			errs = append(errs, errors.New("INKWELL_CODE_SENDER=webhook needs INKWELL_CODE_WEBHOOK_URL (http or https)"))
		}
	default:
		errs = append(errs, fmt.Errorf("INKWELL_CODE_SENDER must be log or webhook, not %q", c.CodeSender))
	}
	errs = append(errs, c.validateMail()...)
	if err := validatePprofAddr(c.PprofAddr); err != nil {
		errs = append(errs, err)
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("INKWELL_METRICS_ADDR %q: want host:port, e.g. :9464 or 127.0.0.1:9464 (empty disables): %w", c.MetricsAddr, err))
		} else if c.MetricsAddr == c.Addr && port != "0" { // port 0: each listener gets a port of its own
			errs = append(errs, fmt.Errorf("INKWELL_METRICS_ADDR must differ from INKWELL_ADDR (%s): the metrics have a listener of their own", c.Addr))
		}
	}
	if _, err := ParseTrustedProxies(c.TrustedProxies); err != nil {
		errs = append(errs, err)
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("INKWELL_SHUTDOWN_TIMEOUT must be positive"))
	}
	if c.DrainDelay < 0 {
		errs = append(errs, errors.New("INKWELL_DRAIN_DELAY must be 0 (no drain) or positive"))
	}
	if c.RedisBreakerFailures < 1 || c.RedisBreakerOpen < 10*time.Millisecond {
		errs = append(errs, errors.New("INKWELL_REDIS_BREAKER_FAILURES must be at least 1 and INKWELL_REDIS_BREAKER_OPEN at least 10ms"))
	}
	// Last, and only for an otherwise valid dev configuration: a process that will not start
	// leaves no secret file behind.
	if len(errs) == 0 && c.JWTSecret == "" && c.Env == "dev" {
		secret, created, err := LoadDevSecret(c.DevSecretFile)
		if err != nil {
			return err
		}
		c.JWTSecret, c.JWTSecretFromFile = secret, true
		if log != nil {
			verb := "read"
			if created {
				verb = "created"
			}
			file := c.DevSecretFile
			if abs, err := filepath.Abs(file); err == nil {
				file = abs
			}
			log.Warn("INKWELL_JWT_SECRET is not set: signing tokens with the dev secret file; every instance started with this file shares its tokens (INKWELL_ENV=prod refuses to start without INKWELL_JWT_SECRET)",
				"file", file, "action", verb)
		}
	}
	return errors.Join(errs...)
}

// ParseRate reads a limit like "60/1m" (60 requests per minute); "0" disables the limit.
func ParseRate(s string) (int, time.Duration, error) {
	if s == "0" || s == "" {
		return 0, 0, nil
	}
	n, w, ok := strings.Cut(s, "/")
	limit, err := strconv.Atoi(n)
	if !ok || err != nil || limit < 0 {
		return 0, 0, fmt.Errorf("%q: want N/duration, e.g. 60/1m", s)
	}
	window, err := time.ParseDuration(w)
	if err != nil || window <= 0 {
		return 0, 0, fmt.Errorf("%q: want N/duration, e.g. 60/1m", s)
	}
	return limit, window, nil
}

// validateRetention checks the retention settings: ages never cut what the app still reads.
func (c *Config) validateRetention() []error {
	var errs []error
	if c.RetentionSchedule != RetentionOff {
		if _, err := cron.ParseStandard(c.RetentionSchedule); err != nil {
			errs = append(errs, fmt.Errorf("INKWELL_RETENTION_SCHEDULE %q: %w (or off)", c.RetentionSchedule, err))
		}
	}
	if c.RetentionBatch < 1 || c.RetentionBatch > 100_000 || c.RetentionPause < 0 {
		errs = append(errs, errors.New("INKWELL_RETENTION_BATCH must be 1..100000 and INKWELL_RETENTION_PAUSE not negative"))
	}
	if c.RetentionInbox > 0 && c.RetentionInbox < time.Hour {
		errs = append(errs, errors.New("INKWELL_RETENTION_INBOX must be at least 1h (or off): a redelivered event whose inbox record is gone is applied twice"))
	}
	if c.RetentionIdempotency > 0 && c.RetentionIdempotency < 24*time.Hour {
		errs = append(errs, errors.New("INKWELL_RETENTION_IDEMPOTENCY must be at least 24h (or off): keys are replayed for 24 hours"))
	}
	return errs
}

// validateMail checks the SMTP settings, which matter only once INKWELL_MAIL_HOST is set.
func (c *Config) validateMail() []error {
	if c.MailHost == "" {
		return nil
	}
	var errs []error
	switch c.MailTLS {
	case "starttls", "tls", "none":
	default:
		errs = append(errs, fmt.Errorf("INKWELL_MAIL_TLS must be starttls, tls or none, not %q", c.MailTLS))
	}
	if c.MailPort < 1 || c.MailPort > 65535 {
		errs = append(errs, fmt.Errorf("INKWELL_MAIL_PORT must be 1..65535, not %d", c.MailPort))
	}
	if _, err := mail.ParseAddress(c.MailFrom); err != nil {
		errs = append(errs, fmt.Errorf("INKWELL_MAIL_FROM must be a mail address, e.g. 'inkwell <no-reply@example.com>' (%q: %w)", c.MailFrom, err))
	}
	if c.MailTimeout <= 0 {
		errs = append(errs, errors.New("INKWELL_MAIL_TIMEOUT must be positive"))
	}
	if c.MailUsername != "" && c.MailTLS == "none" && c.Env == "prod" {
		errs = append(errs, errors.New("INKWELL_MAIL_TLS=none would send the SMTP password in the clear; use starttls or tls in prod"))
	}
	return errs
}
