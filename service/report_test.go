package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type reportDeps struct {
	users    *mocks.MockUserRepository
	articles *mocks.MockArticleRepository
	comments *mocks.MockCommentRepository
	reports  *mocks.MockReportStore
	cases    *mocks.MockReportCases
	log      *mocks.MockReportLog
	hider    *mocks.MockTargetHider
	tx       *hookTx
	stats    *service.ModerationStats
}

func newReportService(t *testing.T) (*service.ReportService, reportDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := reportDeps{
		users: mocks.NewMockUserRepository(ctrl), articles: mocks.NewMockArticleRepository(ctrl),
		comments: mocks.NewMockCommentRepository(ctrl), reports: mocks.NewMockReportStore(ctrl),
		cases: mocks.NewMockReportCases(ctrl), log: mocks.NewMockReportLog(ctrl), hider: mocks.NewMockTargetHider(ctrl),
		tx: &hookTx{}, stats: service.NewModerationStats(),
	}
	s := service.NewReportService(d.users, d.articles, d.comments, d.reports, d.cases, d.log, d.hider, d.tx, d.stats)
	return s, d
}

// hookTx is a unit of work that runs fn once with itself and then its AfterCommit hooks, unless
// fn failed: a rolled-back attempt's hooks never run.
type hookTx struct {
	mu    sync.Mutex
	hooks []func(context.Context)
}

func (h *hookTx) AfterCommit(fn func(context.Context)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hooks = append(h.hooks, fn)
}

func (h *hookTx) InTx(ctx context.Context, fn func(service.Tx) error) error {
	h.mu.Lock()
	h.hooks = nil
	h.mu.Unlock()
	if err := fn(h); err != nil {
		return err
	}
	for _, f := range h.hooks {
		f(ctx)
	}
	return nil
}

func (h *hookTx) InTxOnce(ctx context.Context, fn func(service.Tx) error) error {
	return h.InTx(ctx, fn)
}

var (
	repReporter   = domain.User{ID: 10, Username: "reporter", Role: domain.RoleUser}
	repModerator  = domain.User{ID: 20, Username: "mod", Role: domain.RoleModerator}
	repAdmin      = domain.User{ID: 30, Username: "boss", Role: domain.RoleAdmin}
	repArticle    = domain.Article{ID: 5, Slug: "spam-post", AuthorID: 40, Status: domain.StatusPublished}
	repDraft      = domain.Article{ID: 6, Slug: "draft", AuthorID: 40, Status: domain.StatusDraft}
	repOwnArticle = domain.Article{ID: 7, Slug: "mine", AuthorID: repReporter.ID, Status: domain.StatusPublished}
)

func reportSession(u domain.User) domain.Credential {
	return domain.Credential{UserID: u.ID, SessionID: "s"}
}

