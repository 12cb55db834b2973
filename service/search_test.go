package service_test

import (
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func newSearchService(t *testing.T) (*service.SearchService, *mocks.MockSearchRepository, *mocks.MockSuggester, articleDeps) {
	t.Helper()
	articles, d := newArticleService(t)
	ctrl := gomock.NewController(t)
	repo, sugg := mocks.NewMockSearchRepository(ctrl), mocks.NewMockSuggester(ctrl)
	return service.NewSearchService(repo, sugg, articles), repo, sugg, d
}

func TestSearchService(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	author := domain.User{ID: 5, Username: "jake"}
	hit := domain.SearchHit{Article: domain.Article{ID: 11, Slug: "s", AuthorID: 5, Status: domain.StatusPublished}, Score: 0.5, Snippet: "x"}
	stubViews := func(d articleDeps) {
		d.users.EXPECT().GetByIDs(a, []int64{5}).Return(map[int64]domain.User{5: author}, nil).AnyTimes()
		d.inter.EXPECT().Counters(a, domain.BizArticle, []int64{11}).Return(map[int64]domain.Counters{11: {Likes: 3}}, nil).AnyTimes()
	}

	t.Run("bad queries never reach the repository", func(t *testing.T) {
		t.Parallel()
		s, repo, _, _ := newSearchService(t)
		repo.EXPECT().Search(a, a).Times(0)
		_, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "  ", Limit: 20})
		requireValidation(t, err, map[string][]string{"q": {"can't be blank"}})
	})

	t.Run("terms, filters and sharing reach the repository; hits become views", func(t *testing.T) {
		t.Parallel()
		s, repo, _, d := newSearchService(t)
		stubViews(d)
		d.users.EXPECT().GetByUsername(a, "jake").Return(author, nil)
		repo.EXPECT().Search(a, service.SearchQuery{
			Terms: domain.SearchTerms{Words: "cache", CJK: []string{"缓存"}}, Tag: "go", AuthorID: 5, Limit: 10, Shared: true,
		}).Return(service.SearchPage{Hits: []domain.SearchHit{hit}, Total: 1}, nil)
		res, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "cache 缓存", Tag: "go", Author: "jake", Limit: 10})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Snippet != "x" || res.Hits[0].View.Counters.Likes != 3 || res.Total != 1 {
			t.Fatalf("%+v, %v", res, err)
		}
	})

	t.Run("counters the search read with its hits are shown as read, not looked up again", func(t *testing.T) {
		t.Parallel()
		s, repo, _, d := newSearchService(t)
		d.users.EXPECT().GetByIDs(a, []int64{5}).Return(map[int64]domain.User{5: author}, nil)
		d.inter.EXPECT().Counters(a, a, a).Times(0)
		repo.EXPECT().Search(a, a).Return(service.SearchPage{Hits: []domain.SearchHit{hit}, Total: 1,
			Counters: map[int64]domain.Counters{11: {Reads: 9, Likes: 4, Collects: 2}}}, nil)
		res, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "cache", Limit: 10})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].View.Counters != (domain.Counters{Reads: 9, Likes: 4, Collects: 2}) {
			t.Fatalf("%+v, %v", res, err)
		}
	})

	t.Run("a signed-in reader's search is not shared; an unknown author finds nothing", func(t *testing.T) {
		t.Parallel()
		s, repo, _, d := newSearchService(t)
		d.users.EXPECT().GetByUsername(a, "nobody").Return(domain.User{}, domain.ErrNotFound)
		repo.EXPECT().Search(a, a).Times(0)
		res, err := s.Articles(t.Context(), 7, service.SearchInput{Q: "x", Author: "nobody", Limit: 10})
		if err != nil || len(res.Hits) != 0 || res.Hits == nil {
			t.Fatalf("%+v, %v", res, err)
		}
	})

	t.Run("nothing found: the suggestion is searched and said so", func(t *testing.T) {
		t.Parallel()
		s, repo, sugg, d := newSearchService(t)
		stubViews(d)
		d.follows.EXPECT().FollowingAmong(a, a, a).Return(map[int64]bool{}, nil).AnyTimes()
		d.inter.EXPECT().Liked(a, a, a, a).Return(map[int64]bool{}, nil).AnyTimes()
		d.inter.EXPECT().Collected(a, a, a, a).Return(map[int64]bool{}, nil).AnyTimes()
		gomock.InOrder(
			repo.EXPECT().Search(a, gomock.Cond(func(q service.SearchQuery) bool { return q.Terms.Words == `"Dargon" -eggs or ogre` && !q.Shared })).
				Return(service.SearchPage{}, nil),
			sugg.EXPECT().Suggest(a, []string{"dargon", "eggs", "ogre"}).Return(map[string]string{"dargon": "dragon"}, nil),
			repo.EXPECT().Search(a, gomock.Cond(func(q service.SearchQuery) bool { return q.Terms.Words == `"dragon" -eggs or ogre` })).
				Return(service.SearchPage{Hits: []domain.SearchHit{hit}, Total: 1}, nil),
		)
		res, err := s.Articles(t.Context(), 7, service.SearchInput{Q: `"Dargon" -eggs or ogre`, Limit: 10})
		if err != nil || res.Suggestion != `"dragon" -eggs or ogre` || !res.SuggestionApplied || len(res.Hits) != 1 {
			t.Fatalf("%+v, %v", res, err)
		}
	})

	t.Run("suggest=false reports the suggestion only; later pages and no corrections ask nothing more", func(t *testing.T) {
		t.Parallel()
		s, repo, sugg, _ := newSearchService(t)
		repo.EXPECT().Search(a, a).Return(service.SearchPage{}, nil).Times(3)
		sugg.EXPECT().Suggest(a, []string{"dargon"}).Return(map[string]string{"dargon": "dragon"}, nil)
		res, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "dargon", Limit: 10, NoApply: true})
		if err != nil || res.Suggestion != "dragon" || res.SuggestionApplied || len(res.Hits) != 0 {
			t.Fatalf("%+v, %v", res, err)
		}
		// A later page: no suggestion is looked for.
		after := &domain.SearchCursor{ID: 1}
		if res, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "dargon", Limit: 10, After: after}); err != nil || res.Suggestion != "" {
			t.Fatalf("%+v, %v", res, err)
		}
		// Only CJK and operators: no word to correct, the suggester is not asked.
		if res, err := s.Articles(t.Context(), 0, service.SearchInput{Q: "缓存 or -", Limit: 10}); err != nil || res.Suggestion != "" {
			t.Fatalf("%+v, %v", res, err)
		}
	})
}
