package pg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
)

// ErrCommitUnknown is domain.ErrCommitUnknown: use cases tell it apart without importing this
// package.
var ErrCommitUnknown = domain.ErrCommitUnknown

// DefaultRetry retries serialization failures and deadlocks twice, after about 10 and 20 ms. A
// transaction's retries follow the queues' rule (domain.RetryPolicy), except that a MaxAttempts
// below 1 means one try: a transaction is never retried without bound.
var DefaultRetry = domain.RetryPolicy{MaxAttempts: 3, Base: 10 * time.Millisecond, Max: time.Second}

// Retryable reports errors that mean "this transaction lost a race; running it again may
// succeed": serialization failure (40001) and deadlock (40P01). Everything else, unique
// violations included, is an answer, not a race.
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// RunTx runs fn in a transaction under the retry policy. Only serialization failures and
// deadlocks are retried, whether fn or COMMIT reported them; a COMMIT that fails for any other
// reason returns ErrCommitUnknown at once.
func RunTx(ctx context.Context, pool *pgxpool.Pool, p domain.RetryPolicy, fn func(ctx context.Context, tx pgx.Tx) error) error {
	p.MaxAttempts = max(p.MaxAttempts, 1)
	var err error
	for attempt := 1; ; attempt++ {
		err = runOnce(ctx, pool, fn)
		if err == nil || !Retryable(err) || p.Exhausted(attempt) {
			return err
		}
		t := time.NewTimer(p.Backoff(attempt, rand.Float64()))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

func runOnce(ctx context.Context, pool *pgxpool.Pool, fn func(ctx context.Context, tx pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return Translate(err) // PostgreSQL unreachable: domain.ErrUnavailable
	}
	// Rolls back when fn fails or panics (a panic would otherwise leak the connection, its open
	// transaction and any lock it holds); a no-op once Commit ran.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if errors.Is(Translate(err), domain.ErrUnavailable) { // e.g. 57P01: the server is shutting down
				return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
			}
			return err // the server answered: the transaction was rolled back
		}
		// Unknown outcome, and PostgreSQL unreachable: a 503 for the client, not a 500.
		return fmt.Errorf("%w: %w: %v", ErrCommitUnknown, domain.ErrUnavailable, err)
	}
	return nil
}

// Wrapf annotates a translated error with what was being done.
func Wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, Translate(err))...)
}
