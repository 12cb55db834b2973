package web_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// TestTagListSortedInEveryArticleAnswer: an article stored before tags were sorted on write (in
// PostgreSQL or in a cache entry) has its tags in the order they were written; every answer that
// shows an article lists them alphabetically, and the view it was given is left as it was (an
// in-process cache may share it).
func TestTagListSortedInEveryArticleAnswer(t *testing.T) {
	t.Parallel()
	legacyTags := []string{"training", "dragons", "Go"}
	want := []string{"Go", "dragons", "training"}
	legacy := dragon
	legacy.Tags = slices.Clone(legacyTags)
	list := service.ArticleList{Articles: []domain.ArticleView{legacy, legacy}, Total: 2}

	ctrl := gomock.NewController(t)
	users := mocks.NewMockUserService(ctrl)
	articles := mocks.NewMockArticleService(ctrl)
	cols := mocks.NewMockCollectionService(ctrl)
	history := mocks.NewMockHistoryService(ctrl)
	hot := mocks.NewMockHotService(ctrl)
	a := gomock.Any()
	users.EXPECT().Authenticate(a, "TOKEN").Return(domain.Credential{UserID: authedID, SessionID: "sid"}, nil).AnyTimes()
	articles.EXPECT().Get(a, a, a).Return(legacy, nil).AnyTimes()
	articles.EXPECT().Create(a, a, a).Return(legacy, nil).AnyTimes()
	articles.EXPECT().Update(a, a, a, a).Return(legacy, nil).AnyTimes()
	articles.EXPECT().Favorite(a, a, a).Return(legacy, nil).AnyTimes()
	articles.EXPECT().List(a, a, a).Return(list, nil).AnyTimes()
	articles.EXPECT().Feed(a, a, a).Return(list, nil).AnyTimes()
	articles.EXPECT().Mine(a, a, a, a).Return(list, nil).AnyTimes()
	cols.EXPECT().Articles(a, a, a, a).Return(list, nil).AnyTimes()
	cols.EXPECT().Collect(a, a, a, a).Return(legacy, nil).AnyTimes()
	history.EXPECT().History(a, a, a).Return(list, nil).AnyTimes()
	hot.EXPECT().Hot(a, a, a).Return([]service.HotView{{ArticleView: legacy, Score: 1.5}}, nil).AnyTimes()

	logger := slog.New(slog.DiscardHandler)
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth:        web.NewAuthenticator(users, logger),
		Users:       web.NewUserHandler(users, logger),
		Profiles:    web.NewProfileHandler(mocks.NewMockProfileService(ctrl), logger),
		Articles:    web.NewArticleHandler(articles, nil, logger),
		Comments:    web.NewCommentHandler(mocks.NewMockCommentService(ctrl), logger),
		Collections: web.NewCollectionHandler(cols, history, logger),
		Hot:         web.NewHotHandler(hot, logger),
	})
	b := bundle{router: router}

	const article = `{"article":{"title":"t","description":"d","body":"b","tagList":["training","dragons","Go"]}}`
	for _, r := range []struct{ method, target, body string }{
		{http.MethodGet, "/api/articles/how-to-train-your-dragon", ""},
		{http.MethodPost, "/api/articles", article},
		{http.MethodPut, "/api/articles/how-to-train-your-dragon", `{"article":{"tagList":["training","dragons","Go"]}}`},
		{http.MethodPost, "/api/articles/how-to-train-your-dragon/favorite", ""},
		{http.MethodPost, "/api/articles/how-to-train-your-dragon/collect", `{"collectionId":31}`},
		{http.MethodGet, "/api/articles", ""},
		{http.MethodGet, "/api/articles/feed", ""},
		{http.MethodGet, "/api/articles/hot", ""},
		{http.MethodGet, "/api/user/articles", ""},
		{http.MethodGet, "/api/collections/31/articles", ""},
		{http.MethodGet, "/api/user/history", ""},
	} {
		t.Run(r.method+" "+r.target, func(t *testing.T) {
			rec := b.do(newRequest(r.method, r.target, r.body, authHeader))
			if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var got struct {
				Article  *struct{ TagList []string }
				Articles []struct{ TagList []string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var lists [][]string
			if got.Article != nil {
				lists = append(lists, got.Article.TagList)
			}
			for _, a := range got.Articles {
				lists = append(lists, a.TagList)
			}
			if len(lists) == 0 {
				t.Fatalf("no article in %s", rec.Body)
			}
			for _, tags := range lists {
				if !slices.Equal(tags, want) {
					t.Errorf("tagList %q, want %q", tags, want)
				}
			}
		})
	}
	if !slices.Equal(legacy.Tags, legacyTags) {
		t.Errorf("rendering sorted the service's slice in place: %q", legacy.Tags)
	}
}
