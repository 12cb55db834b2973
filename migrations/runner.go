package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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
// long, and DATABASE_URL's statement_timeout (a request's bound) does not apply here.
var SessionSettings = map[string]string{
	"lock_timeout":      "10000", // milliseconds
	"statement_timeout": "0",
}

// Open connects to databaseURL and prepares the runner. Close releases the connection.
//
// Every run holds a PostgreSQL session-level advisory lock (goose's session locker), so two
// instances starting at once apply each migration exactly once: the second waits, polling once a
// second for up to five minutes, then finds nothing left to do.
//
// databaseURL is the app's DATABASE_URL: its pool_* parameters (pool_max_conns, ...) size the
// app's pools, and PostgreSQL refuses a session that sends them as settings, so they are left out
// here (pgxpool's parser takes them off).
func Open(databaseURL string) (*Runner, error) {
	poolCfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	cfg := poolCfg.ConnConfig
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

// Change is one migration applied or rolled back.
type Change struct {
	Version  int64
	File     string
	Down     bool // rolled back
	Duration time.Duration
}

func (c Change) String() string {
	verb := "applied"
	if c.Down {
		verb = "rolled back"
	}
	return fmt.Sprintf("%s %s (%v)", verb, c.File, c.Duration.Round(time.Millisecond))
}

func changes(results []*goose.MigrationResult) []Change {
	out := make([]Change, 0, len(results))
	for _, res := range results {
		if res.Error == nil {
			out = append(out, Change{Version: res.Source.Version, File: res.Source.Path, Down: res.Direction == "down", Duration: res.Duration})
		}
	}
	return out
}

// UpTo applies the pending migrations up to and including version (math.MaxInt64: all) and
// returns what it applied, also when one failed.
func (r *Runner) UpTo(ctx context.Context, version int64) ([]Change, error) {
	results, err := r.provider.UpTo(ctx, version)
	if err != nil {
		return changes(partial(results, err)), fmt.Errorf("migrate up: %w", err)
	}
	return changes(results), nil
}

// UpAll is UpTo every embedded migration.
func (r *Runner) UpAll(ctx context.Context) ([]Change, error) { return r.UpTo(ctx, math.MaxInt64) }

// Down rolls back the most recently applied migration; with none applied it changes nothing.
func (r *Runner) Down(ctx context.Context) ([]Change, error) {
	res, err := r.provider.Down(ctx)
	if errors.Is(err, goose.ErrNoNextVersion) {
		return nil, nil
	}
	if err != nil {
		return changes(partial(nil, err)), fmt.Errorf("migrate down: %w", err)
	}
	return changes([]*goose.MigrationResult{res}), nil
}

// DownTo rolls back every applied migration above version (0: all of them).
func (r *Runner) DownTo(ctx context.Context, version int64) ([]Change, error) {
	results, err := r.provider.DownTo(ctx, version)
	if err != nil {
		return changes(partial(results, err)), fmt.Errorf("migrate down: %w", err)
	}
	return changes(results), nil
}

// Version is the database's current migration version (0: none applied).
func (r *Runner) Version(ctx context.Context) (int64, error) {
	v, err := r.provider.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migration version: %w", err)
	}
	return v, nil
}

// partial is the results a failed goose run reports: what it did before the failure.
func partial(results []*goose.MigrationResult, err error) []*goose.MigrationResult {
	var pe *goose.PartialError
	if errors.As(err, &pe) {
		return pe.Applied
	}
	return results
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
