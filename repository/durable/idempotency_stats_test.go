package durable_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// newIdempotency is the idempotency path as the app wires it: service.IdempotencyRunner over the
// store, in units of work on pool.
func newIdempotency(pool *pgxpool.Pool, wait service.IdempotencyWait) *service.IdempotencyRunner {
	return service.NewIdempotencyRunner(pg.NewUnitOfWork(pool), durable.NewIdempotencyStore(pool, dao.New()), wait)
}

// TestIdempotencyStoreCountsHowRequestsEnd: each keyed request is counted once, by how it ended:
// executed, replayed (by Lookup or by Do), mismatch, in flight (409) and commit unknown (503).
func TestIdempotencyStoreCountsHowRequestsEnd(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()
	created := domain.StoredResponse{Status: 201, Body: []byte(`{"ok":true}`)}
	answer := func(context.Context, service.Tx) domain.StoredResponse { return created }
	key := func(k, hash string) service.IdempotencyKey {
		return service.IdempotencyKey{Scope: "user:" + testenv.RandomID(6), Key: k, RequestHash: hash}
	}
	type counts struct{ executed, replayed, mismatched, inFlight, commitUnknown int64 }
	countsOf := func(s *service.IdempotencyRunner) counts {
		return counts{s.Stats.Executed.Load(), s.Stats.Replayed.Load(), s.Stats.Mismatched.Load(), s.Stats.InFlight.Load(), s.Stats.CommitUnknown.Load()}
	}

	t.Run("executed, replayed and mismatched", func(t *testing.T) {
		t.Parallel()
		s := newIdempotency(db.Pool, 0)
		k := key("k", "h1")
		if _, _, err := s.Do(ctx, k, answer); err != nil {
			t.Fatal(err)
		}
		if _, found, err := s.Lookup(ctx, k); err != nil || !found {
			t.Fatalf("Lookup: found %v, %v", found, err)
		}
		if _, replayed, err := s.Do(ctx, k, answer); err != nil || !replayed {
			t.Fatalf("Do again: replayed %v, %v", replayed, err)
		}
		other := k
		other.RequestHash = "h2"
		if _, _, err := s.Lookup(ctx, other); !errors.Is(err, domain.ErrIdempotencyMismatch) {
			t.Fatalf("Lookup of another request: %v", err)
		}
		if _, _, err := s.Do(ctx, other, answer); !errors.Is(err, domain.ErrIdempotencyMismatch) {
			t.Fatalf("Do of another request: %v", err)
		}
		if got, want := countsOf(s), (counts{executed: 1, replayed: 2, mismatched: 2}); got != want {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
	})

	t.Run("in flight", func(t *testing.T) {
		t.Parallel()
		s := newIdempotency(db.Pool, service.IdempotencyWait(20*time.Millisecond))
		k := key("busy", "h")
		entered, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, _, err := s.Do(ctx, k, func(context.Context, service.Tx) domain.StoredResponse {
				close(entered)
				<-release
				return created
			})
			first <- err
		}()
		<-entered
		if _, _, err := s.Do(ctx, k, answer); !errors.Is(err, domain.ErrIdempotencyInFlight) {
			t.Fatalf("Do while the first runs: %v, want in flight", err)
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if got, want := countsOf(s), (counts{executed: 1, inFlight: 1}); got != want {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
	})

	t.Run("commit unknown", func(t *testing.T) {
		t.Parallel()
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		proxy := testenv.NewCutProxy(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
		host, port, _ := net.SplitHostPort(proxy.Addr())
		p, _ := strconv.Atoi(port)
		cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.MaxConns = host, uint16(p), 1
		cutAtCommit := &cutBeforeCommit{proxy: proxy}
		cfg.ConnConfig.Tracer = cutAtCommit
		testenv.LimitPool(cfg)
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		s := newIdempotency(pool, 0)
		_, _, err = s.Do(ctx, key("k", "h"), func(context.Context, service.Tx) domain.StoredResponse {
			cutAtCommit.armed.Store(true) // the answer is stored next, then COMMIT goes into a dead socket
			return created
		})
		if !errors.Is(err, pg.ErrCommitUnknown) {
			t.Fatalf("Do: %v, want ErrCommitUnknown", err)
		}
		if got, want := countsOf(s), (counts{commitUnknown: 1}); got != want {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
	})
}

// cutBeforeCommit cuts the proxy's connections when an armed pool sends COMMIT.
type cutBeforeCommit struct {
	proxy *testenv.CutProxy
	armed atomic.Bool
}

func (c *cutBeforeCommit) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.EqualFold(strings.TrimSpace(data.SQL), "commit") && c.armed.CompareAndSwap(true, false) {
		c.proxy.Cut()
	}
	return ctx
}

func (c *cutBeforeCommit) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
