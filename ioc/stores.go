package ioc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// NewPgPool opens the PostgreSQL pool at DATABASE_URL that requests and job workers share, and
// checks it answers; with tracing on, its statements are spans. With DATABASE_POOLER=pgbouncer it
// reaches PgBouncer, in a query mode that needs no prepared statement on the server and without
// the session timeouts in its startup packet (PgBouncer refuses them; they belong on the role).
// The cleanup closes it.
func NewPgPool(cfg *Config, tracing *Tracing, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	// pgxpool's default (4 on a small machine) is too few here: a connection sits in LISTEN for
	// the outbox, and consumers and requests share the rest. An explicit pool_max_conns in
	// DATABASE_URL wins.
	at := poolTarget{url: cfg.Database.URL, setting: "DATABASE_URL", pooled: cfg.Database.Pooled()}
	return openPgPoolAt(cfg, at, "postgres pool", 20, tracing.TracePostgres, log)
}

// OpenPgPool opens a PostgreSQL pool named name (in the log) on PostgreSQL itself
// (DatabaseConfig.SessionURL: DATABASE_DIRECT_URL when set, else DATABASE_URL) of at most
// maxConns connections unless its URL sets pool_max_conns, with the session timeouts
// (SessionTimeouts), after configure has adjusted its settings, and checks it answers. The
// cleanup closes it.
func OpenPgPool(cfg *Config, name string, maxConns int32, configure func(*pgxpool.Config), log *slog.Logger) (*pgxpool.Pool, func(), error) {
	return openPgPoolAt(cfg, sessionTarget(cfg), name, maxConns, configure, log)
}

// poolTarget is a server a pool connects to: its URL, the setting that names it (for errors) and
// whether it is a transaction pooler rather than PostgreSQL itself.
type poolTarget struct {
	url, setting string
	pooled       bool
}

func sessionTarget(cfg *Config) poolTarget {
	if cfg.Database.DirectURL != "" {
		return poolTarget{url: cfg.Database.DirectURL, setting: "DATABASE_DIRECT_URL"}
	}
	return poolTarget{url: cfg.Database.URL, setting: "DATABASE_URL"}
}

// openPgPoolAt is OpenPgPool on the server at.
func openPgPoolAt(cfg *Config, at poolTarget, name string, maxConns int32, configure func(*pgxpool.Config), log *slog.Logger) (*pgxpool.Pool, func(), error) {
	pool, pcfg, err := newPgPoolAt(cfg, at, name, maxConns, configure, log)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("PostgreSQL at %s:%d (%s) does not answer (is it running? `make run` starts one): %w",
			pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, at.setting, err)
	}
	return pool, func() { pool.Close(); log.Info(name + " closed") }, nil
}

// newPgPoolAt makes (without connecting) a pool named name on the server at, of at most maxConns
// connections unless the URL sets pool_max_conns, with the session timeouts (PostgreSQL itself
// only) or the pooler's query mode, the connect bound and gate, after configure and
// cfg.ConfigurePgPool have adjusted it.
func newPgPoolAt(cfg *Config, at poolTarget, name string, maxConns int32, configure func(*pgxpool.Config), log *slog.Logger) (*pgxpool.Pool, *pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(at.url)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", at.setting, err)
	}
	if !strings.Contains(at.url, "pool_max_conns") {
		pcfg.MaxConns = maxConns
	}
	if at.pooled {
		PoolerQueryMode(pcfg, at.url)
	} else {
		SessionTimeouts(pcfg)
	}
	boundConnects(pcfg, at.url)
	configure(pcfg)
	if cfg.ConfigurePgPool != nil {
		cfg.ConfigurePgPool(pcfg)
	}
	gateConnects(pcfg, name, log)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", at.setting, err)
	}
	return pool, pcfg, nil
}

// OpenReplicaPools opens a pool on each read replica of DATABASE_REPLICA_URLS, named "replica N"
// (N from 1, in the setting's order) followed by purpose when it is not "", of maxConns
// connections unless the URL's pool_max_conns says otherwise. A replica that
// does not answer at start is opened anyway (pgxpool connects lazily) and left to the router,
// which skips it until it answers: a replica is never needed to serve. Replicas are reached
// directly, not through a pooler.
func OpenReplicaPools(cfg *Config, purpose string, maxConns int32, configure func(*pgxpool.Config), log *slog.Logger) ([]*pgxpool.Pool, []string, func(), error) {
	var pools []*pgxpool.Pool
	var names []string
	closeAll := func() {
		for _, p := range pools {
			p.Close()
		}
	}
	for i, url := range cfg.Database.Replicas() {
		name := fmt.Sprintf("replica %d", i+1)
		pool, _, err := newPgPoolAt(cfg, poolTarget{url: url, setting: "DATABASE_REPLICA_URLS, " + name}, strings.TrimSpace(name+" "+purpose), maxConns, configure, log)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		pools, names = append(pools, pool), append(names, name)
	}
	return pools, names, func() { closeAll(); log.Info("replica pools closed", "replicas", len(pools), "purpose", purpose) }, nil
}

