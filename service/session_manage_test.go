package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// The mark of a revocation outlives every token it refuses: a token issued just before the
// revocation lives AccessTTL, and the token check accepts it 5 s (clock skew) past that.
func TestSessionService_MarkOutlivesTokenAndSkew(t *testing.T) {
	t.Parallel()
	const verifySkew = 5 * time.Second
	s, d := newSessionService(t)
	d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
	d.repo.EXPECT().Revoke(gomock.Any(), "sid-1").Return(nil)
	d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", gomock.Any()).DoAndReturn(func(_ context.Context, _ string, ttl time.Duration) error {
		if ttl <= sessionCfg.AccessTTL+verifySkew {
			t.Errorf("mark lives %s; a token may still be accepted for %s", ttl, sessionCfg.AccessTTL+verifySkew)
		}
		return nil
	})
	if err := s.Logout(t.Context(), "ACCESS", false); err != nil {
		t.Fatal(err)
	}
}

func TestSessionService_ListSessions(t *testing.T) {
	t.Parallel()
	s, d := newSessionService(t)
	d.repo.EXPECT().ListLive(gomock.Any(), int64(7)).Return([]domain.SessionInfo{{ID: "a"}, {ID: "b"}}, nil)
	list, err := s.ListSessions(t.Context(), domain.Credential{UserID: 7, SessionID: "b"})
	if err != nil || len(list) != 2 || list[0].Current || !list[1].Current {
		t.Fatalf("ListSessions = %+v, %v; want b alone marked current", list, err)
	}
}

func TestSessionService_RevokeSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		sid        string
		buildStubs func(d sessionDeps)
		wantErr    error
	}{
		{
			name: "own session: revoked in PostgreSQL, then marked",
			sid:  "sid-1",
			buildStubs: func(d sessionDeps) {
				gomock.InOrder(
					d.repo.EXPECT().RevokeOwned(gomock.Any(), int64(7), "sid-1").Return(nil),
					d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil),
				)
			},
		},
		{
			name: "someone else's or unknown: not found, nothing marked",
			sid:  "sid-2",
			buildStubs: func(d sessionDeps) {
				d.repo.EXPECT().RevokeOwned(gomock.Any(), int64(7), "sid-2").Return(domain.ErrNotFound)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrNotFound,
		},
		{
			name: "an absurd id never reaches storage",
			sid:  strings.Repeat("x", 65),
			buildStubs: func(d sessionDeps) {
				d.repo.EXPECT().RevokeOwned(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			tc.buildStubs(d)
			err := s.RevokeSession(t.Context(), 7, tc.sid)
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Logging out everywhere marks every ended session, each once, before it returns.
func TestSessionService_LogoutAllMarksEach(t *testing.T) {
	t.Parallel()
	s, d := newSessionService(t)
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = domain.NewSessionID()
	}
	d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
	d.repo.EXPECT().RevokeAll(gomock.Any(), int64(7)).Return(ids, nil)
	var mu sync.Mutex
	marked := map[string]int{}
	d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), markTTL).DoAndReturn(func(_ context.Context, sid string, _ time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		marked[sid]++
		return nil
	}).Times(len(ids))
	if err := s.Logout(t.Context(), "ACCESS", true); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if marked[id] != 1 {
			t.Fatalf("session %s marked %d times", id, marked[id])
		}
	}
}

// recordingTx keeps the commit hooks, to run them as a commit would.
type recordingTx struct{ hooks []func(context.Context) }

func (r *recordingTx) AfterCommit(fn func(context.Context)) { r.hooks = append(r.hooks, fn) }

// A credential change ends the other sessions and the keys in the caller's unit of work; the
// marks go out only once it commits.
func TestSessionService_RevokeAllInMarksAfterCommit(t *testing.T) {
	t.Parallel()
	s, d := newSessionService(t)
	tx := &recordingTx{}
	d.repo.EXPECT().RevokeAllIn(gomock.Any(), tx, int64(7), "sid-keep").Return([]string{"sid-1", "sid-2"}, nil)
	d.keys.EXPECT().RevokeAllIn(gomock.Any(), tx, int64(7)).Return(nil)
	if err := s.RevokeAllIn(t.Context(), tx, 7, "sid-keep", true); err != nil {
		t.Fatal(err)
	}
	if len(tx.hooks) != 1 {
		t.Fatalf("%d commit hooks, want 1", len(tx.hooks))
	}
	d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil)
	d.revoked.EXPECT().Revoke(gomock.Any(), "sid-2", markTTL).Return(nil)
	tx.hooks[0](t.Context())
}

// A login in the caller's unit of work that ends a session past the cap marks it revoked only once
// the unit of work commits (before that, the ending is not certain); one that ends none adds no
// hook.
func TestSessionService_StartInMarksEndedAfterCommit(t *testing.T) {
	t.Parallel()
	s, d := newSessionService(t)
	tx := &recordingTx{}
	d.repo.EXPECT().CreateIn(gomock.Any(), tx, gomock.Any(), int64(7), gomock.Any(), gomock.Any(), gomock.Any(), service.DefaultSessionsPerUser).
		Return([]string{"sid-old"}, nil)
	d.tokens.EXPECT().Issue(int64(7), gomock.Any()).Return("ACCESS", nil).Times(2)
	d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	if _, err := s.StartIn(t.Context(), tx, 7); err != nil {
		t.Fatal(err)
	}
	if len(tx.hooks) != 1 {
		t.Fatalf("%d commit hooks, want 1", len(tx.hooks))
	}

	under := &recordingTx{}
	d.repo.EXPECT().CreateIn(gomock.Any(), under, gomock.Any(), int64(7), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, nil)
	if _, err := s.StartIn(t.Context(), under, 7); err != nil || len(under.hooks) != 0 {
		t.Fatalf("StartIn under the cap: %v, %d hooks", err, len(under.hooks))
	}

	d.revoked.EXPECT().Revoke(gomock.Any(), "sid-old", markTTL).Return(nil)
	tx.hooks[0](t.Context())
}

func TestSessionService_StartRecordsUserAgent(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", domain.MaxUserAgentLen) // two bytes each: cut on a rune boundary
	for name, tc := range map[string]struct{ ua, want string }{
		"as sent":    {ua: " curl/8.5 ", want: "curl/8.5"},
		"cut to 256": {ua: long, want: strings.Repeat("é", domain.MaxUserAgentLen/2)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			d.repo.EXPECT().Create(gomock.Any(), gomock.Any(), int64(7), tc.want, gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, nil)
			d.tokens.EXPECT().Issue(int64(7), gomock.Any()).Return("ACCESS", nil)
			if _, err := s.Start(service.WithUserAgent(t.Context(), tc.ua), 7); err != nil {
				t.Fatal(err)
			}
		})
	}
}
