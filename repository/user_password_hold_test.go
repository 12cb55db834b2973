package repository_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// holdIfPassword is a login's unit of work: hold the row if the password is still hash, and run
// then while holding it.
func holdIfPassword(ctx context.Context, e *env, id int64, hash string, then func()) (bool, error) {
	held := false
	err := pg.NewUnitOfWork(e.pool).InTx(ctx, func(tx service.Tx) error {
		var err error
		if held, err = e.users.HoldIfPasswordIn(ctx, tx, id, hash); err == nil && held {
			then()
		}
		return err
	})
	return held, err
}

// A login's session starts only while the password it verified is still the account's: a
// password change committing while the login waits on the row wins, and the login gets nothing.
func TestUserRepository_HoldIfPasswordIn(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	ctx := t.Context()
	u := createUser(t, e.users, userOpts{PasswordHash: "hash-a"})

	ran := false
	held, err := holdIfPassword(ctx, e, u.ID, "hash-a", func() { ran = true })
	if err != nil || !held || !ran {
		t.Fatalf("unchanged password: held %v, ran %v, err %v; want held and run", held, ran, err)
	}

	// A password change holds the row; the login queues behind it and sees its commit.
	change, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = change.Rollback(context.Background()) }()
	if _, err := change.Exec(ctx, "UPDATE users SET password_hash = 'hash-b' WHERE id = $1", u.ID); err != nil {
		t.Fatal(err)
	}
	type result struct {
		held, ran bool
		err       error
	}
	done := make(chan result, 1)
	go func() {
		ran := false
		held, err := holdIfPassword(context.Background(), e, u.ID, "hash-a", func() { ran = true })
		done <- result{held, ran, err}
	}()
	testenv.WaitUntil(t, "the login waits on the user's row", func() bool {
		return e.count(t, "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()") > 0
	})
	if err := change.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.held || r.ran {
		t.Fatalf("after the change committed: held %v, ran %v, err %v; want neither", r.held, r.ran, r.err)
	}
}