func TestReportService_File(t *testing.T) {
	t.Parallel()
	filed := domain.Report{ID: 1, CaseID: 2, ReporterID: repReporter.ID, Reason: domain.ReasonSpam, Status: domain.CaseOpen}
	cases := []struct {
		name       string
		cred       domain.Credential
		in         service.ReportInput
		buildStubs func(d reportDeps)
		check      func(t *testing.T, r domain.Report, created bool, err error)
	}{
		{
			name: "an article",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Reason: "spam", Note: "buy pills"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.reports.EXPECT().File(gomock.Any(), domain.Report{ReporterID: repReporter.ID, Reason: domain.ReasonSpam, Note: "buy pills",
					Target: domain.ModerationTarget{Kind: domain.TargetArticle, ID: 5, Label: "spam-post", OwnerID: 40}}).Return(filed, true, nil)
			},
			check: func(t *testing.T, r domain.Report, created bool, err error) {
				if err != nil || !created || r.ID != 1 || r.Target.Label != "spam-post" {
					t.Fatalf("File = %+v, %v, %v", r, created, err)
				}
			},
		},
		{
			name: "a repeat is the same report, not created",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Reason: "abuse"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Return(filed, false, nil)
			},
			check: func(t *testing.T, r domain.Report, created bool, err error) {
				if err != nil || created || r.ID != 1 {
					t.Fatalf("File = %+v, %v, %v", r, created, err)
				}
			},
		},
		{
			name: "a comment on its article",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Comment: 9, Reason: "abuse"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.comments.EXPECT().Get(gomock.Any(), int64(9)).Return(domain.Comment{ID: 9, ArticleID: 5, AuthorID: 41}, nil)
				d.reports.EXPECT().File(gomock.Any(), domain.Report{ReporterID: repReporter.ID, Reason: domain.ReasonAbuse,
					Target: domain.ModerationTarget{Kind: domain.TargetComment, ID: 9, ArticleID: 5, OwnerID: 41, Label: "comment 9 on spam-post"}}).Return(filed, true, nil)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				if err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a comment of another article is unknown",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Comment: 9, Reason: "abuse"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.comments.EXPECT().Get(gomock.Any(), int64(9)).Return(domain.Comment{ID: 9, ArticleID: 99, AuthorID: 41}, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a hidden comment is unknown to others",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Comment: 9, Reason: "abuse"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.comments.EXPECT().Get(gomock.Any(), int64(9)).Return(domain.Comment{ID: 9, ArticleID: 5, AuthorID: 41,
					Moderation: domain.ContentModeration{Hidden: true, Reason: "rude"}}, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a user",
			cred: domain.Credential{UserID: repReporter.ID, APIKeyID: 3, Scopes: []domain.Scope{domain.ScopeWrite}},
			in:   service.ReportInput{User: "troll", Reason: "other"},
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "troll").Return(domain.User{ID: 50, Username: "troll"}, nil)
				d.reports.EXPECT().File(gomock.Any(), domain.Report{ReporterID: repReporter.ID, Reason: domain.ReasonOther,
					Target: domain.ModerationTarget{Kind: domain.TargetUser, ID: 50, OwnerID: 50, Label: "troll"}}).Return(filed, true, nil)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				if err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "an article the repReporter cannot see is unknown",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "draft", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "draft").Return(repDraft, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "an unknown user",
			cred: reportSession(repReporter),
			in:   service.ReportInput{User: "nobody", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "nobody").Return(domain.User{}, domain.ErrNotFound)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "your own article",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "mine", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "mine").Return(repOwnArticle, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				requireValidation(t, err, map[string][]string{"article": {"is yours: you cannot report your own article"}})
			},
		},
		{
			name: "your own comment",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Article: "spam-post", Comment: 9, Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "spam-post").Return(repArticle, nil)
				d.comments.EXPECT().Get(gomock.Any(), int64(9)).Return(domain.Comment{ID: 9, ArticleID: 5, AuthorID: repReporter.ID}, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				requireValidation(t, err, map[string][]string{"comment": {"is yours: you cannot report your own comment"}})
			},
		},
		{
			name: "yourself",
			cred: reportSession(repReporter),
			in:   service.ReportInput{User: "reporter", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "reporter").Return(repReporter, nil)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				requireValidation(t, err, map[string][]string{"user": {"is you: you cannot report yourself"}})
			},
		},
		{
			name: "bad input never reaches storage",
			cred: reportSession(repReporter),
			in:   service.ReportInput{User: "troll", Article: "x", Reason: "boring", Note: strings.Repeat("n", 1001)},
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), gomock.Any()).Times(0)
				d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				requireValidation(t, err, map[string][]string{
					"report": {"names more than one target: report an article, a comment (with its article) or a user"},
					"reason": {domain.ErrReportReason},
					"note":   {"is too long (maximum is 1000 characters)"},
				})
			},
		},
		{
			name: "no target, NUL in the note",
			cred: reportSession(repReporter),
			in:   service.ReportInput{Comment: 3, Reason: "spam", Note: "a\x00b"},
			buildStubs: func(d reportDeps) {
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) {
				requireValidation(t, err, map[string][]string{
					"report": {"names no target: give an article, a comment with its article, or a user"},
					"note":   {"must not contain NUL characters"},
				})
			},
		},
		{
			name: "signed out",
			cred: domain.Credential{},
			in:   service.ReportInput{User: "troll", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrUnauthorized) },
		},
		{
			name: "a read-only API key",
			cred: domain.Credential{UserID: repReporter.ID, APIKeyID: 3, Scopes: []domain.Scope{domain.ScopeRead}},
			in:   service.ReportInput{User: "troll", Reason: "spam"},
			buildStubs: func(d reportDeps) {
				d.reports.EXPECT().File(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.Report, _ bool, err error) { requireErrorIs(t, err, domain.ErrForbidden) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newReportService(t)
			tc.buildStubs(d)
			r, created, err := s.File(context.Background(), tc.cred, tc.in)
			tc.check(t, r, created, err)
		})
	}
}

