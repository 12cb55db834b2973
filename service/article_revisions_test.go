package service_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type revisionDeps struct {
	articles *mocks.MockArticleRepository
	revs     *mocks.MockRevisionStore
	users    *mocks.MockUserRepository
	editor   *mocks.MockArticleEditor
}

func newRevisionService(t *testing.T) (*service.RevisionService, revisionDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := revisionDeps{
		articles: mocks.NewMockArticleRepository(ctrl), revs: mocks.NewMockRevisionStore(ctrl),
		users: mocks.NewMockUserRepository(ctrl), editor: mocks.NewMockArticleEditor(ctrl),
	}
	return service.NewRevisionService(d.articles, d.revs, d.users, d.editor), d
}

var (
	revAuthor    = domain.User{ID: 20, Username: "writer", Role: domain.RoleUser}
	revArticle   = domain.Article{ID: 300, Slug: "kept", AuthorID: revAuthor.ID, Title: "Now", Status: domain.StatusPublished, Version: 4}
	revDraft     = domain.Article{ID: 301, Slug: "draft", AuthorID: revAuthor.ID, Title: "Draft", Status: domain.StatusDraft, Version: 2}
	revisionTwo  = domain.ArticleRevision{ArticleID: 300, Version: 2, Title: "Then", Description: "d", Body: "old body", Tags: []string{"go"}, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	revisionList = []domain.ArticleRevision{{ArticleID: 300, Version: 3}, {ArticleID: 300, Version: 2}, {ArticleID: 300, Version: 1}}
)

// noRevisionReads proves a refused call never read a revision nor edited.
func noRevisionReads(d revisionDeps) {
	d.revs.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.revs.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.editor.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func TestRevisionService_List(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cred       domain.Credential
		slug       string
		before     int32
		buildStubs func(d revisionDeps)
		check      func(t *testing.T, l service.RevisionList, err error)
	}{
		{
			name: "the author pages newest first, reading one more than the page",
			cred: session(revAuthor), slug: "kept",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
				d.revs.EXPECT().List(gomock.Any(), revArticle.ID, int32(0), 3).Return(revisionList, nil)
			},
			check: func(t *testing.T, l service.RevisionList, err error) {
				if err != nil || len(l.Revisions) != 2 || l.NextBefore != 2 {
					t.Fatalf("list = %+v, %v; want two and a next page from version 2", l, err)
				}
			},
		},
		{
			name: "the last page has no next",
			cred: session(revAuthor), slug: "kept", before: 2,
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
				d.revs.EXPECT().List(gomock.Any(), revArticle.ID, int32(2), 3).Return(revisionList[2:], nil)
			},
			check: func(t *testing.T, l service.RevisionList, err error) {
				if err != nil || len(l.Revisions) != 1 || l.NextBefore != 0 {
					t.Fatalf("list = %+v, %v; want one and no next page", l, err)
				}
			},
		},
		{
			name: "a moderator reads another's",
			cred: session(modUser), slug: "kept",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
				d.users.EXPECT().GetByID(gomock.Any(), modUser.ID).Return(modUser, nil)
				d.revs.EXPECT().List(gomock.Any(), revArticle.ID, int32(0), 3).Return(nil, nil)
			},
			check: func(t *testing.T, l service.RevisionList, err error) {
				if err != nil || len(l.Revisions) != 0 {
					t.Fatalf("list = %+v, %v", l, err)
				}
			},
		},
		{
			name: "another user is forbidden",
			cred: session(plainUser), slug: "kept",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
				d.users.EXPECT().GetByID(gomock.Any(), plainUser.ID).Return(plainUser, nil)
				noRevisionReads(d)
			},
			check: wantRevisionErr(domain.ErrForbidden),
		},
		{
			name: "a moderator's API key is forbidden",
			cred: apiKeyOf(modUser), slug: "kept",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
				noRevisionReads(d)
			},
			check: wantRevisionErr(domain.ErrForbidden),
		},
		{
			name: "an article the viewer cannot see is not found, even for a moderator",
			cred: session(modUser), slug: "draft",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "draft").Return(revDraft, nil)
				noRevisionReads(d)
			},
			check: wantRevisionErr(domain.ErrNotFound),
		},
		{
			name: "a missing article is not found",
			cred: session(revAuthor), slug: "nope",
			buildStubs: func(d revisionDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "nope").Return(domain.Article{}, domain.ErrNotFound)
				noRevisionReads(d)
			},
			check: wantRevisionErr(domain.ErrNotFound),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newRevisionService(t)
			tc.buildStubs(d)
			l, err := s.List(context.Background(), tc.cred, tc.slug, tc.before, 2)
			tc.check(t, l, err)
		})
	}
}

