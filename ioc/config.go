package ioc

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
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

// Config is every setting of inkwell, one struct per group (see declare, the one place each is
// declared). Each comes from a command-line flag, else from its environment variable, else from
// its default.
type Config struct {
	Server    ServerConfig
	Database  DatabaseConfig
	Redis     RedisConfig
	Auth      AuthConfig
	Mail      MailConfig
	Search    SearchConfig
	Jobs      JobsConfig
	Uploads   UploadsConfig
	Retention RetentionConfig
	Media     MediaConfig
	SignIn    SignInConfig
	Webhooks  WebhooksConfig
	Telemetry TelemetryConfig

	// Tune replaces tuning constants in tests; see Tuning. No flag or variable sets it.
	Tune Tuning

	envErrs []error // environment values that could not be parsed, reported by Validate
	removed []Removed

	// ConfigurePgPool, when set, adjusts every PostgreSQL pool's settings last. It is not a
	// setting (no flag or variable sets it): tests put their pools under a shared connection
	// budget with it (internal/testenv.LimitPool).
	ConfigurePgPool func(*pgxpool.Config)
}

// ServerConfig is the HTTP server's and the process's.
type ServerConfig struct {
	Env             string // "dev" or "prod"
	Addr            string
	PublicURL       string        // the site's public base URL ("": http://localhost:PORT of Addr); see PublicBaseURL
	ArticleURL      string        // the article link template: {public} and {slug} are replaced
	RequestTimeout  time.Duration // bounds the work of one HTTP request (its context's deadline; 0: none)
	ShutdownTimeout time.Duration
	DrainDelay      time.Duration // after SIGTERM, how long /readyz answers 503 while the server still serves
	MigrateOnStart  bool
	CORSOrigins     string
	TrustedProxies  string
	RateAuth        string
	RateWrites      string
	RateSearch      string
}

// UploadsConfig bounds users' uploads (POST /api/uploads): one file's bytes and each user's quota.
type UploadsConfig struct {
	MaxBytes string // a byte size: "10MB"
	Quota    string // "100MB/day,1GB": bytes per rolling day and in all
}

// DatabaseConfig is PostgreSQL's. The session timeouts are parameters of the URLs (see
// SessionTimeouts), not settings of their own.
type DatabaseConfig struct {
	URL string
	// Pooler names what DATABASE_URL reaches: "" (PostgreSQL itself) or PoolerPgBouncer (a
	// PgBouncer in transaction pooling mode; DirectURL then reaches PostgreSQL itself).
	Pooler string
	// DirectURL reaches PostgreSQL itself, for what needs a session (SessionURL); empty: URL.
	DirectURL string
	// ReplicaURLs are the read replicas' connection URLs (DATABASE_REPLICA_URLS, comma-separated;
	// Replicas splits them); empty: every read is the primary's.
	ReplicaURLs string
	// ReplicaMaxLag bounds how old the data an anonymous read gets from a replica may be; a
	// replica further behind leaves the rotation until it catches up.
	ReplicaMaxLag time.Duration
}

// RedisConfig is Redis's and the caches' in front of it.
type RedisConfig struct {
	URL    string
	Mode   string // "single", "cluster" or "sentinel": how URL is read
	Prefix string
}

// AuthConfig is tokens, sessions, password hashing and login codes.
type AuthConfig struct {
	JWTSecret       string
	JWTIssuer       string
	JWTLifetime     time.Duration
	RefreshLifetime time.Duration
	SessionsPerUser int
	Argon2MemoryKiB uint
	CodeValidity    time.Duration
	// DevSecretFile holds the JWT secret in dev when JWTSecret is not set: created once, then read
	// by every process started with the same path, so tokens survive restarts and work on every
	// instance of a local fleet.
	DevSecretFile string
	// JWTSecretFromFile is set when the JWT secret was read from (or created in) DevSecretFile.
	JWTSecretFromFile bool
}

// MailConfig is the delivery of codes: SMTP for every email when URL is set (ParseMailURL reads
// it), else CodeSender.
type MailConfig struct {
	// CodeSender is CodeSenderLog, or the http(s) URL the webhook code sender POSTs to (see
	// CodeWebhook).
	CodeSender string
	URL        string // smtp://user:password@host:port?tls=starttls; empty: no SMTP
	From       string
}

