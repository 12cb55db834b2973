package testenv

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/migrations"
)

func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := Connect(t.Context(), DatabaseURL())
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// scratchTemplate is a template name of this test's own, dropped when the test ends.
func scratchTemplate(t *testing.T) string {
	t.Helper()
	name := "inkwell_tpl_test_" + RandomID(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := Connect(ctx, DatabaseURL())
		if err != nil {
			t.Logf("drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("drop %s: %v", name, err)
		}
	})
	return name
}

// urlOf is the URL of the database name on the test server.
func urlOf(t *testing.T, name string) string {
	t.Helper()
	u, err := url.Parse(DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func goose(t *testing.T, db *DB) int64 {
	t.Helper()
	var v int64
	if err := db.Pool.QueryRow(t.Context(), "SELECT max(version_id) FROM goose_db_version").Scan(&v); err != nil {
		t.Fatalf("read goose_db_version: %v", err)
	}
	return v
}

func TestNewDB_CopiesTheCompleteTemplate(t *testing.T) {
	t.Parallel()
	db := NewDB(t)
	if v, want := goose(t, db), migrations.LatestVersion(); v != want {
		t.Errorf("migrated to version %d, want %d", v, want)
	}
	name, err := TemplateName()
	if err != nil {
		t.Fatal(err)
	}
	var comment string
	var allowConn bool
	var conns int
	err = adminConn(t).QueryRow(t.Context(), `SELECT coalesce(shobj_description(d.oid, 'pg_database'), ''), d.datallowconn,
		(SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname) FROM pg_database d WHERE d.datname = $1`,
		name).Scan(&comment, &allowConn, &conns)
	if err != nil {
		t.Fatalf("look up template %s: %v", name, err)
	}
	if comment != templateMarker || allowConn || conns != 0 {
		t.Errorf("template %s: comment %q, allows connections %v, %d connected; want %q, false, 0", name, comment, allowConn, conns, templateMarker)
	}
}

func TestTemplateName_DependsOnTheMigrationsOnly(t *testing.T) {
	t.Parallel()
	a, err := TemplateName()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := TemplateName()
	if a != b || len(a) != len("inkwell_tpl_")+16 {
		t.Errorf("TemplateName gave %q then %q, want one stable inkwell_tpl_<16 hex digits>", a, b)
	}
}

// Test processes starting together build the template once: the advisory lock makes the
// others wait and then find it complete.
func TestEnsureTemplate_ConcurrentCallersBuildOnce(t *testing.T) {
	t.Parallel()
	name := scratchTemplate(t)
	var builds atomic.Int32
	migrate := func(ctx context.Context, url string) error {
		builds.Add(1)
		time.Sleep(200 * time.Millisecond) // widen the window in which a second builder would start
		return migrateDatabase(ctx, url)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = ensureTemplate(t.Context(), name, migrate) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("template built %d times, want once", n)
	}
	db := newDB(t, name)
	if v, want := goose(t, db), migrations.LatestVersion(); v != want {
		t.Errorf("copy migrated to version %d, want %d", v, want)
	}
}

// A template left half-built (no marker: its builder died) is dropped and built again, never
// copied.
func TestEnsureTemplate_RebuildsAnIncompleteTemplate(t *testing.T) {
	t.Parallel()
	name := scratchTemplate(t)
	admin := adminConn(t)
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	func() { // the leftover gets a stray table, which a rebuilt template lacks
		c, err := Connect(t.Context(), urlOf(t, name))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(t.Context())
		if _, err := c.Exec(t.Context(), "CREATE TABLE leftover (id int)"); err != nil {
			t.Fatal(err)
		}
	}()
	if err := waitNoConnections(t.Context(), admin, name); err != nil {
		t.Fatal(err)
	}
	if err := ensureTemplate(t.Context(), name, migrateDatabase); err != nil {
		t.Fatal(err)
	}
	db := newDB(t, name)
	var leftover bool
	if err := db.Pool.QueryRow(t.Context(), "SELECT to_regclass('leftover') IS NOT NULL").Scan(&leftover); err != nil {
		t.Fatal(err)
	}
	if leftover {
		t.Error("the incomplete template was reused: its stray table is in the copy")
	}
	if v, want := goose(t, db), migrations.LatestVersion(); v != want {
		t.Errorf("copy migrated to version %d, want %d", v, want)
	}
}

// CREATE DATABASE ... TEMPLATE fails while someone is connected to the template (PostgreSQL
// itself waits 5 s); createDatabase retries, so a connection that goes away soon after does not
// fail the test.
func TestCreateDatabase_RetriesWhileTheTemplateIsInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5 s")
	}
	t.Parallel()
	name := scratchTemplate(t)
	admin := adminConn(t)
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	busy, err := Connect(t.Context(), urlOf(t, name))
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(5500*time.Millisecond, func() { _ = busy.Close(context.Background()) })

	copyName := scratchTemplate(t) // any name of this test's own, dropped at the end
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := createDatabase(ctx, admin, copyName, name); err != nil {
		t.Fatalf("CREATE DATABASE from a template in use for 5.5 s: %v", err)
	}
}
