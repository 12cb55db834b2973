package identities_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/identities"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// These tests run against the real PostgreSQL (TEST_DATABASE_URL), a database per top-level test.

type env struct {
	pool  *pgxpool.Pool
	q     dao.Querier
	store *identities.Store
}

func setup(t *testing.T) env {
	t.Helper()
	db := testenv.NewDB(t)
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 8
	testenv.LimitPool(cfg)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	q := dao.New()
	return env{pool: pool, q: q, store: identities.NewStore(pool, q)}
}

func (e env) user(t *testing.T, hash string) int64 {
	t.Helper()
	name := "u" + testenv.RandomID(6)
	row, err := e.q.UserInsert(t.Context(), e.pool, dao.UserInsertParams{Email: name + "@example.com", EmailCanonical: name + "@example.com",
		Username: name, PasswordHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	return row.ID
}

func hash(s string) []byte {
	b := make([]byte, 32)
	copy(b, s)
	return b
}

func TestStates_SingleUseBoundToTheCookieUntilExpiry(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	now := time.Now()
	st := domain.SignInState{StateHash: hash("state"), CookieHash: hash("cookie"), Provider: "corp", Redirect: "https://app.example/cb",
		CreatedAt: now, ExpiresAt: now.Add(domain.SignInStateTTL)}
	if err := e.store.PutState(ctx, st); err != nil {
		t.Fatal(err)
	}
	// Another browser's cookie finds nothing and leaves the state to its own.
	if _, err := e.store.TakeState(ctx, st.StateHash, hash("other"), now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("wrong cookie: %v", err)
	}
	// Concurrent callbacks: exactly one takes it.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			got, err := e.store.TakeState(ctx, st.StateHash, st.CookieHash, now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && got.Redirect == st.Redirect && got.Provider == "corp" && got.LinkUserID == 0:
				won++
			case !errors.Is(err, domain.ErrNotFound):
				t.Errorf("take: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d callbacks took the state, want 1", won)
	}
	// Expired: not found, though the row is still there until retention prunes it.
	linker := e.user(t, "h")
	late := st
	late.StateHash, late.LinkUserID = hash("late"), linker
	if err := e.store.PutState(ctx, late); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.TakeState(ctx, late.StateHash, late.CookieHash, now.Add(domain.SignInStateTTL+time.Second)); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("expired state: %v", err)
	}
	if got, err := e.store.TakeState(ctx, late.StateHash, late.CookieHash, now); err != nil || got.LinkUserID != linker {
		t.Fatalf("link state %+v, %v", got, err)
	}
}

func TestCodes_SingleUseUntilExpiry(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	now := time.Now()
	uid := e.user(t, "h")
	if err := e.store.PutCode(ctx, hash("code"), uid, now, now.Add(domain.SignInCodeTTL)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.TakeCode(ctx, hash("code"), now.Add(domain.SignInCodeTTL+time.Second)); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a code past 60 s: %v", err)
	}
	if got, err := e.store.TakeCode(ctx, hash("code"), now); err != nil || got != uid {
		t.Fatalf("take %d, %v", got, err)
	}
	if _, err := e.store.TakeCode(ctx, hash("code"), now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a replayed code: %v", err)
	}
}

func TestIdentities_LinkAndUnlinkRules(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	made := e.user(t, "placeholder")
	err := pg.InTx(ctx, e.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := e.store.MarkProviderAccountIn(ctx, tx, made, "placeholder", true, time.Now()); err != nil {
			return err
		}
		_, err := e.store.LinkIn(ctx, tx, domain.UserIdentity{UserID: made, Provider: "corp", Subject: "s1", Email: "a@corp.example"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var verified bool
	if err := e.pool.QueryRow(ctx, `SELECT email_verified_at IS NOT NULL FROM users WHERE id = $1`, made).Scan(&verified); err != nil || !verified {
		t.Fatalf("the provider-verified email is not verified (%v)", err)
	}
	ident, err := e.store.FindBySubject(ctx, "corp", "s1")
	if err != nil || ident.UserID != made {
		t.Fatalf("find %+v, %v", ident, err)
	}
	other := e.user(t, "h")
	if _, err := e.store.Link(ctx, domain.UserIdentity{UserID: other, Provider: "corp", Subject: "s1"}); !errors.Is(err, domain.ErrIdentityInUse) {
		t.Fatalf("another account's identity: %v", err)
	}
	// The only way in of an account whose password nobody set stays; another user cannot touch it.
	if err := e.store.Unlink(ctx, made, ident.ID); !errors.Is(err, domain.ErrLastSignInWay) {
		t.Fatalf("last way: %v", err)
	}
	if err := e.store.Unlink(ctx, other, ident.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another user's identity: %v", err)
	}
	// With a second identity, one may go.
	second, err := e.store.Link(ctx, domain.UserIdentity{UserID: made, Provider: "github", Subject: "42"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Unlink(ctx, made, second.ID); err != nil {
		t.Fatal(err)
	}
	// Once the owner set a password, the last identity may go too.
	if _, err := e.pool.Exec(ctx, `UPDATE users SET password_hash = 'set-by-owner' WHERE id = $1`, made); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Unlink(ctx, made, ident.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := e.store.List(ctx, made); err != nil || len(list) != 0 {
		t.Fatalf("list %v, %v", list, err)
	}
}
