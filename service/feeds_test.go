package service_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func TestFeedService(t *testing.T) {
	t.Parallel()
	links, err := domain.NewPublicLinks("https://blog.example", "{public}/article/{slug}")
	if err != nil {
		t.Fatal(err)
	}
	one, two := articleBy(1, writer.ID, domain.StatusPublished), articleBy(2, critic.ID, domain.StatusPublished)
	summary := func(a domain.Article) domain.Article { a.Body, a.BodyHTML = "", ""; return a }
	first := domain.Page{Limit: domain.FeedSize}
	page := service.ArticlePage{Articles: []domain.Article{summary(one), summary(two)}, Total: 2}
	full := func(arts ...domain.Article) map[string]domain.Article {
		m := map[string]domain.Article{}
		for _, a := range arts {
			m[a.Slug] = a
		}
		return m
	}
	authors := map[int64]domain.User{writer.ID: writer, critic.ID: critic}
	a := gomock.Any()
	hydrate := func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers, found map[string]domain.Article) {
		arts.EXPECT().GetBySlugs(a, []string{one.Slug, two.Slug}).Return(found, nil)
		users.EXPECT().GetByIDs(a, gomock.InAnyOrder([]int64{writer.ID, critic.ID})).Return(authors, nil)
	}
	tests := []struct {
		name       string
		q          service.FeedQuery
		buildStubs func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers)
		check      func(t *testing.T, f domain.Feed, err error)
	}{
		{
			name: "the global feed reads the first list page and the full articles",
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				arts.EXPECT().ListPublished(a, service.ArticleQuery{Page: first}).Return(page, nil)
				hydrate(arts, users, full(one, two))
			},
			check: func(t *testing.T, f domain.Feed, err error) {
				if err != nil || len(f.Entries) != 2 || f.Entries[0].Article.BodyHTML != one.BodyHTML || f.Entries[1].Author != critic.Username ||
					f.Entries[0].Link != "https://blog.example/article/"+one.Slug || f.Stamp == 0 {
					t.Fatalf("feed %+v, %v", f, err)
				}
			},
		},
		{
			name: "an article gone or no longer public since the page was read is left out",
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				arts.EXPECT().ListPublished(a, service.ArticleQuery{Page: first}).Return(page, nil)
				hidden := two
				hidden.Moderation.Hidden = true
				hydrate(arts, users, full(hidden))
			},
			check: func(t *testing.T, f domain.Feed, err error) {
				if err != nil || len(f.Entries) != 0 {
					t.Fatalf("feed %+v, %v", f, err)
				}
			},
		},
		{
			name: "an author's feed is the first page of their published articles",
			q:    service.FeedQuery{Author: writer.Username},
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				users.EXPECT().GetByUsername(a, writer.Username).Return(writer, nil)
				arts.EXPECT().ListByAuthor(a, writer.ID, domain.StatusPublished, first).Return(page, nil)
				hydrate(arts, users, full(one, two))
			},
			check: func(t *testing.T, f domain.Feed, err error) {
				if err != nil || len(f.Entries) != 2 || f.Link != "https://blog.example/profile/"+writer.Username {
					t.Fatalf("feed %+v, %v", f, err)
				}
			},
		},
		{
			name: "an unknown author is not found",
			q:    service.FeedQuery{Author: "ghost"},
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				users.EXPECT().GetByUsername(a, "ghost").Return(domain.User{}, domain.ErrNotFound)
				arts.EXPECT().ListByAuthor(a, a, a, a).Times(0)
			},
			check: wantFeedErr(domain.ErrNotFound),
		},
		{
			name: "a tag no published article carries is not found",
			q:    service.FeedQuery{Tag: "nothing"},
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				arts.EXPECT().ListPublished(a, service.ArticleQuery{Tag: "nothing", Page: first}).Return(service.ArticlePage{}, nil)
				arts.EXPECT().GetBySlugs(a, a).Times(0)
			},
			check: wantFeedErr(domain.ErrNotFound),
		},
		{
			name: "names that cannot exist never reach storage",
			q:    service.FeedQuery{Tag: "bad\x00tag"},
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				arts.EXPECT().ListPublished(a, a).Times(0)
			},
			check: wantFeedErr(domain.ErrNotFound),
		},
		{
			name: "a storage failure is returned",
			buildStubs: func(arts *mocks.MockFeedArticles, users *mocks.MockFeedUsers) {
				arts.EXPECT().ListPublished(a, a).Return(service.ArticlePage{}, errBoom)
			},
			check: wantFeedErr(errBoom),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			arts, users := mocks.NewMockFeedArticles(ctrl), mocks.NewMockFeedUsers(ctrl)
			tc.buildStubs(arts, users)
			f, err := service.NewFeedService(arts, users, links).Feed(context.Background(), tc.q)
			tc.check(t, f, err)
		})
	}
}

// TestFeedStampFollowsTheContent: the stamp changes with an edit (its version), a rename of an
// author, and the set of articles; it stays when nothing shown changed.
func TestFeedStampFollowsTheContent(t *testing.T) {
	t.Parallel()
	links, _ := domain.NewPublicLinks("https://blog.example", "{public}/article/{slug}")
	base := articleBy(1, writer.ID, domain.StatusPublished)
	stampOf := func(a domain.Article, author domain.User) uint64 {
		ctrl := gomock.NewController(t)
		arts, users := mocks.NewMockFeedArticles(ctrl), mocks.NewMockFeedUsers(ctrl)
		arts.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Return(service.ArticlePage{Articles: []domain.Article{a}}, nil)
		arts.EXPECT().GetBySlugs(gomock.Any(), gomock.Any()).Return(map[string]domain.Article{a.Slug: a}, nil)
		users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(map[int64]domain.User{author.ID: author}, nil)
		f, err := service.NewFeedService(arts, users, links).Feed(context.Background(), service.FeedQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return f.Stamp
	}
	edited := base
	edited.Version++
	renamed := writer
	renamed.Username = "renamed"
	other := base
	other.ID, other.Slug = 9, "other"
	s := stampOf(base, writer)
	if s != stampOf(base, writer) {
		t.Fatal("the same content gave two stamps")
	}
	for name, got := range map[string]uint64{"an edit": stampOf(edited, writer), "a rename": stampOf(base, renamed), "another article": stampOf(other, writer)} {
		if got == s {
			t.Errorf("%s kept the stamp", name)
		}
	}
}

var errBoom = errors.New("boom")

func wantFeedErr(target error) func(t *testing.T, f domain.Feed, err error) {
	return func(t *testing.T, _ domain.Feed, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Fatalf("err = %v, want %v", err, target)
		}
	}
}