// The session timeouts of every connection to PostgreSQL itself, unless its URL sets them.
const (
	DefaultStatementTimeout = 30 * time.Second
	DefaultIdleInTxTimeout  = time.Minute
)

// sessionParams are the session timeouts' PostgreSQL parameters, which a URL may set.
var sessionParams = []string{"statement_timeout", "idle_in_transaction_session_timeout"}

// SessionTimeouts sets statement_timeout (DefaultStatementTimeout) and
// idle_in_transaction_session_timeout (DefaultIdleInTxTimeout) on every session of pcfg, unless
// its URL sets them (pgx reads an unknown URL parameter as a session parameter); a URL's 0 keeps
// the server's setting (the role's or database's). They are sent in the startup packet, so
// PostgreSQL enforces them on every connection, even one a request leaves in a stuck transaction
// or a statement whose client is gone: a runaway query or a forgotten transaction cannot hold
// locks and a connection for ever.
func SessionTimeouts(pcfg *pgxpool.Config) {
	params := pcfg.ConnConfig.RuntimeParams
	for i, d := range []time.Duration{DefaultStatementTimeout, DefaultIdleInTxTimeout} {
		param := sessionParams[i]
		switch v, set := params[param]; {
		case !set:
			params[param] = strconv.FormatInt(d.Milliseconds(), 10) // milliseconds
		case v == "0":
			delete(params, param)
		}
	}
}