// CodeSenderLog is the code sender of development: codes are written to the log.
const CodeSenderLog = "log"

// CodeWebhook is the URL the webhook code sender POSTs to, and whether INKWELL_CODE_SENDER names
// one (it is not CodeSenderLog).
func (m MailConfig) CodeWebhook() (string, bool) {
	return m.CodeSender, m.CodeSender != CodeSenderLog
}

// SearchConfig is full-text search's.
type SearchConfig struct {
	Language string // the PostgreSQL text search configuration (checked at start)
}

// JobsConfig is the scheduled jobs' (the hot list).
type JobsConfig struct {
	RankSchedule string
	RankTopN     int
}

// RetentionConfig is when the retention job runs and how long user data is kept (0: for ever);
// the retention of internal tables is constant (see the root package's retention.go).
type RetentionConfig struct {
	Schedule      string // cron syntax, or "off"
	Notifications time.Duration
	Sessions      time.Duration // grace after a session or refresh token became useless
	History       int           // newest reading-history rows kept per user
}

// MediaConfig is the media store's: where uploaded images are kept (ParseMediaURL reads URL).
type MediaConfig struct {
	URL string
}

// SignInConfig is sign-in with providers (issue #30). Each provider's own settings are a family
// of environment variables, read by OIDCProviders.
type SignInConfig struct {
	Providers     string // comma-separated provider names
	RedirectAllow string // comma-separated front-end origins a sign-in may return to

	// Env reads the INKWELL_OIDC_<NAME>_* family; nil: the process's environment. Not a setting:
	// parallel tests give each app its providers' issuers without touching the environment.
	Env func(name string) string
}

// WebhooksConfig is webhooks' (#33): the key signing secrets are encrypted with at rest, and
// whether endpoints may be private addresses.
type WebhooksConfig struct {
	Key          string // base64 of 32 bytes; empty: derived from the JWT secret (with a warning)
	AllowPrivate bool   // development and tests: http and private, loopback, link-local endpoints
}

// TelemetryConfig is logs, metrics and profiling.
type TelemetryConfig struct {
	LogLevel    string
	LogFormat   string
	MetricsAddr string // where GET /metrics is served, on a listener apart from Server.Addr ("": nowhere)
	PprofAddr   string
}

// Tuning replaces tuning constants for tests that need another value (a short claim interval, a
// long idempotency wait). Each nil field keeps the constant the wiring takes from the package it
// tunes. It is not a setting: no flag or variable sets it, so a process (apptest.StartProcess)
// never gets it.
type Tuning struct {
	QueuePoll, OutboxPoll                  *time.Duration
	OutboxRedeliverAfter, OutboxBackoffMax *time.Duration
	ConsumerClaimIdle, ConsumerClaimEvery  *time.Duration
	ReadTallyFlush                         *time.Duration
	CacheJitter                            *time.Duration
	CacheLocalTTL, BreakerOpen             *time.Duration
	IdempotencyWait                        *time.Duration
	DBFallbackConcurrency                  *int
	DBFallbackWait                         *time.Duration
	CodeAttempts, CodeFailureBudget        *int
	CodeDailySends                         *int
	WebhookRetryBase                       *time.Duration
	StreamHeartbeat                        *time.Duration // service.DefaultNotificationStreamConfig's 25 s
	StreamPerUser                          *int           // its 5
	StreamPerInstance                      *int           // half the open-file limit (notification_stream.go)

	// WebhookRetryMax replaces domain.WebhookRetry's 6 h cap of one backoff (with WebhookRetryBase,
	// a delivery's 16 attempts take a second); WebhookClock the webhook service's clock (an
	// endpoint's failing time: days of failures in seconds; the signatures' timestamps too).
	WebhookRetryMax *time.Duration
	WebhookClock    func() time.Time
}

// Or is *p when the test set it, else the constant def.
func Or[T any](p *T, def T) T {
	if p != nil {
		return *p
	}
	return def
}

