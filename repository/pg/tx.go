package pg

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// Tx is one open unit of work. Statements run on it (it is a dao.DBTX) commit or roll back
// together, and what must wait for the outcome — cache invalidation, warm-ups, counter mirroring,
// event wake-ups — is registered with AfterCommit and runs only once COMMIT has succeeded. On a
// rollback, and when the outcome of COMMIT is unknown, the hooks are dropped: none of the writes
// may be assumed. What must know that a write may or may not have happened registers with
// IfCommitUnknown.
//
// A Tx belongs to the goroutine that runs the unit of work's function; it is never carried in a
// context, so a cache load or background job can never pick it up by accident.
type Tx struct {
	tx pgx.Tx

	mu        sync.Mutex
	onCommit  []func(ctx context.Context)
	onUnknown []func(ctx context.Context)
	finally   []func()
}

// outcome is how a unit of work ended.
type outcome int

const (
	rolledBack outcome = iota
	committed
	commitUnknown // COMMIT was sent and did not answer: the writes may or may not have happened
)

var (
	_ service.Tx         = (*Tx)(nil)
	_ service.UnitOfWork = (*UnitOfWork)(nil)
)

// AfterCommit registers fn to run once the unit of work has committed. fn gets a context that
// outlives the request's cancellation, since the write it follows has happened either way.
func (t *Tx) AfterCommit(fn func(ctx context.Context)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onCommit = append(t.onCommit, fn)
}

// IfCommitUnknown registers fn to run when the outcome of COMMIT is unknown (the connection broke
// while it ran): the writes may or may not have been applied. It runs instead of the AfterCommit
// hooks, before the Finally ones, with a context that outlives the request's cancellation.
func (t *Tx) IfCommitUnknown(fn func(ctx context.Context)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onUnknown = append(t.onUnknown, fn)
}

// Finally registers fn to run when the unit of work has ended, however it ended (after the
// commit hooks on success). It releases what a write reserved before it ran.
func (t *Tx) Finally(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finally = append(t.finally, fn)
}

// Exec, Query and QueryRow make a Tx the connection a dao query runs on.
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.tx.Exec(ctx, sql, args...)
}

func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.tx.Query(ctx, sql, args...)
}

func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.tx.QueryRow(ctx, sql, args...)
}

// Savepoint runs fn in a savepoint of t: when one of fn's statements fails, only fn's writes are
// rolled back and t stays usable (a unit of work that stores a rejection, or tries another slug).
// Errors of the SAVEPOINT and RELEASE statements themselves are translated like any statement's
// (a broken connection is domain.ErrUnavailable).
func (t *Tx) Savepoint(ctx context.Context, fn func(db pgx.Tx) error) error {
	return Translate(pgx.BeginFunc(ctx, t.tx, fn))
}

// DropHooks forgets the commit hooks registered so far: the writes they follow were rolled back
// to a savepoint. Finally hooks stay: what they release was still reserved.
func (t *Tx) DropHooks() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onCommit, t.onUnknown = nil, nil
}

// end runs the hooks once the transaction is over, as its outcome says.
func (t *Tx) end(ctx context.Context, how outcome) {
	t.mu.Lock()
	onCommit, onUnknown, finally := t.onCommit, t.onUnknown, t.finally
	t.onCommit, t.onUnknown, t.finally = nil, nil, nil
	t.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	switch how {
	case committed:
		for _, fn := range onCommit {
			fn(ctx)
		}
	case commitUnknown:
		for _, fn := range onUnknown {
			fn(ctx)
		}
	}
	for _, fn := range finally {
		fn()
	}
}

// UnitOfWork opens units of work on the main pool: the service.UnitOfWork port.
type UnitOfWork struct {
	pool  *pgxpool.Pool
	retry domain.RetryPolicy
}

// NewUnitOfWork returns the unit of work of the pool, retrying serialization failures and
// deadlocks as RunTx does.
func NewUnitOfWork(pool *pgxpool.Pool) *UnitOfWork {
	return &UnitOfWork{pool: pool, retry: DefaultRetry}
}

// InTx runs fn in one transaction, committing when it returns nil and rolling back otherwise. A
// run that lost a race (40001, 40P01) is retried with a fresh Tx: the hooks a failed attempt
// registered are dropped with it. The hooks of the attempt that committed run before InTx returns.
func (u *UnitOfWork) InTx(ctx context.Context, fn func(tx service.Tx) error) error {
	return InTx(ctx, u.pool, u.retry, func(tx *Tx) error { return fn(tx) })
}

// InTxOnce is InTx without retries, for a unit of work that must not run twice (it waits on a
// lock whose holder's outcome it reports, or it is retried by its caller).
func (u *UnitOfWork) InTxOnce(ctx context.Context, fn func(tx service.Tx) error) error {
	return InTx(ctx, u.pool, domain.RetryPolicy{MaxAttempts: 1}, func(tx *Tx) error { return fn(tx) })
}

// InTx runs fn in one transaction on pool under the retry policy p, with hooks as UnitOfWork.InTx
// describes; the rooms' repositories open their own units of work with it.
func InTx(ctx context.Context, pool *pgxpool.Pool, p domain.RetryPolicy, fn func(tx *Tx) error) error {
	var last *Tx
	err := RunTx(ctx, pool, p, func(ctx context.Context, ptx pgx.Tx) error {
		if last != nil {
			last.end(ctx, rolledBack) // the previous attempt rolled back
		}
		last = &Tx{tx: ptx}
		return fn(last)
	})
	if last != nil {
		how := rolledBack
		switch {
		case err == nil:
			how = committed
		case errors.Is(err, ErrCommitUnknown):
			how = commitUnknown
		}
		last.end(ctx, how)
	}
	return err
}

// TxOf returns the repository's Tx behind a use case's handle. Only this package makes them, so
// another type is a wiring bug, not an input.
func TxOf(tx service.Tx) *Tx {
	t, ok := tx.(*Tx)
	if !ok {
		panic("repository: the unit of work was not opened by pg.UnitOfWork")
	}
	return t
}

// Aborted reports whether a statement of the unit of work failed outside a savepoint, leaving
// the transaction able only to roll back.
func (t *Tx) Aborted() bool { return t.tx.Conn().PgConn().TxStatus() == 'E' }