// PoolerQueryMode makes pcfg's statements run without prepared statements on the server
// (pgx.QueryExecModeCacheDescribe: unnamed statements, whose parameter and result types pgx
// caches, so still one round trip) unless url sets default_query_exec_mode. A transaction pooler
// such as PgBouncer 1.18 gives each transaction any server connection, where a statement prepared
// on another one does not exist.
func PoolerQueryMode(pcfg *pgxpool.Config, url string) {
	if !strings.Contains(url, "default_query_exec_mode") {
		pcfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
}

// DBConnectTimeout bounds opening one PostgreSQL connection unless DATABASE_URL sets
// connect_timeout (a setting until 0.1.0): a healthy server answers in milliseconds, and five
// seconds still ride out a slow network or a busy server's accept queue.
const DBConnectTimeout = 5 * time.Second

// boundConnects bounds opening a connection of pcfg by DBConnectTimeout unless its url sets
// connect_timeout. Without a bound, a server that accepts TCP but never answers
// (a network that drops packets, a proxy whose upstream died) holds each new connection, and
// with it a slot of the pool, until the request's deadline: every request then waits that long,
// and the pool recovers no sooner after the server is back.
func boundConnects(pcfg *pgxpool.Config, url string) {
	if pcfg.ConnConfig.ConnectTimeout == 0 && !strings.Contains(url, "connect_timeout") {
		pcfg.ConnConfig.ConnectTimeout = DBConnectTimeout
	}
}

// WithoutStatementTimeout is a configure function for OpenPgPool of the one-off bulk commands
// (seed): their statements are long by design, and nobody waits on them but the operator.
func WithoutStatementTimeout(pcfg *pgxpool.Config) {
	pcfg.ConnConfig.RuntimeParams["statement_timeout"] = "0"
}

// The Redis modes of INKWELL_REDIS_MODE.
const (
	RedisSingle   = "single"   // REDIS_URL names one server
	RedisCluster  = "cluster"  // REDIS_URL names seed nodes of a Redis Cluster
	RedisSentinel = "sentinel" // REDIS_URL names Sentinels, which name the master
)

// sentinelNeedsMaster is the error of a Sentinel REDIS_URL without the master's name.
const sentinelNeedsMaster = "REDIS_URL (INKWELL_REDIS_MODE=sentinel) has no master name: add master_name=NAME, the name the Sentinels " +
	"monitor the master under, to its query, e.g. REDIS_URL=redis://s1:26379/0?master_name=mymaster&addr=s2:26379 " +
	"(INKWELL_REDIS_SENTINEL_MASTER was folded into REDIS_URL)"

// RedisOptions reads REDIS_URL the way INKWELL_REDIS_MODE says, into options for
// redis.NewUniversalClient that carry inkwell's short timeouts:
//
//   - single: redis://[user:password@]host:port/db, one server.
//   - cluster: redis://[user:password@]host:port?addr=host:port&addr=host:port, seed nodes of a
//     Redis Cluster (one that answers is enough: the client learns the others). Database 0 only.
//   - sentinel: redis://[user:password@]host:port/db?master_name=name&addr=host:port&addr=host:port,
//     the Sentinels and the name they monitor the master under (master_name=, required; it
//     replaced INKWELL_REDIS_SENTINEL_MASTER). The URL's user:password log in to the Sentinels;
//     the master's own credentials are the query parameters username= and password=.
func RedisOptions(cfg *Config) (*redis.UniversalOptions, error) {
	mode := cfg.Redis.Mode
	if mode == "" {
		mode = RedisSingle
	}
	if u, err := url.Parse(cfg.Redis.URL); err == nil && u.Query().Has("master_name") && mode != RedisSentinel {
		return nil, fmt.Errorf("REDIS_URL names a Sentinel master (?master_name=) but INKWELL_REDIS_MODE is %s: set INKWELL_REDIS_MODE=sentinel, or drop master_name", mode)
	}
	var o *redis.UniversalOptions
	switch mode {
	case RedisSingle:
		if u, err := url.Parse(cfg.Redis.URL); err == nil && u.Query().Has("addr") {
			return nil, errors.New("REDIS_URL lists more nodes (?addr=) but INKWELL_REDIS_MODE is single: set INKWELL_REDIS_MODE=cluster or sentinel")
		}
		p, err := redis.ParseURL(cfg.Redis.URL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		if p.Network != "tcp" {
			return nil, fmt.Errorf("REDIS_URL: want redis:// or rediss://, not %s", p.Network)
		}
		o = &redis.UniversalOptions{
			Addrs: []string{p.Addr}, DB: p.DB, Username: p.Username, Password: p.Password, TLSConfig: p.TLSConfig,
			ClientName: p.ClientName, Protocol: p.Protocol, MinRetryBackoff: p.MinRetryBackoff, MaxRetryBackoff: p.MaxRetryBackoff,
			DialTimeout: p.DialTimeout, ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout,
			PoolFIFO: p.PoolFIFO, PoolSize: p.PoolSize, PoolTimeout: p.PoolTimeout, MinIdleConns: p.MinIdleConns,
			MaxIdleConns: p.MaxIdleConns, MaxActiveConns: p.MaxActiveConns, MaxConcurrentDials: p.MaxConcurrentDials,
			ConnMaxIdleTime: p.ConnMaxIdleTime, ConnMaxLifetime: p.ConnMaxLifetime, ConnMaxLifetimeJitter: p.ConnMaxLifetimeJitter,
			PipelinePoolSize: p.PipelinePoolSize, PipelineReadBufferSize: p.PipelineReadBufferSize, PipelineWriteBufferSize: p.PipelineWriteBufferSize,
		}
	case RedisCluster:
		p, err := redis.ParseClusterURL(cfg.Redis.URL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL (INKWELL_REDIS_MODE=cluster): %w", err)
		}
		if u, err := url.Parse(cfg.Redis.URL); err == nil && strings.Trim(u.Path, "/") != "" && strings.Trim(u.Path, "/") != "0" {
			return nil, fmt.Errorf("REDIS_URL (INKWELL_REDIS_MODE=cluster): a Redis Cluster has only database 0, drop %q from the URL", u.Path)
		}
		o = &redis.UniversalOptions{
			Addrs: p.Addrs, IsClusterMode: true, Username: p.Username, Password: p.Password, TLSConfig: p.TLSConfig,
			ClientName: p.ClientName, Protocol: p.Protocol, MinRetryBackoff: p.MinRetryBackoff, MaxRetryBackoff: p.MaxRetryBackoff,
			MaxRedirects: p.MaxRedirects, ReadOnly: p.ReadOnly, RouteByLatency: p.RouteByLatency,
			RouteByLatencyTolerance: p.RouteByLatencyTolerance, RouteRandomly: p.RouteRandomly, FailingTimeoutSeconds: p.FailingTimeoutSeconds,
			DialTimeout: p.DialTimeout, ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout,
			PoolFIFO: p.PoolFIFO, PoolSize: p.PoolSize, PoolTimeout: p.PoolTimeout, MinIdleConns: p.MinIdleConns,
			MaxIdleConns: p.MaxIdleConns, MaxActiveConns: p.MaxActiveConns, MaxConcurrentDials: p.MaxConcurrentDials,
			ConnMaxIdleTime: p.ConnMaxIdleTime, ConnMaxLifetime: p.ConnMaxLifetime, ConnMaxLifetimeJitter: p.ConnMaxLifetimeJitter,
			PipelinePoolSize: p.PipelinePoolSize, PipelineReadBufferSize: p.PipelineReadBufferSize, PipelineWriteBufferSize: p.PipelineWriteBufferSize,
		}
	case RedisSentinel:
		p, err := redis.ParseFailoverURL(cfg.Redis.URL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL (INKWELL_REDIS_MODE=sentinel): %w", err)
		}
		if p.MasterName == "" {
			return nil, errors.New(sentinelNeedsMaster)
		}
		o = &redis.UniversalOptions{
			Addrs: p.SentinelAddrs, MasterName: p.MasterName, DB: p.DB, Username: p.Username, Password: p.Password,
			SentinelUsername: p.SentinelUsername, SentinelPassword: p.SentinelPassword, TLSConfig: p.TLSConfig,
			ClientName: p.ClientName, Protocol: p.Protocol, MinRetryBackoff: p.MinRetryBackoff, MaxRetryBackoff: p.MaxRetryBackoff,
			ReadOnly: p.ReplicaOnly, RouteByLatency: p.RouteByLatency, RouteByLatencyTolerance: p.RouteByLatencyTolerance,
			RouteRandomly: p.RouteRandomly, DisableIdentity: p.DisableIdentity, IdentitySuffix: p.IdentitySuffix,
			DialTimeout: p.DialTimeout, ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout,
			PoolFIFO: p.PoolFIFO, PoolSize: p.PoolSize, PoolTimeout: p.PoolTimeout, MinIdleConns: p.MinIdleConns,
			MaxIdleConns: p.MaxIdleConns, MaxActiveConns: p.MaxActiveConns, MaxConcurrentDials: p.MaxConcurrentDials,
			ConnMaxIdleTime: p.ConnMaxIdleTime, ConnMaxLifetime: p.ConnMaxLifetime, ConnMaxLifetimeJitter: p.ConnMaxLifetimeJitter,
			PipelinePoolSize: p.PipelinePoolSize, PipelineReadBufferSize: p.PipelineReadBufferSize, PipelineWriteBufferSize: p.PipelineWriteBufferSize,
		}
	default:
		return nil, fmt.Errorf("INKWELL_REDIS_MODE must be single, cluster or sentinel, not %q", cfg.Redis.Mode)
	}
	// Short timeouts and no retries: a Redis call that fails costs a request at most one timeout,
	// then the fallback path runs (go-redis retries timeouts too, which doubled the cost of a slow
	// Redis; a pooled connection that Redis closed is found by the pool's health check before
	// use, so retries are not needed for that). After a few failures in a row the circuit breaker
	// (the hook NewRedis installs) stops calling Redis at all for a while. The settings apply to
	// every node a cluster or Sentinel client talks to. The URL may set longer (or shorter)
	// timeouts, for a Redis farther away than the same network; never none, which would leave a
	// request waiting on a Redis that stopped answering instead of falling back.
	for _, t := range []struct {
		param string
		value *time.Duration
		def   time.Duration
	}{
		{"dial_timeout", &o.DialTimeout, time.Second},
		{"read_timeout", &o.ReadTimeout, 300 * time.Millisecond},
		{"write_timeout", &o.WriteTimeout, 300 * time.Millisecond},
	} {
		switch {
		case *t.value == 0:
			*t.value = t.def
		case *t.value < 0:
			return nil, fmt.Errorf("REDIS_URL: %s must be a positive duration such as 500ms or 2s (the default is %s); inkwell needs a bound to fall back to PostgreSQL when Redis stops answering", t.param, t.def)
		}
	}
	o.MaxRetries = -1   // go-redis: 0 would mean its default of 3
	o.DialerRetries = 1 // go-redis would otherwise retry a refused dial 5 times, 100 ms apart
	return o, nil
}

// NewRedis opens the Redis client: one server, a Redis Cluster or a Sentinel-managed master,
// as INKWELL_REDIS_MODE says (see RedisOptions). A Redis that does not answer at start is logged,
// not fatal: every Redis use falls back or fails open, so the service works (slower) until Redis
// returns. Every call goes through hook (inkwell's circuit breaker); with tracing on, every
// command is a span, the ones the breaker refuses too (the tracing hook is added first, so it
// wraps the breaker; in a cluster it sits on each node, inside the breaker).
func NewRedis(cfg *Config, hook redis.Hook, tracing *Tracing, log *slog.Logger) (redis.UniversalClient, func(), error) {
	opts, err := RedisOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	RouteRedisLogs(log)
	rdb := redis.NewUniversalClient(opts)
	if err := tracing.TraceRedis(rdb); err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	rdb.AddHook(hook)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		log.Warn("redis does not answer; serving from PostgreSQL until it does", "mode", cfg.Redis.Mode,
			"addr", strings.Join(opts.Addrs, ","), "err", err)
	}
	return rdb, func() { _ = rdb.Close(); log.Info("redis client closed") }, nil
}
