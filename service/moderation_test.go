package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type moderationDeps struct {
	articles *mocks.MockModeratedArticles
	comments *mocks.MockModeratedComments
	accounts *mocks.MockModeratedAccounts
	record   *mocks.MockModerationRecorder
	cases    *mocks.MockCaseResolver
	jobs     *mocks.MockJobScheduler
	uow      *countingUnitOfWork
	stats    *service.ModerationStats
}

// countingUnitOfWork runs the function in a transaction that registers nothing, and counts the
// units of work opened: zero proves nothing was written.
type countingUnitOfWork struct{ opened int }

func (u *countingUnitOfWork) InTx(_ context.Context, fn func(service.Tx) error) error {
	u.opened++
	return fn(noHooksTx{})
}

func (u *countingUnitOfWork) InTxOnce(ctx context.Context, fn func(service.Tx) error) error {
	return u.InTx(ctx, fn)
}

var modNow = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func newModerationService(t *testing.T) (*service.ModerationService, moderationDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := moderationDeps{
		articles: mocks.NewMockModeratedArticles(ctrl), comments: mocks.NewMockModeratedComments(ctrl),
		accounts: mocks.NewMockModeratedAccounts(ctrl), record: mocks.NewMockModerationRecorder(ctrl),
		cases: mocks.NewMockCaseResolver(ctrl), jobs: mocks.NewMockJobScheduler(ctrl),
		uow: &countingUnitOfWork{}, stats: service.NewModerationStats(),
	}
	svc := service.NewModerationService(d.articles, d.comments, d.accounts, d.record, d.cases, d.jobs, d.uow, d.stats,
		func() time.Time { return modNow }, discardLogger)
	return svc, d
}

var (
	plainUser = domain.User{ID: 10, Username: "plain", Role: domain.RoleUser}
	modUser   = domain.User{ID: 11, Username: "mod", Role: domain.RoleModerator}
	adminUser = domain.User{ID: 12, Username: "admin", Role: domain.RoleAdmin}
	session   = func(u domain.User) domain.Credential { return domain.Credential{UserID: u.ID, SessionID: "s"} }
	apiKeyOf  = func(u domain.User) domain.Credential {
		return domain.Credential{UserID: u.ID, APIKeyID: 5, Scopes: []domain.Scope{domain.ScopeRead, domain.ScopeWrite}}
	}
)

// TestModeration_RefusedCallsNeverReachStorage: a plain user's, an API key's and (for roles) a
// moderator's call is refused before any storage of the action is read or written: the only
// port touched is the account lookup of the caller (never for an API key), and no unit of work
// opens.
func TestModeration_RefusedCallsNeverReachStorage(t *testing.T) {
	t.Parallel()
	until := modNow.Add(time.Hour)
	actions := []struct {
		name string
		call func(*service.ModerationService, domain.Credential) error
		// admins is true for the actions only admins may take.
		admins bool
	}{
		{"set role", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.SetRole(context.Background(), c, "victim", "admin")
			return err
		}, true},
		{"hide article", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.HideArticle(context.Background(), c, "slug", "spam")
			return err
		}, false},
		{"unhide article", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.UnhideArticle(context.Background(), c, "slug", "")
			return err
		}, false},
		{"hide comment", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.HideComment(context.Background(), c, 3, "rude")
			return err
		}, false},
		{"unhide comment", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.UnhideComment(context.Background(), c, 3, "")
			return err
		}, false},
		{"suspend", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Suspend(context.Background(), c, "victim", "spam", &until)
			return err
		}, false},
		{"unsuspend", func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Unsuspend(context.Background(), c, "victim", "")
			return err
		}, false},
	}
	for _, a := range actions {
		callers := []struct {
			name      string
			cred      domain.Credential
			buildStub func(d moderationDeps)
			want      error
		}{
			{"a plain user", session(plainUser), func(d moderationDeps) {
				d.accounts.EXPECT().GetByID(gomock.Any(), plainUser.ID).Return(plainUser, nil)
			}, domain.ErrForbidden},
			{"an admin's API key", apiKeyOf(adminUser), func(moderationDeps) {}, domain.ErrForbidden},
			{"nobody", domain.Credential{}, func(moderationDeps) {}, domain.ErrUnauthorized},
		}
		if a.admins {
			callers = append(callers, struct {
				name      string
				cred      domain.Credential
				buildStub func(d moderationDeps)
				want      error
			}{"a moderator", session(modUser), func(d moderationDeps) {
				d.accounts.EXPECT().GetByID(gomock.Any(), modUser.ID).Return(modUser, nil)
			}, domain.ErrForbidden})
		}
		for _, c := range callers {
			t.Run(a.name+" by "+c.name, func(t *testing.T) {
				t.Parallel()
				svc, d := newModerationService(t)
				c.buildStub(d)
				d.accounts.EXPECT().GetByUsername(gomock.Any(), gomock.Any()).Times(0)
				d.accounts.EXPECT().SetRoleIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.accounts.EXPECT().SuspendIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				d.articles.EXPECT().HideIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.comments.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
				d.record.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				if err := a.call(svc, c.cred); !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				if d.uow.opened != 0 {
					t.Fatalf("%d units of work opened", d.uow.opened)
				}
			})
		}
	}
}

