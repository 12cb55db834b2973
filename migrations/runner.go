package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Status is one migration's state.
type Status struct {
	Version int64
	Name    string
	Applied bool
}

// Runner applies the embedded migrations to one database.
type Runner struct {
	db       *sql.DB
	provider *goose.Provider
}

// SessionSettings are set on the migration runner's sessions. lock_timeout: a migration that
// waits for a lock (ALTER TABLE behind a long transaction, CREATE INDEX CONCURRENTLY behind an old
// snapshot) fails after 10s instead of queueing every request behind its own lock request; rerun
// it when the blocker is gone. statement_timeout 0: building an index on a large table may take
// long, and INKWELL_DB_STATEMENT_TIMEOUT (a request's bound) does not apply here.
var SessionSettings = map[string]string{
	"lock_timeout":      "10000", // milliseconds
	"statement_timeout": "0",
}

// Open connects to databaseURL and prepares the runner. Close releases the connection.
//
// Every run holds a PostgreSQL session-level advisory lock (goose's session locker), so two
// instances starting at once apply each migration exactly once: the second waits, polling once a
// second for up to five minutes, then finds nothing left to do.
func Open(databaseURL string) (*Runner, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	for param, value := range SessionSettings {
		cfg.RuntimeParams[param] = value
	}
	db := stdlib.OpenDB(*cfg)
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS, goose.WithSessionLocker(locker))
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return &Runner{db: db, provider: p}, nil
}

// Close releases the database connection.
func (r *Runner) Close() error { return r.provider.Close() }

// Up applies every pending migration and returns how many it applied.
func (r *Runner) Up(ctx context.Context, log *slog.Logger) (int, error) {
	results, err := r.provider.Up(ctx)
	for _, res := range results {
		log.InfoContext(ctx, "migration applied", "version", res.Source.Version, "file", res.Source.Path, "duration", res.Duration)
	}
	if err != nil {
		return len(results), fmt.Errorf("migrate up: %w", err)
	}
	return len(results), nil
}

// Status lists every known migration and whether it has been applied.
func (r *Runner) Status(ctx context.Context) ([]Status, error) {
	st, err := r.provider.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]Status, 0, len(st))
	for _, s := range st {
		out = append(out, Status{Version: s.Source.Version, Name: s.Source.Path, Applied: s.State == goose.StateApplied})
	}
	return out, nil
}

// PrintStatus writes a human-readable status table.
func PrintStatus(w io.Writer, st []Status) {
	for _, s := range st {
		state := "pending"
		if s.Applied {
			state = "applied"
		}
		fmt.Fprintf(w, "%-8s %05d %s\n", state, s.Version, s.Name)
	}
}
