package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
)

// writeLog is a web.WriteRecorder that remembers whom it was told wrote, and whether the
// answer had started leaving when it was told (it must not have).
type writeLog struct {
	mu      sync.Mutex
	users   []int64
	late    bool
	started func() bool // reports whether the answer has started; nil: never asked
}

func (l *writeLog) Wrote(_ context.Context, userID int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users = append(l.users, userID)
	if l.started != nil && l.started() {
		l.late = true
	}
	return nil
}

// With read replicas in use (Handlers.Writes set), a signed-in request that writes and succeeds
// has its write recorded before the first byte of its answer, and reads only the primary; a read
// names its reader for the routing; failures, reads and anonymous requests record nothing.
func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	cases := []struct {
		name       string
		method     string
		path       string
		auth       bool
		buildStubs func(m allMocks)
		wantStatus int
		wantMarked bool
	}{
		{
			name: "a signed-in write is recorded before its answer", method: http.MethodPost, path: "/api/articles/" + slug + "/favorite", auth: true,
			buildStubs: func(m allMocks) {
				m.articles.EXPECT().Favorite(gomock.Any(), authedID, slug).DoAndReturn(func(ctx context.Context, _ int64, _ string) (domain.ArticleView, error) {
					if !domain.PrimaryReadsOnly(ctx) {
						t.Error("a request that writes may read a replica")
					}
					return dragon, nil
				})
			},
			wantStatus: http.StatusOK, wantMarked: true,
		},
		{
			name: "a refused write is not recorded", method: http.MethodPost, path: "/api/articles/" + slug + "/favorite", auth: true,
			buildStubs: func(m allMocks) {
				m.articles.EXPECT().Favorite(gomock.Any(), authedID, slug).Return(domain.ArticleView{}, domain.ErrNotFound)
			},
			wantStatus: http.StatusNotFound,
		},
		{
			name: "a signed-in read names its reader and records nothing", method: http.MethodGet, path: "/api/articles/" + slug, auth: true,
			buildStubs: func(m allMocks) {
				m.articles.EXPECT().Get(gomock.Any(), authedID, slug).DoAndReturn(func(ctx context.Context, _ int64, _ string) (domain.ArticleView, error) {
					if domain.ReaderOf(ctx) != authedID || domain.PrimaryReadsOnly(ctx) {
						t.Errorf("reader %d, primary only %v: want the signed-in user, any copy", domain.ReaderOf(ctx), domain.PrimaryReadsOnly(ctx))
					}
					return dragon, nil
				})
			},
			wantStatus: http.StatusOK,
		},
		{
			name: "an anonymous read has no reader", method: http.MethodGet, path: "/api/articles/" + slug,
			buildStubs: func(m allMocks) {
				m.articles.EXPECT().Get(gomock.Any(), int64(0), slug).DoAndReturn(func(ctx context.Context, _ int64, _ string) (domain.ArticleView, error) {
					if domain.ReaderOf(ctx) != 0 {
						t.Errorf("anonymous read names reader %d", domain.ReaderOf(ctx))
					}
					return dragon, nil
				})
			},
			wantStatus: http.StatusOK,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newAllMocks(gomock.NewController(t))
			if tc.auth {
				expectAuth(m.users)
			}
			tc.buildStubs(m)
			log := &writeLog{}
			h := m.handlers(slog.New(slog.DiscardHandler))
			h.Writes = log
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, slog.New(slog.DiscardHandler), h)
			rec := httptest.NewRecorder()
			log.started = func() bool { return rec.Body.Len() > 0 || rec.Flushed }
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.auth {
				req.Header.Set("Authorization", "Token TOKEN")
			}
			router.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			marked := len(log.users) == 1 && log.users[0] == authedID
			if marked != tc.wantMarked || (!tc.wantMarked && len(log.users) > 0) {
				t.Fatalf("recorded writes of %v, want a mark: %v", log.users, tc.wantMarked)
			}
			if log.late {
				t.Fatal("the write was recorded after its answer had started")
			}
		})
	}
}
