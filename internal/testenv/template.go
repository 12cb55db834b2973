package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/migrations"
)

// Migrated test databases are copies of one template database per migrations content: the
// first NewDB of a test process makes sure inkwell_tpl_<hash> exists and is complete (migrating
// it if not), and every NewDB is then a CREATE DATABASE ... TEMPLATE, a file-level copy that
// costs a fraction of running the migrations.
//
//   - The name carries a hash of the embedded migration files (names and contents) and of
//     templateFormat, so a changed migration gets a template of its own; branches with other
//     migrations, sharing the server, keep theirs. Old templates are left behind (about 8 MB
//     each); drop them by hand while no tests run.
//   - It is built under a PostgreSQL advisory lock keyed on the name, so test processes
//     running side by side (go test -p N) build it once: the others wait, then find it done.
//   - It is complete when its COMMENT is templateMarker, set as the last step. A template
//     without the marker (a process died while building it) is dropped and built again.
//   - It does not accept connections (ALLOW_CONNECTIONS false) once built: PostgreSQL refuses to
//     copy a database that anyone is connected to, so nothing may connect to it by accident.

// templateFormat changes whenever the way a template is built changes, to retire the old ones.
const templateFormat = "1"

// templateMarker is the COMMENT of a complete template database.
const templateMarker = "inkwell test template: complete"

var templateState struct {
	once sync.Once
	name string
	err  error
}

// templateDB returns the name of this process's complete template database, building it (once
// per process, and once across processes under the advisory lock) when it is missing.
func templateDB() (string, error) {
	templateState.once.Do(func() {
		name, err := TemplateName()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			err = ensureTemplate(ctx, name, migrateDatabase)
		}
		templateState.name, templateState.err = name, err
	})
	return templateState.name, templateState.err
}

// TemplateName is the name of the template database for the embedded migrations:
// inkwell_tpl_ and 16 hex digits of a SHA-256 over templateFormat and every migration file's
// name and contents.
func TemplateName() (string, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return "", fmt.Errorf("list migrations: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "format %s\n", templateFormat)
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return "", fmt.Errorf("read migration %s: %w", n, err)
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return "inkwell_tpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// migrateDatabase applies the embedded migrations to the database at databaseURL and closes
// every connection it opened.
func migrateDatabase(ctx context.Context, databaseURL string) error {
	r, err := migrations.Open(databaseURL)
	if err != nil {
		return fmt.Errorf("open migrations: %w", err)
	}
	_, err = r.Up(ctx, Logger(nil))
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// ensureTemplate makes sure the database name exists, was built by migrate and carries
// templateMarker. It holds an advisory lock on the maintenance database while it looks and
// builds, so concurrent callers (other test processes) build it once.
func ensureTemplate(ctx context.Context, name string, migrate func(ctx context.Context, databaseURL string) error) (err error) {
	admin, err := Connect(ctx, DatabaseURL())
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL at TEST_DATABASE_URL=%s: %w (run `make test`, which starts it)", DatabaseURL(), err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	// Session-level: released by the unlock below, or by the server when this connection ends.
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended($1, 0))", name); err != nil {
		return fmt.Errorf("lock template %s: %w", name, err)
	}
	defer func() {
		if _, uerr := admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended($1, 0))", name); uerr != nil && err == nil {
			err = fmt.Errorf("unlock template %s: %w", name, uerr)
		}
	}()

	complete, exists, err := templateStatus(ctx, admin, name)
	if err != nil || complete {
		return err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if exists { // half-built by a process that died: start again
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop incomplete template %s: %w", name, err)
		}
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return fmt.Errorf("create template %s: %w", name, err)
	}
	u, err := url.Parse(DatabaseURL())
	if err != nil {
		return fmt.Errorf("parse TEST_DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	if err := migrate(ctx, u.String()); err != nil {
		return fmt.Errorf("migrate template %s: %w", name, err)
	}
	// Refuse new connections, then wait for the migration's backends to be gone: a client's
	// close returns before its server process has exited.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("close template %s to connections: %w", name, err)
	}
	if err := waitNoConnections(ctx, admin, name); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS "+quoteLiteral(templateMarker)); err != nil {
		return fmt.Errorf("mark template %s complete: %w", name, err)
	}
	return nil
}

// templateState_ reports whether the database name exists and whether it is a complete template.
func templateStatus(ctx context.Context, admin *pgx.Conn, name string) (complete, exists bool, err error) {
	var comment string
	err = admin.QueryRow(ctx, `SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = $1`,
		name).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("look up template %s: %w", name, err)
	}
	return comment == templateMarker, true, nil
}

// waitNoConnections waits (up to 10 s) until no backend is connected to the database name.
func waitNoConnections(ctx context.Context, admin *pgx.Conn, name string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", name).Scan(&n); err != nil {
			return fmt.Errorf("count connections to %s: %w", name, err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("template %s still has %d connections 10s after migrating", name, n)
		}
		time.Sleep(50 * time.Millisecond) // polling the server's process table, not synchronizing test logic
	}
}

// createDatabase runs CREATE DATABASE name [TEMPLATE template]. PostgreSQL refuses to copy a
// template while another backend is connected to it (SQLSTATE 55006, "source database ... is
// being accessed by other users"; it already waits 5 s for autovacuum itself): that is retried a
// few times before giving up.
func createDatabase(ctx context.Context, admin *pgx.Conn, name, template string) error {
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	const attempts = 5
	for i := 1; ; i++ {
		_, err := admin.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		if err == nil || i == attempts || !errors.As(err, &pgErr) || pgErr.Code != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i) * 200 * time.Millisecond):
		}
	}
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
