// Package testenv gives integration tests their own PostgreSQL database and Redis key space on the
// real servers, so test packages run in parallel without seeing each other's data.
//
// TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server and a
// maintenance database to create test databases from; TEST_REDIS_URL (default
// redis://127.0.0.1:6379/0) names the Redis. `make test` starts both when they are not running.
//
// NewDB's databases are copies of a template database that is migrated once per migrations
// content (inkwell_tpl_<hash>, kept across runs; see template.go), not migrated one by one.
//
// With TEST_REDIS_MODE=cluster (or when TEST_REDIS_URL lists more nodes as ?addr=host:port, the
// form of go-redis's ParseClusterURL) TEST_REDIS_URL names the seed nodes of a Redis Cluster and
// the clients are cluster clients; `make test-cluster` starts one (scripts/redis-cluster.sh).
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// DatabaseURL is the server URL tests create their databases on.
func DatabaseURL() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// RedisURL is the Redis tests use.
func RedisURL() string {
	if v := os.Getenv("TEST_REDIS_URL"); v != "" {
		return v
	}
	return "redis://127.0.0.1:6379/0"
}

// RandomID returns n random bytes in hex, for unique names.
func RandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// PoolMaxConns is the size of DB.Pool.
const PoolMaxConns = 4

// DB is a fresh database for one test (or one package).
type DB struct {
	Name string
	URL  string
	Pool *pgxpool.Pool
}

// NewDB creates a migrated database named after the test, and drops it when the test ends. It is
// a copy of the process's template database (see template.go), which the first call migrates
// unless another test process has already. It fails the test when PostgreSQL is not reachable,
// saying how to start it.
func NewDB(t testing.TB) *DB {
	t.Helper()
	tpl, err := templateDB()
	if err != nil {
		t.Fatalf("template database: %v", err)
	}
	return newDB(t, tpl)
}

// NewEmptyDB creates a database without running migrations.
func NewEmptyDB(t testing.TB) *DB {
	t.Helper()
	return newDB(t, "")
}

// newDB creates a database from template ("": PostgreSQL's default, template1).
func newDB(t testing.TB, template string) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := Connect(ctx, DatabaseURL())
	if err != nil {
		t.Fatalf("connect to PostgreSQL at TEST_DATABASE_URL=%s: %v (run `make test`, which starts it)", DatabaseURL(), err)
	}
	defer admin.Close(ctx)

	name := "inkwell_test_" + sanitize(t.Name()) + "_" + RandomID(4)
	if err := createDatabase(ctx, admin, name, template); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	u, err := url.Parse(DatabaseURL())
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	db := &DB{Name: name, URL: u.String()}
	pcfg := PoolConfig(t, db.URL)
	// Fixed rather than pgxpool's max(4, CPUs): the Makefile's -p counts on it (every package's
	// tests share the server's max_connections).
	pcfg.MaxConns = PoolMaxConns
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatalf("open pool on %s: %v", name, err)
	}
	db.Pool = pool
	t.Cleanup(func() {
		pool.Close()
		dropDatabase(t, DatabaseURL(), name)
	})
	return db
}

