package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

const (
	frontEnd = "https://app.example.com"
	stranger = "https://evil.example.net"
)

// corsBundle is a router built with a CORS configuration, with the mocks behind it.
type corsBundle struct {
	users    *mocks.MockUserService
	articles *mocks.MockArticleService
	router   http.Handler
}

func setupCORS(t *testing.T, cfg web.CORSConfig) corsBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	users := mocks.NewMockUserService(ctrl)
	articles := mocks.NewMockArticleService(ctrl)
	logger := slog.New(slog.DiscardHandler)
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: 1 << 20, CORS: cfg}, logger, web.Handlers{
		Auth:     web.NewAuthenticator(users, logger),
		Users:    web.NewUserHandler(users, logger),
		Profiles: web.NewProfileHandler(mocks.NewMockProfileService(ctrl), logger),
		Articles: web.NewArticleHandler(articles, nil, logger),
		Comments: web.NewCommentHandler(mocks.NewMockCommentService(ctrl), logger),
	})
	return corsBundle{users: users, articles: articles, router: router}
}

// headerHas reports whether the comma-separated header value lists item (case-insensitively).
func headerHas(value, item string) bool {
	for _, v := range strings.Split(value, ",") {
		if strings.EqualFold(strings.TrimSpace(v), item) {
			return true
		}
	}
	return false
}

func requireNoCORS(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	for _, h := range []string{
		"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
		"Access-Control-Expose-Headers", "Access-Control-Max-Age", "Access-Control-Allow-Credentials",
	} {
		if v := rec.Header().Get(h); v != "" {
			t.Errorf("%s = %q, want none", h, v)
		}
	}
}

func requireVaryOrigin(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	for _, v := range rec.Header().Values("Vary") {
		if headerHas(v, "Origin") {
			return
		}
	}
	t.Errorf("Vary = %q, want it to include Origin", rec.Header().Values("Vary"))
}

// requirePreflightOK fails unless rec is a successful preflight answer for origin.
func requirePreflightOK(t *testing.T, rec *httptest.ResponseRecorder, origin string) {
	t.Helper()
	requireNoContent(t, rec)
	h := rec.Header()
	if got := h.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, origin)
	}
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		if !headerHas(h.Get("Access-Control-Allow-Methods"), m) {
			t.Errorf("Access-Control-Allow-Methods = %q, want it to include %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, hd := range []string{"Authorization", "Content-Type"} {
		if !headerHas(h.Get("Access-Control-Allow-Headers"), hd) {
			t.Errorf("Access-Control-Allow-Headers = %q, want it to include %s", h.Get("Access-Control-Allow-Headers"), hd)
		}
	}
	if h.Get("Access-Control-Max-Age") == "" {
		t.Error("preflight without Access-Control-Max-Age: browsers would repeat it before every request")
	}
	if h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("Access-Control-Allow-Credentials = %q: the API uses tokens, not cookies", h.Get("Access-Control-Allow-Credentials"))
	}
	requireVaryOrigin(t, rec)
}

func preflight(path, origin, method string) *http.Request {
	return newRequest(http.MethodOptions, path, "", map[string]string{
		"Origin":                         origin,
		"Access-Control-Request-Method":  method,
		"Access-Control-Request-Headers": "authorization,content-type",
	})
}

