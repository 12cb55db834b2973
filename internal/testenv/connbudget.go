package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Every PostgreSQL connection a test opens holds one slot of a budget shared by all test
// processes on the machine that use the same server (go test -p N runs packages as separate
// processes; helpers and CI may test side by side). PostgreSQL refuses connections past
// max_connections (100 by default) with "too many clients", and a suite's peak is hard to
// predict: a parallel test waiting for its parallel subtests keeps its app instance, and its
// pools, alive while the subtests run. Under the budget a connection over the limit waits for
// one to close instead of failing the test.
//
// A slot is an exclusive flock on one of TEST_PG_CONNECTIONS (default connBudgetDefault) files
// in a directory named after the server. The kernel releases the lock when the file is closed or
// the process dies, so a crashed test process never leaks its slots. The budget leaves room
// below max_connections for what does not take slots: the binary that cmd/inkwell's tests run,
// psql, monitoring.
//
// Waiting is only safe while the connections that hold slots are closed eventually: test pools
// close idle connections after TestPoolIdle (see PoolIdleSettings), so a test that waits gets
// the slot of another's idle connection.
const connBudgetDefault = 80

// TestPoolIdle is how long a test pool keeps an idle connection (pgxpool's default is 30
// minutes, which would keep slots that other tests wait for).
const TestPoolIdle = time.Second

type connBudget struct {
	dir   string
	slots int
}

var budgetState struct {
	once   sync.Once
	budget *connBudget
	err    error
}

// budget returns the machine-wide budget for the server TEST_DATABASE_URL names. Connections
// through a fault-injection proxy end at that server too, so they count in its budget.
func budget() (*connBudget, error) {
	budgetState.once.Do(func() {
		server, err := pgconn.ParseConfig(DatabaseURL())
		if err != nil {
			budgetState.err = fmt.Errorf("parse TEST_DATABASE_URL: %w", err)
			return
		}
		slots := connBudgetDefault
		if v := os.Getenv("TEST_PG_CONNECTIONS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				budgetState.err = fmt.Errorf("TEST_PG_CONNECTIONS=%q: want a positive number of connections", v)
				return
			}
			slots = n
		}
		sum := sha256.Sum256([]byte(server.Host + ":" + strconv.Itoa(int(server.Port))))
		dir := filepath.Join(os.TempDir(), "inkwell-test-pg-"+hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			budgetState.err = fmt.Errorf("connection budget: %w", err)
			return
		}
		budgetState.budget = &connBudget{dir: dir, slots: slots}
	})
	return budgetState.budget, budgetState.err
}

// acquire takes a free slot, waiting until one is free or ctx ends. The returned file holds the
// lock; closing it frees the slot.
func (b *connBudget) acquire(ctx context.Context) (*os.File, error) {
	wait := time.Millisecond
	for {
		start := rand.IntN(b.slots) // spread the processes over the files
		for i := range b.slots {
			path := filepath.Join(b.dir, "slot-"+strconv.Itoa((start+i)%b.slots))
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
			if err != nil {
				return nil, fmt.Errorf("connection budget: %w", err)
			}
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				return f, nil
			}
			_ = f.Close()
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("connection budget: lock %s: %w", path, err)
			}
		}
		// Every slot is taken: another connection has to close first. There is no way to be told
		// when a lock on one of many files is released, so look again after a short while.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for one of the %d PostgreSQL connections tests may hold at once (TEST_PG_CONNECTIONS): %w", b.slots, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// budgetedConn frees its slot when it is closed.
type budgetedConn struct {
	net.Conn
	once sync.Once
	slot *os.File
}

func (c *budgetedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { _ = c.slot.Close() })
	return err
}

// LimitConnections makes every connection of cfg take a slot of the machine-wide test budget
// before it dials, and free it when it closes.
func LimitConnections(cfg *pgconn.Config) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		b, err := budget()
		if err != nil {
			return nil, err
		}
		slot, err := b.acquire(ctx)
		if err != nil {
			return nil, err
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			_ = slot.Close()
			return nil, err
		}
		return &budgetedConn{Conn: conn, slot: slot}, nil
	}
}

// LimitPool puts a test pool's connections under the budget and closes its idle connections
// after TestPoolIdle at most, so they do not keep slots other tests wait for. It is also the
// app's ioc.Config.ConfigurePgPool in tests (apptest).
func LimitPool(pcfg *pgxpool.Config) {
	LimitConnections(&pcfg.ConnConfig.Config)
	pcfg.MaxConnIdleTime = min(pcfg.MaxConnIdleTime, TestPoolIdle)
	pcfg.HealthCheckPeriod = min(pcfg.HealthCheckPeriod, TestPoolIdle)
}

// PoolConfig parses a pool URL for a test's own pool, under the budget (LimitPool).
func PoolConfig(t testing.TB, databaseURL string) *pgxpool.Config {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("parse %s: %v", databaseURL, err)
	}
	LimitPool(pcfg)
	return pcfg
}

// Connect opens one connection under the budget.
func Connect(ctx context.Context, databaseURL string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	LimitConnections(&cfg.Config)
	return pgx.ConnectConfig(ctx, cfg)
}