// Every moderation use case checks the role before any storage: a plain user, an API key (even
// a moderator's) and a signed-out caller never reach the queue, the log or the hider.
func TestReportService_ModerationNeverReachesStorageForOthers(t *testing.T) {
	t.Parallel()
	type call struct {
		name string
		run  func(s *service.ReportService, cred domain.Credential) error
	}
	calls := []call{
		{"queue", func(s *service.ReportService, cred domain.Credential) error {
			_, err := s.Queue(context.Background(), cred, "open", domain.Page{})
			return err
		}},
		{"resolve", func(s *service.ReportService, cred domain.Credential) error {
			_, err := s.Resolve(context.Background(), cred, 1, "dismiss", "")
			return err
		}},
		{"log", func(s *service.ReportService, cred domain.Credential) error {
			_, err := s.ModerationLog(context.Background(), cred, domain.Page{})
			return err
		}},
	}
	callers := []struct {
		name string
		cred domain.Credential
		user *domain.User
		want error
	}{
		{"a plain user", reportSession(repReporter), &repReporter, domain.ErrForbidden},
		{"a moderator's API key", domain.Credential{UserID: repModerator.ID, APIKeyID: 1, Scopes: []domain.Scope{domain.ScopeWrite}}, nil, domain.ErrForbidden},
		{"signed out", domain.Credential{}, nil, domain.ErrUnauthorized},
	}
	for _, c := range calls {
		for _, who := range callers {
			t.Run(c.name+"/"+who.name, func(t *testing.T) {
				t.Parallel()
				s, d := newReportService(t)
				if who.user != nil {
					d.users.EXPECT().GetByID(gomock.Any(), who.user.ID).Return(*who.user, nil)
				}
				d.cases.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.cases.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
				d.cases.EXPECT().LockIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.cases.EXPECT().ResolveTargetIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.log.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.log.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.hider.EXPECT().HideTargetIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				requireErrorIs(t, c.run(s, who.cred), who.want)
			})
		}
	}
	// The log is for admins: a moderator is refused too.
	s, d := newReportService(t)
	d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
	d.log.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	_, err := s.ModerationLog(context.Background(), reportSession(repModerator), domain.Page{})
	requireErrorIs(t, err, domain.ErrForbidden)
}

func TestReportService_Queue(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	three := []domain.ModerationCase{
		{ID: 1, Status: domain.CaseOpen, OpenedAt: t0},
		{ID: 2, Status: domain.CaseOpen, OpenedAt: t0.Add(time.Minute)},
		{ID: 3, Status: domain.CaseOpen, OpenedAt: t0.Add(2 * time.Minute)},
	}
	t.Run("a full page offers the next", func(t *testing.T) {
		t.Parallel()
		s, d := newReportService(t)
		d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
		d.cases.EXPECT().List(gomock.Any(), domain.CaseOpen, (*domain.Cursor)(nil), 3).Return(three, nil)
		l, err := s.Queue(context.Background(), reportSession(repModerator), "", domain.Page{Limit: 2})
		if err != nil || len(l.Cases) != 2 || l.NextCursor == nil || *l.NextCursor != (domain.Cursor{CreatedAt: t0.Add(time.Minute), ID: 2}) {
			t.Fatalf("Queue = %+v, %v", l, err)
		}
	})
	t.Run("the last page offers none", func(t *testing.T) {
		t.Parallel()
		s, d := newReportService(t)
		cur := &domain.Cursor{CreatedAt: t0, ID: 9}
		d.users.EXPECT().GetByID(gomock.Any(), repAdmin.ID).Return(repAdmin, nil)
		d.cases.EXPECT().List(gomock.Any(), domain.CaseResolved, cur, domain.DefaultPageLimit+1).Return(three, nil)
		l, err := s.Queue(context.Background(), reportSession(repAdmin), "resolved", domain.Page{Cursor: cur})
		if err != nil || len(l.Cases) != 3 || l.NextCursor != nil {
			t.Fatalf("Queue = %+v, %v", l, err)
		}
	})
	t.Run("an unknown status", func(t *testing.T) {
		t.Parallel()
		s, d := newReportService(t)
		d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
		d.cases.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		_, err := s.Queue(context.Background(), reportSession(repModerator), "closed", domain.Page{})
		requireValidation(t, err, map[string][]string{"status": {"must be open or resolved"}})
	})
}

