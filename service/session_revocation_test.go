package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// stepThrough ends every wait of the clock until call returns, and reports the waits it ended
// and what call returned. Each wait reaches the test while call is blocked in it, so the order is
// fixed: no wait can be skipped and call cannot return before its last wait has ended.
func stepThrough(t *testing.T, clk *testClock, call func() error) ([]clockWait, error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	var waits []clockWait
	for {
		select {
		case w := <-clk.waits:
			waits = append(waits, w)
			if len(waits) > 100 {
				t.Fatal("more than 100 waits: the revocation does not stop retrying")
			}
			clk.end(w)
		case err := <-done:
			return waits, err
		}
	}
}

// TestSessionService_RevocationRedisMissed: when the revocation's Redis mark fails, the answer
// waits until every lease granted before the commit has ended (the commit, on the injected
// clock, plus the lease), retrying the mark meanwhile; a retry that works answers at once.
func TestSessionService_RevocationRedisMissed(t *testing.T) {
	t.Parallel()
	logout := func(s *service.SessionService) func() error {
		return func() error { return s.Logout(context.Background(), "ACCESS", false) }
	}
	reuse := func(s *service.SessionService) func() error {
		return func() error {
			_, _, err := s.Refresh(context.Background(), "R0")
			if !errors.Is(err, domain.ErrRefreshInvalid) {
				return err
			}
			return nil
		}
	}
	revokeIn := map[string]struct {
		stubs func(d sessionDeps)
		call  func(s *service.SessionService) func() error
	}{
		"logout": {
			stubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
				d.repo.EXPECT().Revoke(gomock.Any(), "sid-1").Return(nil)
			},
			call: logout,
		},
		"reuse of a spent refresh token": {
			stubs: func(d sessionDeps) {
				d.repo.EXPECT().Rotate(gomock.Any(), hashOf("R0"), gomock.Any(), gomock.Any(), gomock.Any()).
					Return(int64(7), "sid-1", true, domain.ErrRefreshInvalid)
			},
			call: reuse,
		},
	}
	committed := sessionNow // the repository answers at once on the test clock
	for name, rv := range revokeIn {
		t.Run(name+": Redis never takes the mark: answered when every older lease has ended", func(t *testing.T) {
			t.Parallel()
			clk := driven(sessionNow)
			s, d := newSessionServiceOn(t, clk)
			rv.stubs(d)
			var attempts int
			d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).DoAndReturn(
				func(context.Context, string, time.Duration) error { attempts++; return errRedis }).AnyTimes()

			waits, err := stepThrough(t, clk, rv.call(s))
			if err != nil {
				t.Fatalf("revocation with Redis failing: %v (PostgreSQL has it: it must succeed)", err)
			}
			if len(waits) == 0 {
				t.Fatal("answered at once, though a lease granted before the commit may still be trusted")
			}
			last := waits[len(waits)-1].until
			if last.Before(committed.Add(sessionCfg.RevocationLease)) {
				t.Fatalf("answered at +%s; a lease granted before the commit runs until +%s", last.Sub(committed), sessionCfg.RevocationLease)
			}
			if last.After(committed.Add(sessionCfg.RevocationLease + time.Second)) {
				t.Fatalf("answered at +%s: waited more than a second past the lease", last.Sub(committed))
			}
			for i := 1; i < len(waits); i++ {
				if waits[i].until.Before(waits[i-1].until) {
					t.Fatalf("wait %d ends before wait %d", i, i-1)
				}
			}
			if attempts != len(waits)+1 || attempts < 3 {
				t.Fatalf("%d mark attempts over %d waits: want one before and one after each wait, several in all", attempts, len(waits))
			}
			if n := s.Stats.RevocationsUnmarked.Load(); n != 1 {
				t.Fatalf("RevocationsUnmarked = %d, want 1", n)
			}
		})

		t.Run(name+": a retry that works answers at once", func(t *testing.T) {
			t.Parallel()
			clk := driven(sessionNow)
			s, d := newSessionServiceOn(t, clk)
			rv.stubs(d)
			gomock.InOrder(
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(errRedis),
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil),
			)
			waits, err := stepThrough(t, clk, rv.call(s))
			if err != nil {
				t.Fatal(err)
			}
			if len(waits) != 1 || !clk.Now().Before(committed.Add(time.Second)) {
				t.Fatalf("%d waits, answered at +%s; want the one pause before the retry", len(waits), clk.Now().Sub(committed))
			}
			if s.Stats.RevocationsDelayed.Load() != 1 || s.Stats.RevocationsUnmarked.Load() != 0 {
				t.Fatalf("stats delayed %d unmarked %d, want 1 and 0", s.Stats.RevocationsDelayed.Load(), s.Stats.RevocationsUnmarked.Load())
			}
		})
	}

	t.Run("Redis takes the mark: no wait at all", func(t *testing.T) {
		t.Parallel()
		clk := driven(sessionNow)
		s, d := newSessionServiceOn(t, clk)
		revokeIn["logout"].stubs(d)
		d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil)
		if waits, err := stepThrough(t, clk, logout(s)); err != nil || len(waits) != 0 {
			t.Fatalf("Logout = %v after %d waits; want at once", err, len(waits))
		}
	})

	t.Run("a request given up stops waiting", func(t *testing.T) {
		t.Parallel()
		clk := driven(sessionNow)
		s, d := newSessionServiceOn(t, clk)
		revokeIn["logout"].stubs(d)
		d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(errRedis)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Logout(ctx, "ACCESS", false) }()
		<-clk.waits // blocked in its first pause, which never ends
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Logout: %v", err)
		}
	})
}

