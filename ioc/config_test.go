package ioc

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// parse reads a Config from env and args. The dev secret file defaults to one in a temporary
// directory of the test's, so that no test writes into the repository's .data/.
func parse(t *testing.T, env map[string]string, args ...string) *Config {
	t.Helper()
	t.Setenv("INKWELL_DEV_SECRET_FILE", filepath.Join(t.TempDir(), "jwt-secret"))
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
	if cfg.Server.Addr != ":8080" || cfg.Server.Env != "dev" || cfg.Server.MigrateOnStart || cfg.Auth.JWTLifetime != 24*time.Hour ||
		cfg.Telemetry.MetricsAddr != ":9464" || cfg.Server.DrainDelay != 5*time.Second {
		t.Fatalf("defaults: %+v", cfg)
	}
	if err := cfg.Validate(discard); err != nil {
		t.Fatal(err)
	}
	if !cfg.Auth.JWTSecretFromFile || len(cfg.Auth.JWTSecret) < 32 {
		t.Fatal("dev without a secret must take one from the dev secret file")
	}
	if def := parse(t, nil); flagDefault(t, "dev-secret-file") != DefaultDevSecretFile || def.Auth.DevSecretFile == DefaultDevSecretFile {
		t.Fatalf("dev secret file: default %q, in tests %q", flagDefault(t, "dev-secret-file"), def.Auth.DevSecretFile)
	}
}

// flagDefault is the default of the named flag when its environment variable is unset.
func flagDefault(t *testing.T, name string) string {
	t.Helper()
	t.Setenv("INKWELL_DEV_SECRET_FILE", "")
	os.Unsetenv("INKWELL_DEV_SECRET_FILE") // t.Setenv restores it when the test ends
	fs := flag.NewFlagSet("defaults", flag.ContinueOnError)
	Flags(fs)
	return fs.Lookup(name).DefValue
}

