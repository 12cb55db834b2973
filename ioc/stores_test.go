package ioc

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The session timeouts reach the pool's startup parameters in milliseconds (what PostgreSQL
// reads a unitless value as); repository's TestSessionTimeouts shows PostgreSQL enforcing them.
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
	const url = "postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable&statement_timeout=5000"

	t.Run("set from the config", func(t *testing.T) {
		t.Parallel()
		pcfg := parse(t, url)
		SessionTimeouts(&Config{Database: DatabaseConfig{StatementTimeout: 250 * time.Millisecond, IdleInTxTimeout: 90 * time.Second}}, pcfg)
		if got := pcfg.ConnConfig.RuntimeParams["statement_timeout"]; got != "250" {
			t.Errorf("statement_timeout %q, want 250", got)
		}
		if got := pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; got != "90000" {
			t.Errorf("idle_in_transaction_session_timeout %q, want 90000", got)
		}
	})
	t.Run("zero keeps the URL's or server's setting", func(t *testing.T) {
		t.Parallel()
		pcfg := parse(t, url)
		SessionTimeouts(&Config{}, pcfg)
		if got := pcfg.ConnConfig.RuntimeParams["statement_timeout"]; got != "5000" {
			t.Errorf("statement_timeout %q, want the URL's 5000", got)
		}
		if _, set := pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; set {
			t.Error("idle_in_transaction_session_timeout set though the config says 0")
		}
	})
	t.Run("seed opts out of the statement timeout", func(t *testing.T) {
		t.Parallel()
		pcfg := parse(t, url)
		SessionTimeouts(&Config{Database: DatabaseConfig{StatementTimeout: time.Second}}, pcfg)
		WithoutStatementTimeout(pcfg)
		if got := pcfg.ConnConfig.RuntimeParams["statement_timeout"]; got != "0" {
			t.Errorf("statement_timeout %q, want 0", got)
		}
	})
}

// A connection attempt is bounded by DBConnectTimeout unless DATABASE_URL says
// otherwise; the resilience suite shows the pool recovering within it after PostgreSQL stops
// answering.
func TestConnectTimeout(t *testing.T) {
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
			ConnectTimeout(&Config{Database: DatabaseConfig{URL: tc.url}}, pcfg)
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
