package ioc

import (
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
		SessionTimeouts(&Config{DBStatementTimeout: 250 * time.Millisecond, DBIdleInTxTimeout: 90 * time.Second}, pcfg)
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
		SessionTimeouts(&Config{DBStatementTimeout: time.Second}, pcfg)
		WithoutStatementTimeout(pcfg)
		if got := pcfg.ConnConfig.RuntimeParams["statement_timeout"]; got != "0" {
			t.Errorf("statement_timeout %q, want 0", got)
		}
	})
}

// A connection attempt is bounded by INKWELL_DB_CONNECT_TIMEOUT unless DATABASE_URL says
// otherwise; the resilience suite shows the pool recovering within it after PostgreSQL stops
// answering.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, url string
		setting   time.Duration
		want      time.Duration
	}{
		{"from the setting", "postgres://postgres@127.0.0.1:5432/inkwell", 5 * time.Second, 5 * time.Second},
		{"the URL's connect_timeout wins", "postgres://postgres@127.0.0.1:5432/inkwell?connect_timeout=12", 5 * time.Second, 12 * time.Second},
		{"0 leaves it unbounded", "postgres://postgres@127.0.0.1:5432/inkwell", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pcfg, err := pgxpool.ParseConfig(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			ConnectTimeout(&Config{DatabaseURL: tc.url, DBConnectTimeout: tc.setting}, pcfg)
			if got := pcfg.ConnConfig.ConnectTimeout; got != tc.want {
				t.Errorf("connect timeout %v, want %v", got, tc.want)
			}
		})
	}
}