// TestDevSecretFileSurvivesRestarts: the first dev start creates the file (0600, in a new 0700
// directory) and logs that it did; the next start reads the same secret from it.
func TestDevSecretFileSurvivesRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "jwt-secret")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	first := parse(t, nil, "-dev-secret-file", path)
	if err := first.Validate(log); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("secret file not created: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secret file mode %04o, want 0600", perm)
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("secret directory: %v, %v; want mode 0700", di.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	if got := strings.TrimSpace(string(data)); got != first.Auth.JWTSecret || len(got) != 64 {
		t.Errorf("file holds %q, config has %q; want the same 64 hex digits", got, first.Auth.JWTSecret)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "action=created") ||
		!strings.Contains(logs.String(), path) {
		t.Errorf("creation not logged as a warning naming the file: %s", logs.String())
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 {
		t.Errorf("%d log lines, want 1: %s", n, logs.String())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	logs.Reset()
	second := parse(t, nil, "-dev-secret-file", path)
	if err := second.Validate(log); err != nil {
		t.Fatal(err)
	}
	if second.Auth.JWTSecret != first.Auth.JWTSecret {
		t.Fatal("a restart got a different secret")
	}
	if !strings.Contains(logs.String(), "action=read") {
		t.Errorf("reuse not logged: %s", logs.String())
	}
}

// TestDevSecretFileConcurrentStarts: instances started at the same moment on an empty directory
// all end up with one secret, the one in the file.
func TestDevSecretFileConcurrentStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".data", "jwt-secret")
	const n = 16
	cfgs := make([]*Config, n)
	for i := range cfgs {
		cfgs[i] = parse(t, nil, "-dev-secret-file", path)
	}
	gate := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for _, cfg := range cfgs {
		wg.Go(func() {
			<-gate
			errs <- cfg.Validate(discard)
		})
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, cfg := range cfgs {
		if cfg.Auth.JWTSecret != strings.TrimSpace(string(data)) {
			t.Fatalf("instance %d has secret %q, the file holds %q", i, cfg.Auth.JWTSecret, data)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestDevSecretFileRefused(t *testing.T) {
	long := strings.Repeat("s", 64)
	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"world-readable": {long, 0o644, "chmod 600"},
		"group-readable": {long, 0o640, "chmod 600"},
		"too short":      {"short\n", 0o600, "fewer than the 32"},
		"empty":          {"", 0o600, "fewer than the 32"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jwt-secret")
			if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			cfg := parse(t, nil, "-dev-secret-file", path)
			err := cfg.Validate(discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Validate = %v, want an error naming %s and saying %q", err, path, tc.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Error("a refused file was changed")
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		cfg := parse(t, nil, "-dev-secret-file", t.TempDir())
		if err := cfg.Validate(discard); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Validate = %v", err)
		}
	})
}

// A configured secret wins: the dev secret file is neither read nor created.
func TestDevSecretFileUnusedWithSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jwt-secret")
	cfg := parse(t, map[string]string{"INKWELL_JWT_SECRET": strings.Repeat("k", 32)}, "-dev-secret-file", path)
	if err := cfg.Validate(discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) || cfg.Auth.JWTSecretFromFile {
		t.Fatalf("dev secret file used although INKWELL_JWT_SECRET is set: %v", err)
	}
}

func TestConfigFromEnvironmentAndFlags(t *testing.T) {
	cfg := parse(t, map[string]string{
		"INKWELL_ADDR": ":9999", "INKWELL_MIGRATE_ON_START": "true", "INKWELL_DRAIN_DELAY": "1m",
		"REDIS_URL": "redis://cache:6380/2",
	}, "-addr", ":7777")
	if cfg.Server.Addr != ":7777" {
		t.Errorf("a flag must beat the environment: addr %q", cfg.Server.Addr)
	}
	if !cfg.Server.MigrateOnStart || cfg.Server.DrainDelay.String() != "1m0s" || cfg.Redis.URL != "redis://cache:6380/2" {
		t.Errorf("environment not applied: %+v", cfg)
	}
}

func TestConfigProdRequiresSecret(t *testing.T) {
	// Even with a usable dev secret file: prod takes its secret from INKWELL_JWT_SECRET only.
	path := filepath.Join(t.TempDir(), "jwt-secret")
	if err := os.WriteFile(path, []byte(strings.Repeat("s", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, map[string]string{"INKWELL_ENV": "prod", "INKWELL_DEV_SECRET_FILE": path})
	err := cfg.Validate(discard)
	if err == nil || !strings.Contains(err.Error(), "INKWELL_JWT_SECRET is required") {
		t.Fatalf("prod without a secret: %v", err)
	}
	if cfg.Auth.JWTSecret != "" || cfg.Auth.JWTSecretFromFile {
		t.Fatal("prod took the dev secret file")
	}
	// Nor does it create one.
	missing := filepath.Join(t.TempDir(), "jwt-secret")
	cfg = parse(t, map[string]string{"INKWELL_ENV": "prod", "INKWELL_DEV_SECRET_FILE": missing})
	_ = cfg.Validate(discard)
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("prod created a dev secret file: %v", err)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad env":      {"INKWELL_ENV": "staging"},
		"short secret": {"INKWELL_JWT_SECRET": "short"},
		"bad duration": {"INKWELL_DRAIN_DELAY": "ten minutes"},
		"bad bool":     {"INKWELL_MIGRATE_ON_START": "yes please"},
		"bad redis":    {"REDIS_URL": "localhost:6379"},
		"bad number":   {"INKWELL_ARGON2_MEMORY_KIB": "-1"},
		"bad proxy":    {"INKWELL_TRUSTED_PROXIES": "10.0.0.1, proxy.internal"},
		"bad CIDR":     {"INKWELL_TRUSTED_PROXIES": "10.0.0.0/33"},

		"no sessions":             {"INKWELL_SESSIONS_PER_USER": "0"},
		"redis no timeout":        {"REDIS_URL": "redis://127.0.0.1:6379/0?read_timeout=0"},
		"sentinel, no master":     {"INKWELL_REDIS_MODE": "sentinel", "REDIS_URL": "redis://127.0.0.1:26379/0"},
		"master outside sentinel": {"REDIS_URL": "redis://127.0.0.1:6379/0?master_name=mymaster"},

		"retention age":          {"INKWELL_RETENTION_SESSIONS": "a week"},
		"negative retention":     {"INKWELL_RETENTION_NOTIFICATIONS": "-1h"},
		"retention schedule":     {"INKWELL_RETENTION_SCHEDULE": "every ten minutes"},
		"negative history cap":   {"INKWELL_RETENTION_HISTORY": "-1"},
		"history cap not number": {"INKWELL_RETENTION_HISTORY": "lots"},

		"metrics addr no port":      {"INKWELL_METRICS_ADDR": "metrics.internal"},
		"metrics addr is the API's": {"INKWELL_METRICS_ADDR": ":8080"},
		"negative drain delay":      {"INKWELL_DRAIN_DELAY": "-1s"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := parse(t, env).Validate(discard); err == nil {
				t.Fatalf("%v accepted", env)
			}
		})
	}
}

func TestConfigMailSettings(t *testing.T) {
	mail := map[string]string{"INKWELL_MAIL_URL": "smtp://smtp.example.com", "INKWELL_MAIL_FROM": "inkwell <no-reply@example.com>"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range mail {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	t.Run("defaults_need_no_smtp", func(t *testing.T) {
		cfg := parse(t, nil)
		if err := cfg.Validate(discard); err != nil || cfg.Mail.URL != "" {
			t.Fatalf("defaults: %v %+v", err, cfg)
		}
	})
	prodWithUser := map[string]string{"INKWELL_ENV": "prod", "INKWELL_JWT_SECRET": strings.Repeat("s", 32),
		"INKWELL_CODE_SENDER": "https://sms.example.com"}
	t.Run("prod_with_encrypted_auth_is_accepted", func(t *testing.T) {
		env := with(prodWithUser)
		env["INKWELL_MAIL_URL"] = "smtp://u:p@smtp.example.com"
		if err := parse(t, env).Validate(discard); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("complete_settings_are_accepted", func(t *testing.T) {
		if err := parse(t, with(map[string]string{"INKWELL_MAIL_URL": "smtp://u%40x:p%3Aw@smtp.example.com:2465?tls=tls"})).Validate(discard); err != nil {
			t.Fatal(err)
		}
	})
	cleartext := with(prodWithUser)
	cleartext["INKWELL_MAIL_URL"] = "smtp://u:p@smtp.example.com?tls=none"
	for name, env := range map[string]map[string]string{
		"no from":                with(map[string]string{"INKWELL_MAIL_FROM": ""}),
		"bad from":               with(map[string]string{"INKWELL_MAIL_FROM": "not an address"}),
		"bad tls mode":           with(map[string]string{"INKWELL_MAIL_URL": "smtp://smtp.example.com?tls=ssl"}),
		"bad port":               with(map[string]string{"INKWELL_MAIL_URL": "smtp://smtp.example.com:0"}),
		"unknown scheme":         with(map[string]string{"INKWELL_MAIL_URL": "smtps://smtp.example.com"}),
		"cleartext auth in prod": cleartext,
	} {
		t.Run("rejected/"+name, func(t *testing.T) {
			if err := parse(t, env).Validate(discard); err == nil {
				t.Fatalf("%v accepted", env)
			}
		})
	}
}

// INKWELL_CODE_SENDER is log or the URL of the webhook that delivers codes (it took in
// INKWELL_CODE_WEBHOOK_URL): the old value webhook is refused with what to write instead, and log
// is refused in prod.
func TestConfigCodeSender(t *testing.T) {
	secret := strings.Repeat("s", 32)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr []string // empty: accepted
	}{
		{name: "log by default in dev", env: nil},
		{name: "a URL in dev", env: map[string]string{"INKWELL_CODE_SENDER": "http://127.0.0.1:9000/codes"}},
		{name: "a URL in prod", env: map[string]string{"INKWELL_ENV": "prod", "INKWELL_JWT_SECRET": secret, "INKWELL_CODE_SENDER": "https://sms.example.com/codes"}},
		{name: "log in prod", env: map[string]string{"INKWELL_ENV": "prod", "INKWELL_JWT_SECRET": secret},
			wantErr: []string{"INKWELL_CODE_SENDER=log only logs codes", "URL"}},
		{name: "the old webhook", env: map[string]string{"INKWELL_CODE_SENDER": "webhook", "INKWELL_CODE_WEBHOOK_URL": "https://sms.example.com/codes"},
			wantErr: []string{"INKWELL_CODE_SENDER", "not webhook", "set INKWELL_CODE_SENDER to the webhook's URL", "INKWELL_CODE_WEBHOOK_URL was folded into it"}},
		{name: "no scheme", env: map[string]string{"INKWELL_CODE_SENDER": "sms.example.com/codes"}, wantErr: []string{"must be log or the http(s) URL"}},
		{name: "another scheme", env: map[string]string{"INKWELL_CODE_SENDER": "ftp://u:hunter2@sms.example.com"}, wantErr: []string{"must be log or the http(s) URL"}},
		{name: "no host", env: map[string]string{"INKWELL_CODE_SENDER": "https://"}, wantErr: []string{"must be log or the http(s) URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parse(t, tc.env)
			err := cfg.Validate(discard)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				hook, ok := cfg.Mail.CodeWebhook()
				if want := tc.env["INKWELL_CODE_SENDER"]; (want != "") != ok || hook != cmp.Or(want, CodeSenderLog) {
					t.Errorf("CodeWebhook() = %q, %v for INKWELL_CODE_SENDER=%q", hook, ok, want)
				}
				return
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one saying %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the URL's password: %v", err)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := ParseTrustedProxies(" 10.0.0.1, ,192.168.0.0/16,::1 ")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.0.0.1", "192.168.0.0/16", "::1"}; !slices.Equal(got, want) {
		t.Errorf("proxies %q, want %q", got, want)
	}
	for _, bad := range []string{"proxy.internal", "10.0.0.0/33", "10.0.0.256", "10.0.0.1/"} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			_, err := ParseTrustedProxies("10.0.0.1," + bad)
			if err == nil || !strings.Contains(err.Error(), "INKWELL_TRUSTED_PROXIES") || !strings.Contains(err.Error(), bad) {
				t.Errorf("error %v, want one naming INKWELL_TRUSTED_PROXIES and %q", err, bad)
			}
		})
	}
}

func TestConfigRetention(t *testing.T) {
	cfg := parse(t, nil)
	if r := cfg.Retention; r.Schedule != "@every 10m" || r.Notifications != 90*24*time.Hour || r.Sessions != 24*time.Hour || r.History != 1000 {
		t.Fatalf("retention defaults: %+v", r)
	}
	if d := flagDefault(t, "retention-notifications"); d != "90d" {
		t.Errorf("--help shows the notifications' retention as %q", d)
	}
	cfg = parse(t, map[string]string{
		"INKWELL_RETENTION_SCHEDULE": "off", "INKWELL_RETENTION_SESSIONS": "0",
		"INKWELL_RETENTION_NOTIFICATIONS": "14d", "INKWELL_RETENTION_HISTORY": "off",
	}, "-retention-sessions", "2d")
	if err := cfg.Validate(discard); err != nil {
		t.Fatal(err)
	}
	if r := cfg.Retention; r.Schedule != RetentionOff || r.Notifications != 14*24*time.Hour || r.History != 0 || r.Sessions != 48*time.Hour {
		t.Fatalf("retention from the environment and flags: %+v", r)
	}
	cfg = parse(t, map[string]string{"INKWELL_RETENTION_SESSIONS": "90m"})
	if cfg.Retention.Sessions != 90*time.Minute {
		t.Fatalf("retention in minutes: %v", cfg.Retention.Sessions)
	}
}

func TestConfigPooler(t *testing.T) {
	const pooled, direct = "postgres://inkwell@pgbouncer:6432/inkwell", "postgres://inkwell@db:5432/inkwell"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		session string   // SessionURL when accepted
		wantErr []string // empty: accepted
	}{
		{name: "no pooler: everything on DATABASE_URL", env: map[string]string{"DATABASE_URL": direct}, session: direct},
		{name: "pgbouncer with the direct URL", env: map[string]string{"DATABASE_URL": pooled, "DATABASE_POOLER": "pgbouncer", "DATABASE_DIRECT_URL": direct}, session: direct},
		{name: "pgbouncer without the direct URL", env: map[string]string{"DATABASE_URL": pooled, "DATABASE_POOLER": "pgbouncer"},
			wantErr: []string{"DATABASE_POOLER=pgbouncer needs DATABASE_DIRECT_URL"}},
		{name: "a direct URL without a pooler", env: map[string]string{"DATABASE_DIRECT_URL": direct},
			wantErr: []string{"DATABASE_DIRECT_URL is set but DATABASE_POOLER is not"}},
		{name: "another pooler", env: map[string]string{"DATABASE_POOLER": "pgpool", "DATABASE_DIRECT_URL": direct},
			wantErr: []string{"DATABASE_POOLER", "pgbouncer"}},
		{name: "session parameters through PgBouncer", env: map[string]string{"DATABASE_URL": pooled + "?statement_timeout=10s", "DATABASE_POOLER": "pgbouncer", "DATABASE_DIRECT_URL": direct},
			wantErr: []string{"DATABASE_URL sets statement_timeout", "ALTER ROLE"}},
		{name: "a direct URL that is no URL", env: map[string]string{"DATABASE_URL": pooled, "DATABASE_POOLER": "pgbouncer", "DATABASE_DIRECT_URL": "db:5432 inkwell"},
			wantErr: []string{"DATABASE_DIRECT_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parse(t, tc.env)
			err := cfg.Validate(discard)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Database.SessionURL(); got != tc.session {
					t.Errorf("SessionURL() = %q, want %q", got, tc.session)
				}
				return
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one saying %q", err, want)
				}
			}
		})
	}
}