// dropDatabase drops the database name on the server at serverURL (a test's, when it ends).
func dropDatabase(t testing.TB, serverURL, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := Connect(ctx, serverURL)
	if err != nil {
		t.Logf("drop %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Logf("drop %s: %v", name, err)
	}
}

// RedisMode is how TEST_REDIS_URL is read: "cluster" when TEST_REDIS_MODE=cluster or the URL
// lists more nodes (?addr=), else "single".
func RedisMode() string {
	switch m := os.Getenv("TEST_REDIS_MODE"); m {
	case "", "single":
	default:
		return m // "cluster", or a mistake that RedisOptions reports
	}
	if u, err := url.Parse(RedisURL()); err == nil && u.Query().Has("addr") {
		return "cluster"
	}
	return "single"
}

// RedisOptions returns the options of a client on the test Redis (a cluster client's when
// RedisMode is "cluster"), for redis.NewUniversalClient; tests that need a client tuned their
// own way change them (NewRedisClient does that and closes the client at the end).
func RedisOptions() (*redis.UniversalOptions, error) {
	switch mode := RedisMode(); mode {
	case "single":
		p, err := redis.ParseURL(RedisURL())
		if err != nil {
			return nil, fmt.Errorf("parse TEST_REDIS_URL: %w", err)
		}
		return &redis.UniversalOptions{Addrs: []string{p.Addr}, DB: p.DB, Username: p.Username, Password: p.Password,
			TLSConfig: p.TLSConfig, Protocol: p.Protocol, ClientName: p.ClientName, MaxRetries: p.MaxRetries,
			DialTimeout: p.DialTimeout, ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout, PoolSize: p.PoolSize}, nil
	case "cluster":
		p, err := redis.ParseClusterURL(RedisURL())
		if err != nil {
			return nil, fmt.Errorf("parse TEST_REDIS_URL as a cluster URL: %w", err)
		}
		return &redis.UniversalOptions{Addrs: p.Addrs, IsClusterMode: true, Username: p.Username, Password: p.Password,
			TLSConfig: p.TLSConfig, Protocol: p.Protocol, ClientName: p.ClientName, MaxRetries: p.MaxRetries,
			DialTimeout: p.DialTimeout, ReadTimeout: p.ReadTimeout, WriteTimeout: p.WriteTimeout, PoolSize: p.PoolSize,
			MaxRedirects: p.MaxRedirects}, nil
	default:
		return nil, fmt.Errorf("TEST_REDIS_MODE must be single or cluster, not %q", mode)
	}
}

// NewRedisClient returns a client on the test Redis (a cluster client in cluster mode), built
// from RedisOptions after tune (which may be nil) has changed them. It fails the test when Redis
// does not answer, and is closed when the test ends. It owns no key prefix: see NewRedis.
func NewRedisClient(t testing.TB, tune func(*redis.UniversalOptions)) redis.UniversalClient {
	t.Helper()
	opts, err := RedisOptions()
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(opts)
	}
	rdb := redis.NewUniversalClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		t.Fatalf("connect to Redis (%s) at TEST_REDIS_URL=%s: %v (run `make test`, which starts it; for a cluster, scripts/redis-cluster.sh start)",
			RedisMode(), RedisURL(), err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// ScanKeys returns every key matching pattern. On a cluster client it scans every master (a
// SCAN sent through a cluster client reaches one node only).
func ScanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	scan := func(ctx context.Context, c redis.UniversalClient) ([]string, error) {
		var keys []string
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return keys, iter.Err()
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, rdb)
	}
	var mu sync.Mutex
	var keys []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		k, err := scan(ctx, node)
		mu.Lock()
		keys = append(keys, k...)
		mu.Unlock()
		return err
	})
	return keys, err
}

// Redis is a client on the test Redis plus a key prefix no other test uses. Every key under the
// prefix is deleted when the test ends.
type Redis struct {
	Client redis.UniversalClient
	Prefix string
}

// NewRedis returns a Redis client and a unique key prefix for t. On a cluster (RedisMode) the
// client is a *redis.ClusterClient, and the keys are cleaned up on every master.
func NewRedis(t testing.TB) *Redis {
	t.Helper()
	rdb := NewRedisClient(t, nil)
	prefix := "inkwelltest:" + sanitize(t.Name()) + ":" + RandomID(4) + ":"
	// Registered after the client's Close, so it runs first.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, err := ScanKeys(ctx, rdb, prefix+"*")
		if err != nil {
			t.Logf("clean up Redis keys %s*: %v", prefix, err)
		}
		for _, k := range keys {
			rdb.Del(ctx, k) // one key a command: keys in different cluster slots cannot share a DEL
		}
	})
	return &Redis{Client: rdb, Prefix: prefix}
}

// DeadRedis returns a client pointed at a port where nothing listens, as if Redis were down.
func DeadRedis(t testing.TB) redis.UniversalClient {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{
		Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1, DialerRetries: 1,
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Logger discards logs unless INKWELL_TEST_LOG=1, when it writes them to stderr. (Not t.Log:
// background goroutines may still log after the test has finished.)
func Logger(testing.TB) *slog.Logger {
	if os.Getenv("INKWELL_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}
