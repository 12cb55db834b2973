package repository_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/session"
	"github.com/inkwell-dev/inkwell/service"
)

func mailJob() domain.NewJob {
	return domain.NewJob{Queue: "default", Kind: "send_account_mail", Payload: []byte(`{}`)}
}

func issue(t *testing.T, e *env, u domain.User, purpose domain.AccountCodePurpose, code string) error {
	t.Helper()
	hash, ok := domain.HashAccountCode(code)
	if !ok {
		t.Fatalf("bad code %q", code)
	}
	return e.users.IssueAccountCode(t.Context(), u.ID, purpose, u.Email, hash, 15*time.Minute, time.Minute, mailJob())
}

func hashOf(code string) []byte { h, _ := domain.HashAccountCode(code); return h }

func TestAccountCodes(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("concurrent_issues_store_one_code_and_queue_one_mail", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		const n = 12
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = issue(t, e, u, domain.PurposeResetPassword, "ABCDE-23456") })
		}
		wg.Wait()
		issued := 0
		for _, err := range errs {
			var ce *domain.CodeError
			switch {
			case err == nil:
				issued++
			case !errors.As(err, &ce) || ce.Reason != domain.CodeTooSoon:
				t.Fatalf("issue: %v, want nil or too soon", err)
			}
		}
		var jobs int
		if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM jobs WHERE kind = 'send_account_mail'`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if issued != 1 || jobs < 1 {
			t.Fatalf("%d issued, want 1 (jobs %d)", issued, jobs)
		}
	})
	t.Run("concurrent_redemptions_of_one_code_succeed_once", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		if err := issue(t, e, u, domain.PurposeResetPassword, "ABCDE-23456"); err != nil {
			t.Fatal(err)
		}
		const n = 10
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = e.users.ResetPassword(context.Background(), u.ID, hashOf("ABCDE-23456"), "client-"+strconv.Itoa(i), 5, "new-hash")
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, domain.ErrAccountCodeInvalid):
				t.Fatalf("redeem: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d redemptions succeeded, want exactly 1", ok)
		}
	})
	// Tries are per client: the one that guessed wrong three times may not use the code any more,
	// but the owner, elsewhere, still can; a new code gives every client its tries again.
	t.Run("wrong_guesses_count_per_client", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		if err := issue(t, e, u, domain.PurposeResetPassword, "ABCDE-23456"); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := e.users.ResetPassword(t.Context(), u.ID, hashOf("ZZZZZ-ZZZZZ"), "attacker", 3, "h"); !errors.Is(err, domain.ErrAccountCodeInvalid) {
				t.Fatalf("wrong guess: %v", err)
			}
		}
		if _, err := e.users.ResetPassword(t.Context(), u.ID, hashOf("ABCDE-23456"), "attacker", 3, "h"); !errors.Is(err, domain.ErrAccountCodeInvalid) {
			t.Fatalf("the right code from a client whose tries ran out: %v", err)
		}
		if _, err := db.Pool.Exec(t.Context(), `UPDATE account_codes SET sent_at = sent_at - interval '2 minutes' WHERE user_id = $1`, u.ID); err != nil {
			t.Fatal(err)
		}
		if err := issue(t, e, u, domain.PurposeResetPassword, "BCDEF-34567"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.ResetPassword(t.Context(), u.ID, hashOf("ZZZZZ-ZZZZZ"), "attacker", 3, "h"); !errors.Is(err, domain.ErrAccountCodeInvalid) {
			t.Fatalf("wrong guess at the new code: %v", err)
		}
		if _, err := e.users.ResetPassword(t.Context(), u.ID, hashOf("BCDEF-34567"), "owner", 3, "h"); err != nil {
			t.Fatalf("the owner's right code after another client's wrong guesses: %v", err)
		}
		var attempts int
		if err := db.Pool.QueryRow(t.Context(), `SELECT attempts FROM account_codes WHERE user_id = $1`, u.ID).Scan(&attempts); err != nil || attempts != 1 {
			t.Fatalf("the code's total of wrong guesses is %d (%v), want 1", attempts, err)
		}
	})
	t.Run("a_code_proves_nothing_about_an_address_changed_since", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		if err := issue(t, e, u, domain.PurposeVerifyEmail, "ABCDE-23456"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.Update(t.Context(), u.ID, func(u *domain.User) error { u.Email = "elsewhere-" + u.Email; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.VerifyEmail(t.Context(), u.ID, hashOf("ABCDE-23456"), "owner", 5); !errors.Is(err, domain.ErrAccountCodeInvalid) {
			t.Fatalf("verify after an email change: %v", err)
		}
		if got, _ := e.users.GetByIDUncached(t.Context(), u.ID); got.EmailVerified {
			t.Fatal("the new address is verified by a code sent to the old one")
		}
	})
	t.Run("takeover_revokes_every_session_and_key_once", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		sessions, keys := session.NewSessionRepository(db.Pool, dao.New()), session.NewAPIKeyRepository(db.Pool, dao.New())
		for _, sid := range []string{"s-" + u.Username + "-1", "s-" + u.Username + "-2"} {
			if _, err := sessions.Create(t.Context(), sid, u.ID, "test", []byte(sid), time.Now().Add(time.Hour), sessionCap); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := keys.Create(t.Context(), u.ID, "k", "iw_k", []byte("key-"+u.Username), nil, service.MaxAPIKeys); err != nil {
			t.Fatal(err)
		}
		revoked, took, err := e.users.TakeOverUnverified(t.Context(), u.ID, "random-hash")
		if err != nil || !took || len(revoked) != 2 {
			t.Fatalf("takeover: %v took %v revoked %v", err, took, revoked)
		}
		if left, _ := keys.List(t.Context(), u.ID); len(left) != 0 {
			t.Fatalf("%d API keys survived the takeover", len(left))
		}
		got, _ := e.users.GetByIDUncached(t.Context(), u.ID)
		if !got.EmailVerified || got.PasswordHash != "random-hash" {
			t.Fatalf("after the takeover: verified %v hash %q", got.EmailVerified, got.PasswordHash)
		}
		if _, took, err := e.users.TakeOverUnverified(t.Context(), u.ID, "other-hash"); err != nil || took {
			t.Fatalf("second takeover of a verified account: took %v, %v", took, err)
		}
	})
}