func wantRevisionErr(target error) func(t *testing.T, _ service.RevisionList, err error) {
	return func(t *testing.T, _ service.RevisionList, err error) {
		t.Helper()
		requireErrorIs(t, err, target)
	}
}

func TestRevisionService_Get(t *testing.T) {
	t.Parallel()
	t.Run("the author reads a version with its body", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.revs.EXPECT().Get(gomock.Any(), revArticle.ID, int32(2)).Return(revisionTwo, nil)
		got, err := s.Get(context.Background(), session(revAuthor), "kept", 2)
		if err != nil || !reflect.DeepEqual(got, revisionTwo) {
			t.Fatalf("get = %+v, %v", got, err)
		}
	})
	t.Run("a version not kept is not found", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.revs.EXPECT().Get(gomock.Any(), revArticle.ID, int32(9)).Return(domain.ArticleRevision{}, domain.ErrNotFound)
		_, err := s.Get(context.Background(), session(revAuthor), "kept", 9)
		requireErrorIs(t, err, domain.ErrNotFound)
	})
	t.Run("another user is forbidden before any revision is read", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.users.EXPECT().GetByID(gomock.Any(), plainUser.ID).Return(plainUser, nil)
		noRevisionReads(d)
		_, err := s.Get(context.Background(), session(plainUser), "kept", 2)
		requireErrorIs(t, err, domain.ErrForbidden)
	})
}

func TestRevisionService_Restore(t *testing.T) {
	t.Parallel()
	t.Run("goes through the edit with the version's content and the expected version", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.revs.EXPECT().Get(gomock.Any(), revArticle.ID, int32(2)).Return(revisionTwo, nil)
		restored := domain.ArticleView{Article: domain.Article{ID: 300, Slug: "kept", Title: "Then", Version: 5}}
		d.editor.EXPECT().Update(gomock.Any(), revAuthor.ID, "kept", gomock.Any()).DoAndReturn(
			func(_ context.Context, _ int64, _ string, in service.UpdateArticleInput) (domain.ArticleView, error) {
				if *in.Title != "Then" || *in.Description != "d" || *in.Body != "old body" || !reflect.DeepEqual(*in.Tags, []string{"go"}) {
					t.Errorf("edit input = %+v, want version 2's content", in)
				}
				if in.Version == nil || *in.Version != 4 {
					t.Errorf("expected version = %v, want 4", in.Version)
				}
				if in.CoverImage != nil {
					t.Error("a restore changed the cover")
				}
				return restored, nil
			})
		got, err := s.Restore(context.Background(), session(revAuthor), "kept", 2, ptr(int32(4)))
		if err != nil || got.Version != 5 {
			t.Fatalf("restore = %+v, %v", got, err)
		}
	})
	t.Run("a stale expected version is the edit's conflict", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.revs.EXPECT().Get(gomock.Any(), revArticle.ID, int32(2)).Return(revisionTwo, nil)
		d.editor.EXPECT().Update(gomock.Any(), revAuthor.ID, "kept", gomock.Any()).Return(domain.ArticleView{}, domain.ErrStaleVersion)
		_, err := s.Restore(context.Background(), session(revAuthor), "kept", 2, ptr(int32(3)))
		requireErrorIs(t, err, domain.ErrStaleVersion)
	})
	t.Run("a missing version is not found and edits nothing", func(t *testing.T) {
		t.Parallel()
		s, d := newRevisionService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
		d.revs.EXPECT().Get(gomock.Any(), revArticle.ID, int32(9)).Return(domain.ArticleRevision{}, domain.ErrNotFound)
		d.editor.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		_, err := s.Restore(context.Background(), session(revAuthor), "kept", 9, nil)
		requireErrorIs(t, err, domain.ErrNotFound)
	})
	for _, c := range []struct {
		name string
		cred domain.Credential
	}{{"a moderator may read but not restore", session(modUser)}, {"another user", session(plainUser)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, d := newRevisionService(t)
			d.articles.EXPECT().GetBySlug(gomock.Any(), "kept").Return(revArticle, nil)
			noRevisionReads(d)
			_, err := s.Restore(context.Background(), c.cred, "kept", 2, nil)
			requireErrorIs(t, err, domain.ErrForbidden)
		})
	}
}
