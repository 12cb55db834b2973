package web_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type keptEnv struct {
	articles *mocks.MockArticleService
	users    *mocks.MockUserService
	changes  *fakeChanges
	router   http.Handler
}

func setupKept(t *testing.T) keptEnv {
	t.Helper()
	ctrl := gomock.NewController(t)
	e := keptEnv{articles: mocks.NewMockArticleService(ctrl), users: mocks.NewMockUserService(ctrl), changes: &fakeChanges{}}
	logger := slog.New(slog.DiscardHandler)
	e.router = web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth: web.NewAuthenticator(e.users, logger), Articles: web.NewArticleHandler(e.articles, e.changes, logger),
	})
	return e
}

// TestListMemo: an anonymous first page is built once and then written as kept while nothing
// changed and its articles' counts are the same; a change, new counts or changes not followed
// build it again; signed-in readers, deeper pages and the favorited filter are always built.
func TestListMemo(t *testing.T) {
	t.Parallel()
	page := service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 2}
	counts := map[int64]domain.Counters{dragon.ID: dragon.Counters, note.ID: note.Counters}
	first := domain.Page{Limit: 20}
	want := listJSON(publicListsCarryBodies, 2, "")

	t.Run("kept while nothing changed", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{Page: first}).Return(page, nil).Times(1)
		e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID, note.ID}).Return(counts, nil).Times(3)
		for range 4 {
			requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
		}
	})

	t.Run("a change anywhere builds it again", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(page, nil).Times(2)
		e.articles.EXPECT().Counters(gomock.Any(), gomock.Any()).Return(counts, nil).Times(1)
		requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
		e.changes.v.Add(1)
		requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
		requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
	})

	t.Run("new counts build it again", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		liked := dragon
		liked.Counters.Likes++
		gomock.InOrder(
			e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(page, nil),
			e.articles.EXPECT().Counters(gomock.Any(), gomock.Any()).Return(map[int64]domain.Counters{dragon.ID: liked.Counters, note.ID: note.Counters}, nil),
			e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(service.ArticleList{Articles: []domain.ArticleView{liked, note}, Total: 2}, nil),
		)
		requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
		rec := get(t, e.router, "/api/articles")
		requireStatus(t, rec, http.StatusOK)
		if got := decodeList(t, rec); got[0]["favoritesCount"] != float64(liked.Counters.Likes) {
			t.Fatalf("favoritesCount %v after a like, want %d", got[0]["favoritesCount"], liked.Counters.Likes)
		}
	})

	t.Run("changes not followed: built every time", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.changes.off.Store(true)
		e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(page, nil).Times(2)
		e.articles.EXPECT().Counters(gomock.Any(), gomock.Any()).Times(0)
		for range 2 {
			requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
		}
	})

	t.Run("a failed build is not kept", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		gomock.InOrder(
			e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(service.ArticleList{}, errInternal),
			e.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(page, nil),
		)
		requireInternalError(t, get(t, e.router, "/api/articles"))
		requireJSON(t, get(t, e.router, "/api/articles"), http.StatusOK, want)
	})

	t.Run("tags, authors and limits are kept apart", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		one := service.ArticleList{Articles: []domain.ArticleView{dragon}, Total: 1}
		e.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{Tag: "dragons", Page: first}).Return(one, nil)
		e.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{Author: "celeb", Page: first}).Return(page, nil)
		e.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{Page: domain.Page{Limit: 1}}).Return(one, nil)
		e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID, note.ID}).Return(counts, nil) // the last request
		for _, target := range []string{"/api/articles?tag=dragons", "/api/articles?author=celeb", "/api/articles?limit=1"} {
			requireStatus(t, get(t, e.router, target), http.StatusOK)
		}
		if n := len(decodeList(t, get(t, e.router, "/api/articles?author=celeb"))); n != 2 { // kept: counts checked
			t.Fatalf("author page from the memo has %d articles, want 2", n)
		}
	})
}

// TestListMemo_NeverFor: who and what the memo never answers (each request reaches List).
func TestListMemo_NeverFor(t *testing.T) {
	t.Parallel()
	page := service.ArticleList{Articles: []domain.ArticleView{dragon}, Total: 1}
	for _, c := range []struct {
		name, target string
		signedIn     bool
	}{
		{name: "a signed-in reader", target: "/api/articles", signedIn: true},
		{name: "an offset page", target: "/api/articles?offset=20"},
		{name: "a cursor page", target: "/api/articles?cursor=" + base64URL("1767225600123456:42")},
		{name: "the favorited filter", target: "/api/articles?favorited=jake"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setupKept(t)
			headers := map[string]string{}
			if c.signedIn {
				headers = authHeader
				e.users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).Times(2)
			}
			e.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Return(page, nil).Times(2)
			e.articles.EXPECT().Counters(gomock.Any(), gomock.Any()).Times(0)
			for range 2 {
				rec := httptest.NewRecorder()
				e.router.ServeHTTP(rec, newRequest(http.MethodGet, c.target, "", headers))
				requireStatus(t, rec, http.StatusOK)
			}
		})
	}
}

// decodeList returns the articles of a list answer.
func decodeList(t *testing.T, rec *httptest.ResponseRecorder) []map[string]any {
	t.Helper()
	var body struct{ Articles []map[string]any }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("list answer %s: %v", rec.Body, err)
	}
	return body.Articles
}

