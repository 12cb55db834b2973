package ioc

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The session timeouts reach the pool's startup parameters in milliseconds (what PostgreSQL
// reads a unitless value as) unless the URL sets them; repository/pg's TestSessionTimeouts shows
// PostgreSQL enforcing them.
func TestSessionTimeouts(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, url string) *pgxpool.Config {
		t.Helper()
		pcfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		return pcfg
	}
	const base = "postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable"

	for _, tc := range []struct {
		name, query         string
		statement, idleInTx string // "" when not sent
	}{
		{"the defaults when the URL is silent", "", "30000", "60000"},
		{"the URL's values win", "&statement_timeout=5s&idle_in_transaction_session_timeout=90000", "5s", "90000"},
		{"the URL's 0 keeps the server's setting", "&statement_timeout=0", "", "60000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pcfg := parse(t, base+tc.query)
			SessionTimeouts(pcfg)
			for param, want := range map[string]string{"statement_timeout": tc.statement, "idle_in_transaction_session_timeout": tc.idleInTx} {
				got, set := pcfg.ConnConfig.RuntimeParams[param]
				if want == "" && set {
					t.Errorf("%s = %q is sent, want the server's own", param, got)
				}
				if want != "" && got != want {
					t.Errorf("%s = %q, want %q", param, got, want)
				}
			}
		})
	}
	t.Run("seed opts out of the statement timeout", func(t *testing.T) {
		t.Parallel()
		pcfg := parse(t, base)
		SessionTimeouts(pcfg)
		WithoutStatementTimeout(pcfg)
		if got := pcfg.ConnConfig.RuntimeParams["statement_timeout"]; got != "0" {
			t.Errorf("statement_timeout %q, want 0", got)
		}
	})
}

// Behind a pooler the app's pool prepares nothing on the server and sends no session timeouts
// (PgBouncer refuses them in the startup packet); every other pool reaches PostgreSQL itself at
// DATABASE_DIRECT_URL with them.
func TestPoolerTargets(t *testing.T) {
	t.Parallel()
	cfg := &Config{Database: DatabaseConfig{
		URL:       "postgres://postgres@127.0.0.1:6432/inkwell?sslmode=disable",
		Pooler:    PoolerPgBouncer,
		DirectURL: "postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable",
	}}
	log := slog.New(slog.DiscardHandler)
	none := func(*pgxpool.Config) {}

	app, appCfg, err := newPgPoolAt(cfg, poolTarget{url: cfg.Database.URL, setting: "DATABASE_URL", pooled: cfg.Database.Pooled()}, "app", 2, none, log)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if appCfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		t.Errorf("the pooled pool's query mode is %v, want cache_describe (no prepared statements)", appCfg.ConnConfig.DefaultQueryExecMode)
	}
	for _, param := range sessionParams {
		if _, set := appCfg.ConnConfig.RuntimeParams[param]; set {
			t.Errorf("the pooled pool sends %s, which PgBouncer refuses", param)
		}
	}

	direct, directCfg, err := newPgPoolAt(cfg, sessionTarget(cfg), "direct", 2, none, log)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if directCfg.ConnConfig.Port != 5432 || directCfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		t.Errorf("the session pool reaches port %d in mode %v, want DATABASE_DIRECT_URL's 5432 with prepared statements",
			directCfg.ConnConfig.Port, directCfg.ConnConfig.DefaultQueryExecMode)
	}
	if directCfg.ConnConfig.RuntimeParams["statement_timeout"] != "30000" {
		t.Errorf("the session pool's statement_timeout is %q, want the default 30000", directCfg.ConnConfig.RuntimeParams["statement_timeout"])
	}
}

// A connection attempt is bounded by DBConnectTimeout unless DATABASE_URL says
// otherwise; the resilience suite shows the pool recovering within it after PostgreSQL stops
// answering.
func TestBoundConnects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, url string
		want      time.Duration
	}{
		{"the constant", "postgres://postgres@127.0.0.1:5432/inkwell", 5 * time.Second},
		{"the URL's connect_timeout wins", "postgres://postgres@127.0.0.1:5432/inkwell?connect_timeout=12", 12 * time.Second},
		{"the URL's 0 leaves it unbounded", "postgres://postgres@127.0.0.1:5432/inkwell?connect_timeout=0", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pcfg, err := pgxpool.ParseConfig(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			boundConnects(pcfg, tc.url)
			if got := pcfg.ConnConfig.ConnectTimeout; got != tc.want {
				t.Errorf("connect timeout %v, want %v", got, tc.want)
			}
		})
	}
}

