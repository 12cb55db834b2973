package repository_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// TestUnitOfWorkHooks: what a unit of work registers with AfterCommit runs once COMMIT has
// succeeded, and never after a rollback or a COMMIT whose outcome is unknown; IfCommitUnknown runs
// only in that last case; Finally runs either way; a retried attempt's hooks go with the attempt.
func TestUnitOfWorkHooks(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()
	errRollback := errors.New("roll back")

	type counts struct{ committed, unknown, finally atomic.Int64 }
	register := func(tx *pg.Tx, c *counts, committedBefore *bool) {
		tx.AfterCommit(func(ctx context.Context) {
			if ctx.Err() != nil {
				t.Error("a commit hook got a cancelled context")
			}
			c.committed.Add(1)
		})
		tx.IfCommitUnknown(func(ctx context.Context) {
			if ctx.Err() != nil {
				t.Error("an unknown-outcome hook got a cancelled context")
			}
			if c.finally.Load() != 0 {
				t.Error("an unknown-outcome hook ran after the Finally hooks")
			}
			c.unknown.Add(1)
		})
		tx.Finally(func() { c.finally.Add(1) })
		if committedBefore != nil {
			*committedBefore = c.committed.Load() > 0
		}
	}

	t.Run("run after commit, not before", func(t *testing.T) {
		t.Parallel()
		var c counts
		var early bool
		err := pg.NewUnitOfWork(db.Pool).InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			register(tx, &c, &early)
			_, err := tx.Exec(ctx, `SELECT 1`)
			return err
		})
		if err != nil || early || c.committed.Load() != 1 || c.finally.Load() != 1 || c.unknown.Load() != 0 {
			t.Fatalf("InTx = %v; ran before commit %v; commit hooks %d, unknown-outcome hooks %d, finally %d; want 1, 0 and 1 after the commit",
				err, early, c.committed.Load(), c.unknown.Load(), c.finally.Load())
		}
	})

	t.Run("dropped on rollback", func(t *testing.T) {
		t.Parallel()
		var c counts
		err := pg.NewUnitOfWork(db.Pool).InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			register(tx, &c, nil)
			return errRollback
		})
		if !errors.Is(err, errRollback) || c.committed.Load() != 0 || c.finally.Load() != 1 || c.unknown.Load() != 0 {
			t.Fatalf("InTx = %v; commit hooks %d, unknown-outcome hooks %d, finally %d; want 0, 0 and 1", err, c.committed.Load(), c.unknown.Load(), c.finally.Load())
		}
	})

	t.Run("dropped with an attempt that lost a race and was retried", func(t *testing.T) {
		t.Parallel()
		var c counts
		attempts := 0
		err := pg.NewUnitOfWork(db.Pool).InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			attempts++
			register(tx, &c, nil)
			if attempts == 1 {
				return pgErr("40001")
			}
			return nil
		})
		if err != nil || attempts != 2 || c.committed.Load() != 1 || c.finally.Load() != 2 || c.unknown.Load() != 0 {
			t.Fatalf("InTx = %v after %d attempts; commit hooks %d, finally %d; want 1 (the committed attempt's) and 2",
				err, attempts, c.committed.Load(), c.finally.Load())
		}
	})

	t.Run("dropped when the outcome of COMMIT is unknown", func(t *testing.T) {
		t.Parallel()
		pool, proxy := poolThroughCutProxy(t, db.URL)
		var c counts
		err := pg.NewUnitOfWork(pool).InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			register(tx, &c, nil)
			proxy.Cut() // COMMIT goes into a dead socket
			return nil
		})
		if !errors.Is(err, pg.ErrCommitUnknown) || c.committed.Load() != 0 || c.finally.Load() != 1 || c.unknown.Load() != 1 {
			t.Fatalf("InTx = %v; commit hooks %d, unknown-outcome hooks %d, finally %d; want ErrCommitUnknown, 0, 1 and 1",
				err, c.committed.Load(), c.unknown.Load(), c.finally.Load())
		}
	})
}

// TestCacheChangesWaitForCommit: a repository write made in a caller's unit of work changes the
// caches only once the unit of work has committed — before it, a reader could refill a cache from
// the state without the write — and not at all when it rolls back.
func TestCacheChangesWaitForCommit(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	uow := pg.NewUnitOfWork(e.pool)
	ctx := t.Context()
	errRollback := errors.New("roll back")

	t.Run("published article is warmed after the commit", func(t *testing.T) {
		author := createUser(t, e.users, userOpts{})
		slug := "uow-" + testenv.RandomID(6)
		err := uow.InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			if _, err := e.articles.CreateIn(ctx, tx, domain.Article{Slug: slug, AuthorID: author.ID, Title: "T", Description: "D", Body: "B", Status: domain.StatusPublished}); err != nil {
				return err
			}
			if _, ok := e.cachedArticle(t, slug); ok {
				t.Error("the article is in the cache before its unit of work committed")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.cachedArticle(t, slug); !ok {
			t.Fatal("the published article was not warmed after the commit")
		}
	})

	t.Run("rolled back article leaves the cache alone", func(t *testing.T) {
		author := createUser(t, e.users, userOpts{})
		slug := "uow-" + testenv.RandomID(6)
		err := uow.InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			if _, err := e.articles.CreateIn(ctx, tx, domain.Article{Slug: slug, AuthorID: author.ID, Title: "T", Description: "D", Body: "B", Status: domain.StatusPublished}); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		if c, ok := e.cachedArticle(t, slug); ok {
			t.Fatalf("a rolled back article was cached: %+v", c)
		}
	})

	t.Run("user cache entries drop after the commit", func(t *testing.T) {
		name := uniqueName("late")
		// A lookup before the insert leaves a null marker behind.
		if _, err := e.users.GetByUsername(ctx, name); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("GetByUsername = %v, want ErrNotFound", err)
		}
		err := uow.InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			_, err := e.users.CreateIn(ctx, tx, domain.User{Email: name + "@example.com", Username: name, PasswordHash: "x"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.GetByUsername(ctx, name); err != nil {
			t.Fatalf("after the commit GetByUsername = %v: the null marker survived", err)
		}
	})
}