func TestReportService_Resolve(t *testing.T) {
	t.Parallel()
	articleCase := domain.ModerationCase{ID: 4, Status: domain.CaseOpen,
		Target: domain.ModerationTarget{Kind: domain.TargetArticle, ID: 5, Label: "spam-post", OwnerID: 40}}
	resolvedCase := articleCase
	resolvedCase.Status, resolvedCase.Resolution = domain.CaseResolved, domain.ResolutionDismiss
	userCase := domain.ModerationCase{ID: 8, Status: domain.CaseOpen, Target: domain.ModerationTarget{Kind: domain.TargetUser, ID: 50, Label: "troll"}}
	cases := []struct {
		name       string
		id         int64
		action     string
		reason     string
		buildStubs func(d reportDeps)
		check      func(t *testing.T, c domain.ModerationCase, err error, d reportDeps)
	}{
		{
			name: "dismiss logs first, resolves with the entry's event id, counts after commit", id: 4, action: "dismiss",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				gomock.InOrder(
					d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(articleCase, nil),
					d.cases.EXPECT().LockIn(gomock.Any(), d.tx, int64(4)).Return(articleCase, nil),
					d.log.EXPECT().AppendIn(gomock.Any(), d.tx, domain.ModerationEntry{ActorID: repModerator.ID, ActorName: "mod",
						Action: domain.ActionDismiss, Target: articleCase.Target}).Return(domain.ModerationEntry{ID: 77}, nil),
					d.cases.EXPECT().ResolveTargetIn(gomock.Any(), d.tx, articleCase.Target, repModerator.ID, "dismiss", "mod:77").Return(true, nil),
					d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(resolvedCase, nil),
				)
			},
			check: func(t *testing.T, c domain.ModerationCase, err error, d reportDeps) {
				if err != nil || c.Status != domain.CaseResolved {
					t.Fatalf("Resolve = %+v, %v", c, err)
				}
				if n := d.stats.Actions()[domain.ActionDismiss]; n != 1 {
					t.Fatalf("dismissals counted = %d, want 1", n)
				}
			},
		},
		{
			name: "hide hands the target to the hider in the unit of work", id: 4, action: "hide", reason: "spam",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repAdmin.ID).Return(repAdmin, nil).AnyTimes()
				d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(articleCase, nil)
				d.cases.EXPECT().LockIn(gomock.Any(), d.tx, int64(4)).Return(articleCase, nil)
				d.hider.EXPECT().HideTargetIn(gomock.Any(), d.tx, repAdmin, articleCase.Target, "spam").Return(nil)
				d.log.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.cases.EXPECT().ResolveTargetIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(resolvedCase, nil)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, d reportDeps) {
				if err != nil {
					t.Fatal(err)
				}
				if n := d.stats.Actions()[domain.ActionDismiss]; n != 0 {
					t.Fatalf("a hide counted as a dismissal")
				}
			},
		},
		{
			name: "an already resolved case is a conflict", id: 4, action: "dismiss",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(resolvedCase, nil)
				d.cases.EXPECT().LockIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) {
				requireErrorIs(t, err, domain.ErrConflict)
			},
		},
		{
			name: "resolved meanwhile (seen under the lock) is a conflict and writes nothing", id: 4, action: "dismiss",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(articleCase, nil)
				d.cases.EXPECT().LockIn(gomock.Any(), d.tx, int64(4)).Return(resolvedCase, nil)
				d.log.EXPECT().AppendIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, d reportDeps) {
				requireErrorIs(t, err, domain.ErrConflict)
				if n := d.stats.Actions()[domain.ActionDismiss]; n != 0 {
					t.Fatalf("a refused dismissal was counted")
				}
			},
		},
		{
			name: "an unknown case", id: 99, action: "dismiss",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), int64(99)).Return(domain.ModerationCase{}, domain.ErrNotFound)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) {
				requireErrorIs(t, err, domain.ErrNotFound)
			},
		},
		{
			name: "a user is not hidden", id: 8, action: "hide", reason: "troll",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), int64(8)).Return(userCase, nil)
				d.hider.EXPECT().HideTargetIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) {
				requireValidation(t, err, map[string][]string{"action": {"cannot hide a user: suspend the user instead (POST /api/moderation/users/:username/suspend), or dismiss"}})
			},
		},
		{
			name: "bad action and reason never reach storage", id: 4, action: "delete", reason: "a\x00",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) {
				requireValidation(t, err, map[string][]string{"action": {"must be hide or dismiss"}, "reason": {"must not contain NUL characters"}})
			},
		},
		{
			name: "hide needs a reason", id: 4, action: "hide", reason: "  ",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) {
				requireValidation(t, err, map[string][]string{"reason": {"can't be blank when hiding"}})
			},
		},
		{
			name: "a failing hide rolls back and counts nothing", id: 4, action: "hide", reason: "spam",
			buildStubs: func(d reportDeps) {
				d.users.EXPECT().GetByID(gomock.Any(), repModerator.ID).Return(repModerator, nil)
				d.cases.EXPECT().Get(gomock.Any(), int64(4)).Return(articleCase, nil)
				d.cases.EXPECT().LockIn(gomock.Any(), d.tx, int64(4)).Return(articleCase, nil)
				d.hider.EXPECT().HideTargetIn(gomock.Any(), d.tx, repModerator, articleCase.Target, "spam").Return(errors.New("boom"))
			},
			check: func(t *testing.T, _ domain.ModerationCase, err error, _ reportDeps) { requireNoValidation(t, err) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newReportService(t)
			tc.buildStubs(d)
			cred := reportSession(repModerator)
			if tc.name == "hide hands the target to the hider in the unit of work" {
				cred = reportSession(repAdmin)
			}
			c, err := s.Resolve(context.Background(), cred, tc.id, tc.action, tc.reason)
			tc.check(t, c, err, d)
		})
	}
}

func TestReportService_ModerationLog(t *testing.T) {
	t.Parallel()
	s, d := newReportService(t)
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	d.users.EXPECT().GetByID(gomock.Any(), repAdmin.ID).Return(repAdmin, nil)
	d.log.EXPECT().List(gomock.Any(), (*domain.Cursor)(nil), 2).Return([]domain.ModerationEntry{{ID: 9, At: at}, {ID: 8, At: at}}, nil)
	l, err := s.ModerationLog(context.Background(), reportSession(repAdmin), domain.Page{Limit: 1})
	if err != nil || len(l.Entries) != 1 || l.NextCursor == nil || *l.NextCursor != (domain.Cursor{CreatedAt: at, ID: 9}) {
		t.Fatalf("ModerationLog = %+v, %v", l, err)
	}
}

func TestModerationStats_CountsOnlyKnownActions(t *testing.T) {
	t.Parallel()
	st := service.NewModerationStats()
	st.Acted(domain.ActionDismiss)
	st.Acted(domain.ActionDismiss)
	st.Acted("nonsense")
	got := st.Actions()
	if got[domain.ActionDismiss] != 2 || len(got) != len(domain.ModerationActions) {
		t.Fatalf("Actions = %v", got)
	}
}
