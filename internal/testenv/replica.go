package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ReplicaDelay is the replay delay the replica tests run with (recovery_min_apply_delay): long
// enough that a read racing a write on the replica reliably misses it, short enough for tests.
const ReplicaDelay = 500 * time.Millisecond

// ReplicaPrimaryURL is the server whose streaming replica the replica tests read
// (scripts/services.sh replica makes the pair; make test starts it).
func ReplicaPrimaryURL() string {
	if v := os.Getenv("TEST_REPLICA_PRIMARY_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable"
}

// ReplicaURL is that server's replica.
func ReplicaURL() string {
	if v := os.Getenv("TEST_REPLICA_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5434/postgres?sslmode=disable"
}

// ReplicatedDB is a migrated database on the replica pair's primary, and the same database as
// its replica replays it, ReplicaDelay behind.
type ReplicatedDB struct {
	DB
	ReplicaURL  string
	ReplicaPool *pgxpool.Pool
}

// NewReplicatedDB creates a migrated database on the primary of the replica pair, waits until the
// replica has replayed it, and drops it when the test ends. It fails the test, saying how to
// start the pair, when either server is unreachable.
func NewReplicatedDB(t testing.TB) *ReplicatedDB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const how = "(run `scripts/services.sh replica`, which make test runs: a primary on 5433 and its streaming replica on 5434)"
	admin, err := Connect(ctx, ReplicaPrimaryURL())
	if err != nil {
		t.Fatalf("connect to the replica pair's primary at TEST_REPLICA_PRIMARY_URL=%s: %v %s", ReplicaPrimaryURL(), err, how)
	}
	defer admin.Close(ctx)
	replicaAdmin, err := Connect(ctx, ReplicaURL())
	if err != nil {
		t.Fatalf("connect to the replica at TEST_REPLICA_URL=%s: %v %s", ReplicaURL(), err, how)
	}
	defer replicaAdmin.Close(ctx)
	setReplicaDelay(t, ctx, replicaAdmin)

	name := "inkwell_test_" + sanitize(t.Name()) + "_" + RandomID(4)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s on the replica pair: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, ReplicaPrimaryURL(), name) })
	primaryURL, replicaURL := withDatabase(t, ReplicaPrimaryURL(), name), withDatabase(t, ReplicaURL(), name)
	if err := migrateDatabase(ctx, primaryURL); err != nil {
		t.Fatalf("migrate %s: %v", name, err)
	}
	db := &ReplicatedDB{DB: DB{Name: name, URL: primaryURL}, ReplicaURL: replicaURL}
	for _, p := range []struct {
		url  string
		pool **pgxpool.Pool
	}{{primaryURL, &db.Pool}, {replicaURL, &db.ReplicaPool}} {
		pcfg := PoolConfig(t, p.url)
		pcfg.MaxConns = PoolMaxConns
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			t.Fatalf("open pool on %s: %v", p.url, err)
		}
		t.Cleanup(pool.Close)
		*p.pool = pool
	}
	db.WaitReplayed(t)
	return db
}

// WaitReplayed returns once the replica has replayed everything the primary had written when it
// was called (polling; the replica is ReplicaDelay behind by design).
func (db *ReplicatedDB) WaitReplayed(t testing.TB) {
	t.Helper()
	if err := db.Replayed(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Replayed is WaitReplayed for any goroutine: it returns an error rather than failing the test.
func (db *ReplicatedDB) Replayed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var want int64
	if err := db.Pool.QueryRow(ctx, `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&want); err != nil {
		return fmt.Errorf("primary's WAL position: %w", err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var got int64
		err := db.ReplicaPool.QueryRow(ctx, `SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, -1)`).Scan(&got)
		if err == nil && got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the replica did not replay position %d within a minute (at %d): %w", want, got, errors.Join(err, ctx.Err()))
		case <-tick.C:
		}
	}
}

// setReplicaDelay makes the replica replay ReplicaDelay behind, whatever it was started with.
func setReplicaDelay(t testing.TB, ctx context.Context, replica *pgx.Conn) {
	t.Helper()
	var ms int64
	if err := replica.QueryRow(ctx, `SELECT setting::bigint FROM pg_settings WHERE name = 'recovery_min_apply_delay'`).Scan(&ms); err != nil {
		t.Fatalf("read the replica's recovery_min_apply_delay: %v", err)
	}
	if ms == ReplicaDelay.Milliseconds() {
		return
	}
	if _, err := replica.Exec(ctx, fmt.Sprintf("ALTER SYSTEM SET recovery_min_apply_delay = '%dms'", ReplicaDelay.Milliseconds())); err != nil {
		t.Fatalf("set the replica's recovery_min_apply_delay: %v", err)
	}
	if _, err := replica.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatalf("reload the replica's settings: %v", err)
	}
}

func withDatabase(t testing.TB, server, name string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("parse %s: %v", server, err)
	}
	u.Path = "/" + name
	return u.String()
}