// TestKeptArticle: an anonymous read of a public article is read once and then written as kept
// while nothing changed and its counts are the same, each read still recorded; new counts or a
// change read it again; a missing article is not kept; signed-in readers always read it.
func TestKeptArticle(t *testing.T) {
	t.Parallel()
	const path = "/api/articles/how-to-train-your-dragon"
	want := `{"article":` + one(dragonFields, "It takes a Jacobian") + `}` // the signed-in reader's
	anonymousFields := strings.NewReplacer(`"favorited":true`, `"favorited":false`, `"following":true`, `"following":false`).Replace(dragonFields)
	wantAnonymous := `{"article":` + one(anonymousFields, "It takes a Jacobian") + `}`
	anonymous := dragon // what Get gives an anonymous reader: no flags
	anonymous.Favorited, anonymous.Author.Following = false, false
	counts := map[int64]domain.Counters{dragon.ID: dragon.Counters}

	t.Run("kept, every read recorded", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.articles.EXPECT().Get(gomock.Any(), int64(0), dragon.Slug).Return(anonymous, nil).Times(1) // records the first read
		e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID}).Return(counts, nil).Times(3)
		e.articles.EXPECT().RecordRead(int64(0), dragon.ID).Times(3)
		for range 4 {
			requireJSON(t, get(t, e.router, path), http.StatusOK, wantAnonymous)
		}
	})

	t.Run("new counts or a change read it again", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		read := anonymous
		read.Counters.Reads++
		gomock.InOrder(
			e.articles.EXPECT().Get(gomock.Any(), int64(0), dragon.Slug).Return(anonymous, nil),
			e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID}).Return(map[int64]domain.Counters{dragon.ID: read.Counters}, nil),
			e.articles.EXPECT().Get(gomock.Any(), int64(0), dragon.Slug).Return(read, nil),
			e.articles.EXPECT().Get(gomock.Any(), int64(0), dragon.Slug).Return(read, nil), // after the change
		)
		requireJSON(t, get(t, e.router, path), http.StatusOK, wantAnonymous)
		if got := decodeArticle(t, get(t, e.router, path)); got["readsCount"] != float64(read.Counters.Reads) {
			t.Fatalf("readsCount %v, want %d", got["readsCount"], read.Counters.Reads)
		}
		e.changes.v.Add(1)
		requireStatus(t, get(t, e.router, path), http.StatusOK)
	})

	t.Run("an author's draft is not kept", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).Times(2)
		e.articles.EXPECT().Get(gomock.Any(), authedID, note.Slug).Return(note, nil).Times(2)
		e.articles.EXPECT().Counters(gomock.Any(), gomock.Any()).Times(0)
		for range 2 {
			rec := httptest.NewRecorder()
			e.router.ServeHTTP(rec, newRequest(http.MethodGet, "/api/articles/note", "", authHeader))
			requireJSON(t, rec, http.StatusOK, `{"article":`+one(noteFields, "draft body")+`}`)
		}
	})

	t.Run("a missing article is not kept", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		e.articles.EXPECT().Get(gomock.Any(), int64(0), "gone").Return(domain.ArticleView{}, domain.ErrNotFound).Times(2)
		e.articles.EXPECT().RecordRead(gomock.Any(), gomock.Any()).Times(0)
		for range 2 {
			requireStatus(t, get(t, e.router, "/api/articles/gone"), http.StatusNotFound)
		}
	})

	t.Run("a signed-in reader gets the kept answer with their flags", func(t *testing.T) {
		t.Parallel()
		e := setupKept(t)
		signedIn := func() *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			e.router.ServeHTTP(rec, newRequest(http.MethodGet, path, "", authHeader))
			return rec
		}
		e.users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).Times(3)
		gomock.InOrder(
			// Nothing kept yet: read as usual, and kept without this reader's flags.
			e.articles.EXPECT().Get(gomock.Any(), authedID, dragon.Slug).Return(dragon, nil),
			e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID}).Return(counts, nil),
			e.articles.EXPECT().FlagsOf(gomock.Any(), authedID, dragon.ID, dragon.AuthorID).Return(service.ViewerFlags{Favorited: true, Following: true}, nil),
			e.articles.EXPECT().RecordRead(authedID, dragon.ID),
			e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID}).Return(counts, nil),
			e.articles.EXPECT().RecordRead(int64(0), dragon.ID),
			e.articles.EXPECT().Counters(gomock.Any(), []int64{dragon.ID}).Return(counts, nil),
			e.articles.EXPECT().FlagsOf(gomock.Any(), authedID, dragon.ID, dragon.AuthorID).Return(service.ViewerFlags{}, errInternal),
			e.articles.EXPECT().Get(gomock.Any(), authedID, dragon.Slug).Return(dragon, nil), // the flags failed: read as usual
		)
		requireJSON(t, signedIn(), http.StatusOK, want)
		requireJSON(t, signedIn(), http.StatusOK, want) // from the kept answer: favorited, author followed
		requireJSON(t, get(t, e.router, path), http.StatusOK, wantAnonymous)
		requireJSON(t, signedIn(), http.StatusOK, want)
	})
}

// decodeArticle returns the article of a single-article answer.
func decodeArticle(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct{ Article map[string]any }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("article answer %s: %v", rec.Body, err)
	}
	return body.Article
}
