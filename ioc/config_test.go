package ioc

import (
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func parse(t *testing.T, env map[string]string, args ...string) *Config {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestConfigDefaults(t *testing.T) {
	cfg := parse(t, nil)
	if cfg.Addr != ":8080" || cfg.Env != "dev" || cfg.MigrateOnStart {
		t.Fatalf("defaults: %+v", cfg)
	}
	if err := cfg.Validate(discard); err != nil {
		t.Fatal(err)
	}
	if !cfg.GeneratedJWTSecret || len(cfg.JWTSecret) < 32 {
		t.Fatal("dev without a secret must generate one")
	}
}

func TestConfigFromEnvironmentAndFlags(t *testing.T) {
	cfg := parse(t, map[string]string{
		"INKWELL_ADDR": ":9999", "INKWELL_MIGRATE_ON_START": "true", "INKWELL_CACHE_TTL": "1m",
		"REDIS_URL": "redis://cache:6380/2",
	}, "-addr", ":7777")
	if cfg.Addr != ":7777" {
		t.Errorf("a flag must beat the environment: addr %q", cfg.Addr)
	}
	if !cfg.MigrateOnStart || cfg.CacheTTL.String() != "1m0s" || cfg.RedisURL != "redis://cache:6380/2" {
		t.Errorf("environment not applied: %+v", cfg)
	}
}

func TestConfigProdRequiresSecret(t *testing.T) {
	cfg := parse(t, map[string]string{"INKWELL_ENV": "prod"})
	err := cfg.Validate(discard)
	if err == nil || !strings.Contains(err.Error(), "INKWELL_JWT_SECRET is required") {
		t.Fatalf("prod without a secret: %v", err)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad env":      {"INKWELL_ENV": "staging"},
		"short secret": {"INKWELL_JWT_SECRET": "short"},
		"bad duration": {"INKWELL_CACHE_TTL": "ten minutes"},
		"bad bool":     {"INKWELL_MIGRATE_ON_START": "yes please"},
		"bad redis":    {"REDIS_URL": "localhost:6379"},
		"bad number":   {"INKWELL_ARGON2_ITERATIONS": "-1"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := parse(t, env).Validate(discard); err == nil {
				t.Fatalf("%v accepted", env)
			}
		})
	}
}