// TestSessionService_RenewRevocations: a renewal takes the cache's clock first, then copies
// from PostgreSQL the recent revocations (lease held) or all that still matter (lease gone), and
// grants the lease from that first instant.
func TestSessionService_RenewRevocations(t *testing.T) {
	t.Parallel()
	redisNow := time.Date(2026, 5, 1, 12, 0, 7, 0, time.UTC) // Redis's clock, not the service's
	until := redisNow.Add(sessionCfg.RevocationLease)
	ids := []string{"sid-0", "sid-1"}
	tests := []struct {
		name       string
		buildStubs func(d sessionDeps)
		wantErr    error // nil: success
	}{
		{
			name: "lease held: the recent revocations extend it",
			buildStubs: func(d sessionDeps) {
				gomock.InOrder(
					d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(true, redisNow, nil),
					d.repo.EXPECT().RevokedWithin(gomock.Any(), sessionCfg.RecentRevocations).Return(ids, nil),
					d.revoked.EXPECT().Grant(gomock.Any(), ids, revocationWindow, until, true).Return(true, nil),
				)
			},
		},
		{
			name: "lease gone: every revocation that still matters, and the lease starts",
			buildStubs: func(d sessionDeps) {
				gomock.InOrder(
					d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(false, redisNow, nil),
					d.repo.EXPECT().RevokedWithin(gomock.Any(), revocationWindow).Return(ids, nil),
					d.revoked.EXPECT().Grant(gomock.Any(), ids, revocationWindow, until, false).Return(true, nil),
				)
			},
		},
		{
			name: "lease lapsed while renewing: copied again in full, from the same instant",
			buildStubs: func(d sessionDeps) {
				gomock.InOrder(
					d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(true, redisNow, nil),
					d.repo.EXPECT().RevokedWithin(gomock.Any(), sessionCfg.RecentRevocations).Return(nil, nil),
					d.revoked.EXPECT().Grant(gomock.Any(), []string(nil), revocationWindow, until, true).Return(false, nil),
					d.repo.EXPECT().RevokedWithin(gomock.Any(), revocationWindow).Return(ids, nil),
					d.revoked.EXPECT().Grant(gomock.Any(), ids, revocationWindow, until, false).Return(true, nil),
				)
			},
		},
		{
			name: "slower than the lease: nothing granted, ErrLeaseLate",
			buildStubs: func(d sessionDeps) {
				d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(false, redisNow, nil)
				d.repo.EXPECT().RevokedWithin(gomock.Any(), revocationWindow).Return(ids, nil)
				d.revoked.EXPECT().Grant(gomock.Any(), ids, revocationWindow, until, false).Return(false, nil)
			},
			wantErr: service.ErrLeaseLate,
		},
		{
			name: "Redis failing: PostgreSQL is not read",
			buildStubs: func(d sessionDeps) {
				d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(false, time.Time{}, errRedis)
				d.repo.EXPECT().RevokedWithin(gomock.Any(), gomock.Any()).Times(0)
				d.revoked.EXPECT().Grant(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: errRedis,
		},
		{
			name: "PostgreSQL failing: no lease is granted",
			buildStubs: func(d sessionDeps) {
				d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(true, redisNow, nil)
				d.repo.EXPECT().RevokedWithin(gomock.Any(), gomock.Any()).Return(nil, errDB)
				d.revoked.EXPECT().Grant(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: errDB,
		},
		{
			name: "the grant failing",
			buildStubs: func(d sessionDeps) {
				d.revoked.EXPECT().BeginRenewal(gomock.Any()).Return(true, redisNow, nil)
				d.repo.EXPECT().RevokedWithin(gomock.Any(), gomock.Any()).Return(ids, nil)
				d.revoked.EXPECT().Grant(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(false, errRedis)
			},
			wantErr: errRedis,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			tc.buildStubs(d)
			err := s.RenewRevocations(t.Context())
			if tc.wantErr == nil && err != nil {
				t.Fatalf("RenewRevocations: %v", err)
			}
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
			}
		})
	}
}
