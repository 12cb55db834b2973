package repository

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// ErrCommitUnknown means COMMIT failed in a way that leaves its outcome unknown (the connection
// broke while it ran): the transaction may or may not have been applied, so it is not retried
// blindly. Callers that can, check; others report it.
var ErrCommitUnknown = errors.New("transaction outcome unknown: the commit did not answer")

// RetryPolicy bounds transaction retries.
type RetryPolicy struct {
	Attempts int           // total tries, at least 1
	Base     time.Duration // first backoff; doubled each retry, with jitter
}

// defaultRetry retries serialization failures and deadlocks twice.
var defaultRetry = RetryPolicy{Attempts: 3, Base: 10 * time.Millisecond}

// retryable reports errors that mean "this transaction lost a race; running it again may
// succeed": serialization failure (40001) and deadlock (40P01). Everything else, unique
// violations included, is an answer, not a race.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// txKey carries an ambient transaction in a context (see WithTx).
type txKey struct{}

// inTx runs fn in one transaction, committing when it returns nil and rolling back otherwise. A
// transaction that fails with a serialization failure or deadlock is retried (bounded, with
// jittered backoff). When ctx already carries a transaction (an idempotent request), fn runs in a
// savepoint of it and the outer owner commits.
func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(q *dao.Queries) error) error {
	if outer, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return pgx.BeginFunc(ctx, outer, func(tx pgx.Tx) error { return fn(dao.New(tx)) })
	}
	return RunTx(ctx, pool, defaultRetry, func(ctx context.Context, tx pgx.Tx) error { return fn(dao.New(tx)) })
}

// RunTx runs fn in a transaction under the retry policy. Only serialization failures and
// deadlocks are retried, whether fn or COMMIT reported them; a COMMIT that fails for any other
// reason returns ErrCommitUnknown at once.
func RunTx(ctx context.Context, pool *pgxpool.Pool, p RetryPolicy, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if p.Attempts < 1 {
		p.Attempts = 1
	}
	delay := p.Base
	var err error
	for attempt := 1; ; attempt++ {
		err = runOnce(ctx, pool, fn)
		if err == nil || !retryable(err) || attempt >= p.Attempts {
			return err
		}
		wait := delay/2 + time.Duration(rand.Int64N(int64(delay/2)+1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}

func runOnce(ctx context.Context, pool *pgxpool.Pool, fn func(ctx context.Context, tx pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return translate(err) // PostgreSQL unreachable: domain.ErrUnavailable
	}
	// Rolls back when fn fails or panics (a panicking handler under an Idempotency-Key would
	// otherwise leak the connection, its open transaction and the key's advisory lock); a no-op
	// once Commit ran.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if errors.Is(translate(err), domain.ErrUnavailable) { // e.g. 57P01: the server is shutting down
				return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
			}
			return err // the server answered: the transaction was rolled back
		}
		// Unknown outcome, and PostgreSQL unreachable: a 503 for the client, not a 500.
		return fmt.Errorf("%w: %w: %v", ErrCommitUnknown, domain.ErrUnavailable, err)
	}
	return nil
}

// WithTx returns a context whose repository writes (single statements and inTx alike) run inside
// tx, so a caller can make several repository calls one atomic unit.
func WithTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// txHooks holds what repository calls inside an ambient transaction want done once it ends: cache
// changes that must not run before the commit (a reader could refill a cache from the
// not-yet-committed state in between) nor at all after a rollback.
type txHooks struct {
	mu       sync.Mutex
	onCommit []func(ctx context.Context)
	always   []func()
}

type txHooksKey struct{}

// withTxHooks returns a context whose afterTx calls are collected in h.
func withTxHooks(ctx context.Context, h *txHooks) context.Context {
	return context.WithValue(ctx, txHooksKey{}, h)
}

// afterTx runs onCommit (may be nil) once the caller's writes are committed, and always (may be
// nil) after that or after a rollback. Without an ambient transaction collecting hooks, the
// writes have already committed when a repository calls this, so both run now.
func afterTx(ctx context.Context, onCommit func(ctx context.Context), always func()) {
	if h, ok := ctx.Value(txHooksKey{}).(*txHooks); ok && h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if onCommit != nil {
			h.onCommit = append(h.onCommit, onCommit)
		}
		if always != nil {
			h.always = append(h.always, always)
		}
		return
	}
	if onCommit != nil {
		onCommit(ctx)
	}
	if always != nil {
		always()
	}
}

// finish runs the hooks once the transaction has ended; committed says how.
func (h *txHooks) finish(ctx context.Context, committed bool) {
	h.mu.Lock()
	onCommit, always := h.onCommit, h.always
	h.onCommit, h.always = nil, nil
	h.mu.Unlock()
	ctx = withoutTx(context.WithoutCancel(ctx))
	if committed {
		for _, fn := range onCommit {
			fn(ctx)
		}
	}
	for _, fn := range always {
		fn()
	}
}

// withoutTx drops an ambient transaction: cache loads and background work must never run on a
// request's transaction (another goroutine may still use it, and shared loads must not see its
// uncommitted rows).
func withoutTx(ctx context.Context) context.Context {
	if ctx.Value(txKey{}) == nil && ctx.Value(txHooksKey{}) == nil {
		return ctx
	}
	return context.WithValue(context.WithValue(ctx, txKey{}, nil), txHooksKey{}, nil)
}

// ctxDB routes single statements to the context's transaction when there is one, else to the pool.
type ctxDB struct{ pool *pgxpool.Pool }

func (d ctxDB) db(ctx context.Context) dao.DBTX {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return d.pool
}

func (d ctxDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return d.db(ctx).Exec(ctx, sql, args...)
}

func (d ctxDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return d.db(ctx).Query(ctx, sql, args...)
}

func (d ctxDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return d.db(ctx).QueryRow(ctx, sql, args...)
}

// wrapf annotates a translated error with what was being done.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, translate(err))...)
}