// Redis calls are bounded by short timeouts unless REDIS_URL sets others; a URL that would
// remove the bound is refused, since a request would then wait on a silent Redis instead of
// falling back to PostgreSQL.
func TestRedisTimeouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode, url   string
		dial, read, write time.Duration
		wantErr           string
	}{
		{name: "defaults", mode: RedisSingle, url: "redis://127.0.0.1:6379/0",
			dial: time.Second, read: 300 * time.Millisecond, write: 300 * time.Millisecond},
		{name: "the URL's own", mode: RedisSingle, url: "redis://127.0.0.1:6379/0?read_timeout=2s&write_timeout=1500ms&dial_timeout=3",
			dial: 3 * time.Second, read: 2 * time.Second, write: 1500 * time.Millisecond},
		{name: "cluster, one set", mode: RedisCluster, url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001&read_timeout=1s",
			dial: time.Second, read: time.Second, write: 300 * time.Millisecond},
		{name: "sentinel, one set", mode: RedisSentinel, url: "redis://127.0.0.1:26379/0?master_name=m&write_timeout=700ms",
			dial: time.Second, read: 300 * time.Millisecond, write: 700 * time.Millisecond},
		{name: "zero is no timeout: refused", mode: RedisSingle, url: "redis://127.0.0.1:6379/0?read_timeout=0", wantErr: "read_timeout must be a positive duration"},
		{name: "negative: refused", mode: RedisSingle, url: "redis://127.0.0.1:6379/0?dial_timeout=-1s", wantErr: "dial_timeout must be a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := RedisOptions(&Config{Redis: RedisConfig{Mode: tc.mode, URL: tc.url}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.DialTimeout != tc.dial || o.ReadTimeout != tc.read || o.WriteTimeout != tc.write {
				t.Errorf("dial %s, read %s, write %s; want %s, %s, %s", o.DialTimeout, o.ReadTimeout, o.WriteTimeout, tc.dial, tc.read, tc.write)
			}
			if o.MaxRetries != -1 {
				t.Errorf("MaxRetries %d, want -1 (none) whatever the URL says", o.MaxRetries)
			}
		})
	}
}

// In sentinel mode the master's name is REDIS_URL's master_name= (it replaced
// INKWELL_REDIS_SENTINEL_MASTER): a Sentinel URL without one is refused with what to add, and one
// outside sentinel mode is refused too rather than ignored.
func TestRedisSentinelMaster(t *testing.T) {
	t.Parallel()
	o, err := RedisOptions(&Config{Redis: RedisConfig{Mode: RedisSentinel, URL: "redis://s1:26379/0?master_name=mymaster&addr=s2:26379&addr=s3:26379"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.MasterName != "mymaster" || !slices.Equal(o.Addrs, []string{"s1:26379", "s2:26379", "s3:26379"}) {
		t.Errorf("master %q, Sentinels %v; want mymaster at s1, s2 and s3", o.MasterName, o.Addrs)
	}

	_, err = RedisOptions(&Config{Redis: RedisConfig{Mode: RedisSentinel, URL: "redis://s1:26379/0?addr=s2:26379"}})
	for _, want := range []string{"master_name=", "REDIS_URL=redis://s1:26379/0?master_name=mymaster&addr=s2:26379", "INKWELL_REDIS_SENTINEL_MASTER"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a Sentinel URL without master_name: err = %v, want one saying %q", err, want)
		}
	}

	for _, mode := range []string{RedisSingle, RedisCluster} {
		_, err := RedisOptions(&Config{Redis: RedisConfig{Mode: mode, URL: "redis://127.0.0.1:6379?master_name=mymaster"}})
		if err == nil || !strings.Contains(err.Error(), "INKWELL_REDIS_MODE=sentinel") {
			t.Errorf("master_name in %s mode: err = %v, want one pointing to INKWELL_REDIS_MODE=sentinel", mode, err)
		}
	}
}
