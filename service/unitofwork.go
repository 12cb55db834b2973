package service

import "context"

// Tx is one open unit of work, opened by the repository layer: repository methods that take it run their
// statements in it, so they commit together. AfterCommit defers work (cache changes, wake-ups)
// until the commit has succeeded; it is dropped on rollback.
type Tx interface {
	AfterCommit(fn func(ctx context.Context))
}