func TestCORS(t *testing.T) {
	t.Parallel()
	listed := web.CORSConfig{Origins: []string{"http://localhost:3000", frontEnd}}
	// untouched proves a request was answered without authentication or any article call.
	untouched := func(b corsBundle) {
		b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
		b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		b.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		b.articles.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		b.articles.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	tests := []struct {
		name          string
		cfg           web.CORSConfig
		req           *http.Request
		buildStubs    func(b corsBundle)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name:       "preflight from a listed origin",
			cfg:        listed,
			req:        preflight("/api/articles", frontEnd, "POST"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requirePreflightOK(t, rec, frontEnd)
			},
		},
		{
			name:       "preflight for a route with a parameter, before a DELETE with a token",
			cfg:        listed,
			req:        preflight("/api/articles/how-to-train-your-dragon", "http://localhost:3000", "DELETE"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requirePreflightOK(t, rec, "http://localhost:3000")
			},
		},
		{
			name:       "AllowAll echoes any origin",
			cfg:        web.CORSConfig{AllowAll: true},
			req:        preflight("/api/articles", "https://anything.example.org:8443", "PUT"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requirePreflightOK(t, rec, "https://anything.example.org:8443")
				if got := rec.Header().Get("Access-Control-Allow-Origin"); got == "*" {
					t.Error("AllowAll answered *, want the origin echoed")
				}
			},
		},
		{
			name:       "preflight from an origin not listed gets no CORS headers",
			cfg:        listed,
			req:        preflight("/api/articles", stranger, "POST"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireNoCORS(t, rec)
				if rec.Code == http.StatusNoContent {
					t.Error("a refused preflight was answered like an accepted one (204)")
				}
				requireVaryOrigin(t, rec)
			},
		},
		{
			name:       "origins match exactly: scheme, host and port",
			cfg:        listed,
			req:        preflight("/api/articles", "http://app.example.com", "POST"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireNoCORS(t, rec)
			},
		},
		{
			name:       "origins match exactly: no suffix match",
			cfg:        listed,
			req:        preflight("/api/articles", frontEnd+".evil.example.net", "POST"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireNoCORS(t, rec)
			},
		},
		{
			name:       "an empty configuration allows no origin",
			cfg:        web.CORSConfig{},
			req:        preflight("/api/articles", frontEnd, "POST"),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireNoCORS(t, rec)
			},
		},
		{
			name: "a simple GET from a listed origin is marked readable",
			cfg:  listed,
			req:  newRequest(http.MethodGet, "/api/tags", "", map[string]string{"Origin": frontEnd}),
			buildStubs: func(b corsBundle) {
				b.articles.EXPECT().Tags(gomock.Any()).Return([]string{"go"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["go"]}`)
				if got := rec.Header().Get("Access-Control-Allow-Origin"); got != frontEnd {
					t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, frontEnd)
				}
				requireVaryOrigin(t, rec)
				if !headerHas(rec.Header().Get("Access-Control-Expose-Headers"), "Retry-After") {
					t.Errorf("Access-Control-Expose-Headers = %q, want it to include Retry-After", rec.Header().Get("Access-Control-Expose-Headers"))
				}
				if rec.Header().Get("Access-Control-Allow-Methods") != "" {
					t.Error("a simple request got preflight headers")
				}
			},
		},
		{
			name: "an error from a listed origin is readable too",
			cfg:  listed,
			req:  newRequest(http.MethodPost, "/api/articles", `{"article":{}}`, map[string]string{"Origin": frontEnd}),
			buildStubs: func(b corsBundle) {
				untouched(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireMissingToken(t, rec)
				if got := rec.Header().Get("Access-Control-Allow-Origin"); got != frontEnd {
					t.Errorf("Access-Control-Allow-Origin = %q on a 401, want %q", got, frontEnd)
				}
			},
		},
		{
			name: "a GET from an origin not listed is served without CORS headers",
			cfg:  listed,
			req:  newRequest(http.MethodGet, "/api/tags", "", map[string]string{"Origin": stranger}),
			buildStubs: func(b corsBundle) {
				b.articles.EXPECT().Tags(gomock.Any()).Return([]string{"go"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["go"]}`)
				requireNoCORS(t, rec)
				requireVaryOrigin(t, rec)
			},
		},
		{
			name: "no Origin, no CORS headers",
			cfg:  web.CORSConfig{AllowAll: true},
			req:  newRequest(http.MethodGet, "/api/tags", "", nil),
			buildStubs: func(b corsBundle) {
				b.articles.EXPECT().Tags(gomock.Any()).Return(nil, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":[]}`)
				requireNoCORS(t, rec)
			},
		},
		{
			name:       "an OPTIONS without Access-Control-Request-Method is not a preflight",
			cfg:        listed,
			req:        newRequest(http.MethodOptions, "/api/articles", "", map[string]string{"Origin": frontEnd}),
			buildStubs: untouched,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code == http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Methods") != "" {
					t.Errorf("status %d, Allow-Methods %q: answered as a preflight", rec.Code, rec.Header().Get("Access-Control-Allow-Methods"))
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupCORS(t, tc.cfg)
			tc.buildStubs(b)
			rec := httptest.NewRecorder()
			b.router.ServeHTTP(rec, tc.req)
			tc.checkResponse(t, rec)
		})
	}
}