// declare declares every setting of c: the one list of them. Each declaration sets its field to
// the default.
func declare(c *Config) *decls {
	d := &decls{}
	s := &c.Server
	d.group = "server"
	d.str(&s.Env, "env", "dev", "environment: dev or prod; prod refuses to start without a JWT secret", oneOf("dev", "prod"))
	d.str(&s.Addr, "addr", ":8080", "HTTP listen address")
	d.str(&s.PublicURL, "public-url", "", "where browsers and crawlers reach this server, e.g. https://api.blog.example: absolute http(s), no query or fragment (a trailing slash is trimmed); sign-in callbacks ({public}/api/auth/oidc/{name}/callback; the sign-in cookie is Secure when it is https), feeds, sitemaps and robots.txt link from it; empty: http://localhost:PORT of INKWELL_ADDR", checkPublicURL)
	d.str(&s.ArticleURL, "article-url", "{public}/article/{slug}", "an article's public link in feeds and sitemaps: {slug} (required) is the article's slug, {public} INKWELL_PUBLIC_URL", checkArticleURL)
	d.dur(&s.RequestTimeout, "request-timeout", 30*time.Second, "deadline of one HTTP request's work (database and Redis calls stop with it; answered 503); 0 disables", atLeast[time.Duration](0))
	d.dur(&s.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long graceful shutdown waits for requests and jobs to finish", positive)
	d.dur(&s.DrainDelay, "drain-delay", 5*time.Second, "on SIGTERM or SIGINT, how long GET /readyz answers 503 draining while the server still serves, before it stops accepting connections (longer than the balancer takes to notice: its check interval times the failures it needs); a second signal cuts it short; 0 stops at once", atLeast[time.Duration](0))
	d.bool(&s.MigrateOnStart, "migrate-on-start", "apply pending migrations before serving")
	d.str(&s.CORSOrigins, "cors-origins", "", "comma-separated browser origins allowed to call the API (e.g. https://conduit.example); '*' allows any; empty means any in dev and none in prod")
	d.str(&s.TrustedProxies, "trusted-proxies", "", "comma-separated proxy IPs/CIDRs whose X-Forwarded-For names the client", func(v string) error { _, err := ParseTrustedProxies(v); return err })
	d.str(&s.RateAuth, "rate-auth", "60/1m", "per-client-IP limit on registration, login and code login (N/duration; 0 disables)", rate)
	d.str(&s.RateWrites, "rate-writes", "300/1m", "per-user limit on writes (N/duration; 0 disables)", rate)
	d.str(&s.RateSearch, "rate-search", "120/1m", "per-client limit on GET /api/search/* (the user when signed in, else the client IP; N/duration; 0 disables)", rate)

	db := &c.Database
	d.group = "database"
	d.str(&db.URL, "database-url", "postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable", "PostgreSQL connection URL; connect_timeout, statement_timeout and idle_in_transaction_session_timeout in its query replace the bounds of 5s, 30s and 1m (0 keeps the server's setting)").env("DATABASE_URL")
	d.str(&db.Pooler, "database-pooler", "", "what DATABASE_URL reaches: empty for PostgreSQL itself, or pgbouncer for a PgBouncer in transaction pooling mode (statements then need no prepared statements, and what needs a session uses DATABASE_DIRECT_URL; docs/OPERATIONS.md, \"PgBouncer\")", oneOf("", PoolerPgBouncer)).env("DATABASE_POOLER")
	d.str(&db.DirectURL, "database-direct-url", "", "with DATABASE_POOLER: the URL of PostgreSQL itself, for migrations, LISTEN, session advisory locks and the job queue's and search's pools (empty: DATABASE_URL)", func(v string) error {
		if v == "" {
			return nil
		}
		_, err := pgxpool.ParseConfig(v)
		return err
	}).env("DATABASE_DIRECT_URL")
	d.str(&db.ReplicaURLs, "database-replica-urls", "", "read replicas of DATABASE_URL, comma-separated PostgreSQL URLs; reads that tolerate a little lag go to one that has replayed enough (docs/OPERATIONS.md, \"Read replicas\")", func(v string) error { return checkReplicaURLs(splitList(v)) }).env("DATABASE_REPLICA_URLS")
	d.dur(&db.ReplicaMaxLag, "replica-max-lag", time.Second, "with DATABASE_REPLICA_URLS: how old the data an anonymous read gets from a replica may be; a replica further behind leaves the rotation until it catches up", atLeast(100*time.Millisecond))

	r := &c.Redis
	d.group = "redis"
	d.str(&r.URL, "redis-url", "redis://127.0.0.1:6379/0", "Redis URL, redis://[user:password@]host:port/db; in cluster and sentinel mode more nodes follow as ?addr=host:port&addr=host:port, and in sentinel mode the master's name as ?master_name=name; read_timeout, write_timeout (300ms) and dial_timeout (1s) may be set the same way").env("REDIS_URL")
	d.str(&r.Mode, "redis-mode", RedisSingle, "how REDIS_URL is used: single (one server), cluster (seed nodes of a Redis Cluster) or sentinel (Sentinel addresses, and the master's name as REDIS_URL's ?master_name=)", oneOf("", RedisSingle, RedisCluster, RedisSentinel))
	d.str(&r.Prefix, "redis-prefix", "inkwell:", "prefix of every Redis key this instance writes")

	a := &c.Auth
	d.group = "auth"
	d.str(&a.JWTSecret, "jwt-secret", "", "HS256 signing secret for access tokens, at least 32 bytes (required in prod)")
	d.str(&a.DevSecretFile, "dev-secret-file", DefaultDevSecretFile, "dev without INKWELL_JWT_SECRET: file holding the JWT secret (relative to the working directory), created once with 32 random bytes (mode 0600) and reused by every restart and every instance started with it")
	d.str(&a.JWTIssuer, "jwt-issuer", "inkwell", "issuer (iss) written into and required of access tokens")
	// A day, not minutes: RealWorld front ends never refresh, and every request checks the token's
	// session for revocation, so a logout or password change still ends a token at once. Clients
	// that refresh can set it short (e.g. 15m) and rotate with refresh tokens.
	d.dur(&a.JWTLifetime, "jwt-lifetime", DefaultJWTLifetime, "access token lifetime (RealWorld front ends never refresh; native clients that refresh can set e.g. 15m)", positive)
	d.dur(&a.RefreshLifetime, "refresh-lifetime", 30*24*time.Hour, "refresh token lifetime", positive)
	d.int(&a.SessionsPerUser, "sessions-per-user", 100, "live login sessions one user may hold; a login past it ends the least recently used (refreshed) one", atLeast(1))
	d.uint(&a.Argon2MemoryKiB, "argon2-memory-kib", 19*1024, "Argon2id memory per password hash in KiB (minimum 19456, OWASP's); raising it rehashes each password at its next login")
	d.dur(&a.CodeValidity, "code-validity", 10*time.Minute, "how long a login code is valid (one is sent per email or phone at most once a minute)", atLeast(time.Minute+time.Second))

	m := &c.Mail
	d.group = "mail"
	d.str(&m.CodeSender, "code-sender", CodeSenderLog, "how login codes are delivered when SMTP is not set, and phone codes always: log (development: written to the log) or the http(s) URL a webhook code sender POSTs {channel, to, code} to", checkCodeSender).redacted()
	d.str(&m.URL, "mail-url", "", "SMTP server that sends every email (login codes, verification, password reset): smtp://user:password@host:port?tls=starttls (user and password percent-encoded; no user sends without authentication); tls is starttls (the default: required, not opportunistic), tls (implicit) or none (a relay on a trusted network only); the port defaults to 465 with tls, else 587; empty leaves email to INKWELL_CODE_SENDER").redacted()
	d.str(&m.From, "mail-from", "", "From address of the mails, e.g. 'inkwell <no-reply@example.com>' (required with INKWELL_MAIL_URL)")

	d.group = "search"
	d.str(&c.Search.Language, "search-language", "english", "PostgreSQL text search configuration articles are indexed and searched in (SELECT cfgname FROM pg_ts_config); after changing it, run 'inkwell search reindex'", notBlank)

	d.group = "jobs"
	d.str(&c.Jobs.RankSchedule, "rank-schedule", "@every 1m", "when the hot-list ranking job runs (cron syntax, or @every <duration>)", func(v string) error { _, err := cron.ParseStandard(v); return err })
	d.int(&c.Jobs.RankTopN, "rank-top-n", 100, "size of the hot list", atLeast(1), atMost(10000))

	up := &c.Uploads
	d.group = "uploads"
	d.str(&up.MaxBytes, "upload-max-bytes", "10MB", "largest image one upload may be (bytes, or with a unit: KB, MB, GB, KiB, MiB, GiB); larger: 413", byteSize)
	d.str(&up.Quota, "upload-quota", "100MB/day,1GB", "bytes of stored images one user may upload per rolling day and keep in all (N/day,N; either may be left out; 0 disables): over the day's 429 with Retry-After, over the total 413", uploadQuota)

	ret := &c.Retention
	d.group = "retention"
	d.str(&ret.Schedule, "retention-schedule", "@every 10m", "when the retention job deletes rows no longer kept, one instance of the fleet at a time (cron syntax, @every <duration>, or off)", func(v string) error {
		if v == RetentionOff {
			return nil
		}
		if _, err := cron.ParseStandard(v); err != nil {
			return fmt.Errorf("%q: %w (or off)", v, err)
		}
		return nil
	})
	d.age(&ret.Notifications, "retention-notifications", 90*24*time.Hour, "notifications are kept this long, read or not (a duration, Nd, or off for ever; so for every INKWELL_RETENTION_* age)")
	d.age(&ret.Sessions, "retention-sessions", 24*time.Hour, "grace before the rows of a refresh token past its expiry, and of a session that can no longer be refreshed (revoked, or not refreshed for INKWELL_REFRESH_LIFETIME), are deleted")
	d.count(&ret.History, "retention-history", 1000, "reading-history rows kept per user, the newest (off keeps all)")

	d.group = "media"
	d.str(&c.Media.URL, "media-url", DefaultMediaURL, "where uploaded images are stored: file://DIR (a local directory, relative to the working directory or file:///absolute; a fleet needs one shared directory) or s3://BUCKET?endpoint=host:port&region=us-east-1&secure=true (any S3-compatible storage; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", func(v string) error { _, err := ParseMediaURL(v); return err })

	si := &c.SignIn
	d.group = "signin"
	d.str(&si.Providers, "oidc-providers", "", "comma-separated sign-in providers (e.g. google,corp,github), each configured by INKWELL_OIDC_<NAME>_ISSUER, _CLIENT_ID, _CLIENT_SECRET and optional _SCOPES, _DISPLAY_NAME; github is built in and needs no issuer; empty: no sign-in with providers", validateProviderNames)
	d.str(&si.RedirectAllow, "oidc-redirect-allow", "", "comma-separated front-end origins (scheme://host[:port]) a sign-in with a provider may return to; any other redirect is refused (422)", validateOrigins)

	wh := &c.Webhooks
	d.group = "webhooks"
	d.str(&wh.Key, "webhook-key", "", "key webhook signing secrets are encrypted with at rest (AES-256-GCM): base64 of 32 bytes (openssl rand -base64 32); empty: derived from the JWT secret, with a warning (changing it makes existing endpoints' secrets unreadable)", checkWebhookKey).redacted()
	d.bool(&wh.AllowPrivate, "webhook-allow-private", "let webhook endpoints be http URLs and private, loopback or link-local addresses (development and tests only; off, deliveries refuse them on the connected address)")

	t := &c.Telemetry
	d.group = "telemetry"
	d.str(&t.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	d.str(&t.LogFormat, "log-format", "json", "log format: json or text")
	d.str(&t.MetricsAddr, "metrics-addr", ":9464", "serve GET /metrics (Prometheus) on this address, a listener apart from INKWELL_ADDR that the balancer does not forward; empty disables")
	d.str(&t.PprofAddr, "pprof-addr", "", "serve /debug/pprof on this loopback address (e.g. 127.0.0.1:6060); empty disables", func(v string) error { return validatePprofAddr(v) })
	return d
}

// Flags registers every setting on fs, after its environment variable, and returns the Config
// they fill once fs is parsed. A removed setting still in the environment is kept for
// WarnRemoved; on the command line it fails the parse with what replaced it.
func Flags(fs *flag.FlagSet) *Config {
	c := &Config{}
	d := declare(c)
	c.envErrs = d.apply()
	for _, s := range d.list {
		usage := s.Help + " (env " + s.Env + ")"
		if s.register != nil {
			s.register(fs, usage)
		} else {
			fs.Var(s.Value, s.Name, usage)
		}
		if s.redact {
			f := fs.Lookup(s.Name)
			f.DefValue = redactedURL(f.DefValue) // --help shows the value the environment set
		}
	}
	c.removed = removedInEnvironment()
	registerRemoved(fs)
	return c
}

// Validate checks the settings and fills what dev mode may generate. log receives the warning
// about a generated JWT secret.
func (c *Config) Validate(log *slog.Logger) error {
	errs := append([]error(nil), c.envErrs...)
	errs = append(errs, c.decls().checkAll()...)
	errs = append(errs, c.validateAcross()...)
	// Last, and only for an otherwise valid dev configuration: a process that will not start
	// leaves no secret file behind.
	if len(errs) == 0 && c.Auth.JWTSecret == "" && c.Server.Env == "dev" {
		secret, created, err := LoadDevSecret(c.Auth.DevSecretFile)
		if err != nil {
			return err
		}
		c.Auth.JWTSecret, c.Auth.JWTSecretFromFile = secret, true
		if log != nil {
			verb := "read"
			if created {
				verb = "created"
			}
			file := c.Auth.DevSecretFile
			if abs, err := filepath.Abs(file); err == nil {
				file = abs
			}
			log.Warn("INKWELL_JWT_SECRET is not set: signing tokens with the dev secret file; every instance started with this file shares its tokens (INKWELL_ENV=prod refuses to start without INKWELL_JWT_SECRET)",
				"file", file, "action", verb)
		}
	}
	return errors.Join(errs...)
}

// validateAcross checks the rules that relate settings to each other (one setting's own rule is
// in its declaration).
func (c *Config) validateAcross() []error {
	var errs []error
	if c.Auth.JWTSecret == "" {
		if c.Server.Env == "prod" {
			errs = append(errs, errors.New("INKWELL_JWT_SECRET is required when INKWELL_ENV=prod (use at least 32 random bytes, e.g. `openssl rand -hex 32`)"))
		}
	} else if len(c.Auth.JWTSecret) < 32 {
		errs = append(errs, errors.New("INKWELL_JWT_SECRET must be at least 32 bytes"))
	}
	if !strings.HasPrefix(c.Redis.URL, "redis://") && !strings.HasPrefix(c.Redis.URL, "rediss://") {
		errs = append(errs, fmt.Errorf("REDIS_URL must look like redis://host:port/db, not %q", c.Redis.URL))
	} else if oneOf("", RedisSingle, RedisCluster, RedisSentinel)(c.Redis.Mode) == nil {
		if _, err := RedisOptions(c); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Mail.CodeSender == CodeSenderLog && c.Server.Env == "prod" {
		errs = append(errs, errors.New("INKWELL_CODE_SENDER=log only logs codes; in prod set it to the http(s) URL of the webhook that delivers them"))
	}
	errs = append(errs, c.validateMail()...)
	errs = append(errs, c.Database.validatePooler()...)
	if _, err := OIDCProviders(c); err != nil {
		errs = append(errs, err)
	}
	if addr := c.Telemetry.MetricsAddr; addr != "" {
		if _, port, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("INKWELL_METRICS_ADDR %q: want host:port, e.g. :9464 or 127.0.0.1:9464 (empty disables): %w", addr, err))
		} else if addr == c.Server.Addr && port != "0" { // port 0: each listener gets a port of its own
			errs = append(errs, fmt.Errorf("INKWELL_METRICS_ADDR must differ from INKWELL_ADDR (%s): the metrics have a listener of their own", c.Server.Addr))
		}
	}
	return errs
}

// validateMail checks the SMTP settings, which matter only once INKWELL_MAIL_URL is set.
func (c *Config) validateMail() []error {
	m := c.Mail
	if m.URL == "" {
		return nil
	}
	var errs []error
	server, err := ParseMailURL(m.URL)
	if err != nil {
		errs = append(errs, fmt.Errorf("INKWELL_MAIL_URL %w", err))
	}
	if _, err := mail.ParseAddress(m.From); err != nil {
		errs = append(errs, fmt.Errorf("INKWELL_MAIL_FROM must be a mail address, e.g. 'inkwell <no-reply@example.com>' (%q: %w)", m.From, err))
	}
	if err == nil && server.Username != "" && server.TLS == MailNoTLS && c.Server.Env == "prod" {
		errs = append(errs, errors.New("INKWELL_MAIL_URL with tls=none would send the SMTP password in the clear; use starttls or tls in prod"))
	}
	return errs
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

// checkCodeSender accepts log or an http(s) URL with a host. The old value webhook (with the
// URL in INKWELL_CODE_WEBHOOK_URL, now removed) is refused with what to write instead: taken as
// given it would leave codes undelivered.
func checkCodeSender(v string) error {
	if v == CodeSenderLog {
		return nil
	}
	if v == "webhook" {
		return errors.New("must be log or a URL, not webhook: set INKWELL_CODE_SENDER to the webhook's URL, e.g. INKWELL_CODE_SENDER=https://sms.example.com/codes (INKWELL_CODE_WEBHOOK_URL was folded into it)")
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be log or the http(s) URL the webhook code sender POSTs to, e.g. https://sms.example.com/codes, not %q", redactedURL(v))
	}
	return nil
}

// checkWebhookKey accepts an empty key or the base64 of 32 bytes.
func checkWebhookKey(v string) error {
	if v == "" {
		return nil
	}
	if _, err := ParseWebhookKey(v); err != nil {
		return err
	}
	return nil
}

// ParseWebhookKey reads INKWELL_WEBHOOK_KEY: the standard base64 of 32 bytes.
func ParseWebhookKey(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != 32 {
		return nil, errors.New("want the base64 of 32 bytes (openssl rand -base64 32)")
	}
	return b, nil
}

// Replicas are the read replicas' URLs, in the order DATABASE_REPLICA_URLS lists them.
func (db DatabaseConfig) Replicas() []string { return splitList(db.ReplicaURLs) }

// PoolerPgBouncer is DATABASE_POOLER's value for a PgBouncer in transaction pooling mode.
const PoolerPgBouncer = "pgbouncer"

// Pooled reports whether DATABASE_URL reaches a transaction pooler rather than PostgreSQL itself.
func (db DatabaseConfig) Pooled() bool { return db.Pooler != "" }

// SessionURL is the URL of PostgreSQL itself: DATABASE_DIRECT_URL, else DATABASE_URL. Migrations,
// LISTEN, session advisory locks and the pools whose sessions carry settings of their own
// (plan_cache_mode) connect there.
func (db DatabaseConfig) SessionURL() string {
	if db.DirectURL != "" {
		return db.DirectURL
	}
	return db.URL
}

// validatePooler checks DATABASE_POOLER against the URLs: a pooled DATABASE_URL needs a direct
// one beside it, and cannot carry session parameters, which PgBouncer refuses in the startup
// packet (they belong on the role, where every pooled server connection gets them).
func (db DatabaseConfig) validatePooler() []error {
	if !db.Pooled() {
		if db.DirectURL != "" {
			return []error{errors.New("DATABASE_DIRECT_URL is set but DATABASE_POOLER is not: set DATABASE_POOLER=pgbouncer when DATABASE_URL reaches a PgBouncer, or drop DATABASE_DIRECT_URL")}
		}
		return nil
	}
	var errs []error
	if db.DirectURL == "" {
		errs = append(errs, errors.New("DATABASE_POOLER=pgbouncer needs DATABASE_DIRECT_URL, the URL of PostgreSQL itself (not PgBouncer): migrations, LISTEN and session advisory locks need a session of their own"))
	}
	for _, param := range sessionParams {
		if strings.Contains(db.URL, param+"=") {
			errs = append(errs, fmt.Errorf("DATABASE_URL sets %s, which PgBouncer refuses at connect: set it on the role instead (ALTER ROLE inkwell SET %s = '30s') and drop it from DATABASE_URL", param, param))
		}
	}
	return errs
}

func checkReplicaURLs(urls []string) error {
	for i, u := range urls {
		if _, err := pgxpool.ParseConfig(u); err != nil {
			return fmt.Errorf("replica %d is not a PostgreSQL URL such as postgres://user@replica1:5432/inkwell (%w)", i+1, err)
		}
	}
	return nil
}