func TestModeration_BadInputNeverReachesStorage(t *testing.T) {
	t.Parallel()
	past, far, near := modNow.Add(-time.Minute), modNow.Add(8*24*time.Hour), modNow.Add(time.Hour)
	cases := []struct {
		name   string
		caller domain.User
		call   func(*service.ModerationService, domain.Credential) error
		field  string
	}{
		{"an unknown role", adminUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.SetRole(context.Background(), c, "victim", "root")
			return err
		}, "role"},
		{"a blank reason", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.HideArticle(context.Background(), c, "slug", "  ")
			return err
		}, "reason"},
		{"a reason over 1000 characters", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.HideComment(context.Background(), c, 3, strings.Repeat("é", 1001))
			return err
		}, "reason"},
		{"a NUL in the reason", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.UnhideArticle(context.Background(), c, "slug", "a\x00b")
			return err
		}, "reason"},
		{"invalid UTF-8 in the reason", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Suspend(context.Background(), c, "victim", "\xff", &near)
			return err
		}, "reason"},
		{"an end in the past", adminUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Suspend(context.Background(), c, "victim", "spam", &past)
			return err
		}, "until"},
		{"a moderator's suspension over 7 days", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Suspend(context.Background(), c, "victim", "spam", &far)
			return err
		}, "until"},
		{"a moderator's suspension without an end", modUser, func(s *service.ModerationService, c domain.Credential) error {
			_, err := s.Suspend(context.Background(), c, "victim", "spam", nil)
			return err
		}, "until"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newModerationService(t)
			d.accounts.EXPECT().GetByID(gomock.Any(), tc.caller.ID).Return(tc.caller, nil)
			d.accounts.EXPECT().GetByUsername(gomock.Any(), gomock.Any()).Times(0)
			d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
			d.comments.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
			err := tc.call(svc, session(tc.caller))
			var verr *domain.ValidationError
			if !errors.As(err, &verr) || verr.Fields[tc.field] == nil {
				t.Fatalf("err = %v, want a validation error on %s", err, tc.field)
			}
			if d.uow.opened != 0 {
				t.Fatalf("%d units of work opened", d.uow.opened)
			}
		})
	}
}

func TestModeration_SuspendRules(t *testing.T) {
	t.Parallel()
	near := modNow.Add(24 * time.Hour)
	t.Run("a moderator cannot suspend an admin", func(t *testing.T) {
		t.Parallel()
		svc, d := newModerationService(t)
		d.accounts.EXPECT().GetByID(gomock.Any(), modUser.ID).Return(modUser, nil)
		d.accounts.EXPECT().GetByUsername(gomock.Any(), "admin").Return(adminUser, nil)
		d.accounts.EXPECT().SuspendIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		if _, err := svc.Suspend(context.Background(), session(modUser), "admin", "coup", &near); !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
	})
	t.Run("a suspension hides, logs, closes reports and schedules its end, in one unit of work", func(t *testing.T) {
		t.Parallel()
		svc, d := newModerationService(t)
		d.accounts.EXPECT().GetByID(gomock.Any(), modUser.ID).Return(modUser, nil)
		d.accounts.EXPECT().GetByUsername(gomock.Any(), "plain").Return(plainUser, nil)
		d.accounts.EXPECT().SuspendIn(gomock.Any(), gomock.Any(), plainUser.ID, near, "spam").Return(plainUser, nil)
		d.articles.EXPECT().HideByAuthorIn(gomock.Any(), gomock.Any(), plainUser.ID).Return(3, nil)
		d.record.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(_ context.Context, _ service.Tx, e domain.ModerationEntry) (domain.ModerationEntry, error) {
				if e.Action != domain.ActionSuspend || e.ActorID != modUser.ID || e.Target.ID != plainUser.ID {
					t.Errorf("log entry %+v", e)
				}
				e.ID = 77
				return e, nil
			})
		d.cases.EXPECT().ResolveTargetIn(gomock.Any(), gomock.Any(), gomock.Any(), modUser.ID, "hide", "mod:77").Return(true, nil)
		d.jobs.EXPECT().EnqueueIn(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(_ context.Context, _ service.Tx, j domain.NewJob) (bool, error) {
				if j.Kind != service.JobKindSuspensionEnd || !j.RunAt.Equal(near) || j.UniqueKey == "" {
					t.Errorf("job %+v", j)
				}
				return true, nil
			})
		if _, err := svc.Suspend(context.Background(), session(modUser), "plain", "spam", &near); err != nil {
			t.Fatal(err)
		}
		if d.uow.opened != 1 || d.stats.Actions()[domain.ActionSuspend] != 1 {
			t.Fatalf("units of work %d, suspend count %d", d.uow.opened, d.stats.Actions()[domain.ActionSuspend])
		}
	})
	t.Run("the end of a suspension lifts only one whose time has come", func(t *testing.T) {
		t.Parallel()
		svc, d := newModerationService(t)
		d.accounts.EXPECT().GetByID(gomock.Any(), plainUser.ID).Return(plainUser, nil)
		d.accounts.EXPECT().UnsuspendIn(gomock.Any(), gomock.Any(), plainUser.ID, true).Return(domain.User{}, false, nil)
		d.articles.EXPECT().RestoreByAuthorIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.record.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		if err := svc.EndSuspension(context.Background(), plainUser.ID); err != nil {
			t.Fatal(err)
		}
	})
}
