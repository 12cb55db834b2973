package service

import "context"

// Tx is one open unit of work, opened through UnitOfWork: repository methods that take it (the
// *In methods) run their statements in it, so they commit together. AfterCommit defers work
// (cache changes, wake-ups) until the commit has succeeded; it is dropped on rollback.
type Tx interface {
	AfterCommit(fn func(ctx context.Context))
}

// UnitOfWork is the one way a use case makes several writes commit together: it opens a Tx, runs
// fn with it, and commits when fn returns nil (rolls back otherwise). Repositories never hand out
// a transaction of their own; a write that must join one takes the Tx (UserRepository.UpdateIn).
type UnitOfWork interface {
	// InTx may run fn again, with a fresh Tx, when the database aborted it for losing a race
	// (serialization failure, deadlock): fn must not act outside the Tx except through
	// AfterCommit.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// InTxOnce never runs fn twice: for a unit of work whose caller retries on its own terms
	// (the idempotency path waits for a key's holder between its tries).
	InTxOnce(ctx context.Context, fn func(tx Tx) error) error
}
