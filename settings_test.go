package inkwell

import (
	"errors"
	"flag"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

// TestDefaultAccessTokenOutlastsADay: with the default settings, the access token of a fresh
// login is still accepted 23 hours later (a RealWorld front end never refreshes), and is refused
// once the lifetime and the token check's clock skew are over. The token is issued and checked by
// the real JWT manager and session service on an injected clock; only storage is mocked.
func TestDefaultAccessTokenOutlastsADay(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := ioc.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg.Auth.JWTSecret = "0123456789abcdef0123456789abcdef" // Validate would take it from the dev file

	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var offset atomic.Int64 // nanoseconds since start
	now := func() time.Time { return start.Add(time.Duration(offset.Load())) }

	tokens, err := auth.NewJWTManager(NewJWTConfig(cfg.Auth), now)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := gomock.NewController(t)
	repo := mocks.NewMockSessionRepository(ctrl)
	revoked := mocks.NewMockRevocationCache(ctrl)
	repo.EXPECT().Create(gomock.Any(), gomock.Any(), int64(7), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, nil)
	// Not revoked, and the cache holds its lease: every check answers from Redis.
	revoked.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Return(false, true, nil).AnyTimes()
	sessions := service.NewSessionService(repo, revoked, tokens, mocks.NewMockAPIKeyRepository(ctrl), NewSessionConfig(cfg.Auth),
		now, time.After, discard)

	login, err := sessions.Start(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after  time.Duration
		wantOK bool
	}{
		{time.Minute, true},
		{16 * time.Minute, true}, // the old 15-minute default signed RealWorld users out here
		{23 * time.Hour, true},
		{cfg.Auth.JWTLifetime + time.Minute, false},
	} {
		offset.Store(int64(tc.after))
		cred, err := sessions.Authenticate(t.Context(), login.Access)
		switch {
		case tc.wantOK && (err != nil || cred.UserID != 7):
			t.Errorf("%s after login: %+v, %v; want user 7 accepted", tc.after, cred, err)
		case !tc.wantOK && !errors.Is(err, domain.ErrUnauthorized):
			t.Errorf("%s after login: %+v, %v; want ErrUnauthorized", tc.after, cred, err)
		}
	}
}

// TestNewPublicLinks: the links come from INKWELL_PUBLIC_URL and INKWELL_ARTICLE_URL, from
// INKWELL_ADDR's port when no public URL is set, and a template that makes no URL stops the start.
func TestNewPublicLinks(t *testing.T) {
	links, err := NewPublicLinks(ioc.ServerConfig{Addr: ":9090", ArticleURL: "{public}/article/{slug}"})
	if err != nil || links.Base() != "http://localhost:9090" || links.Article("a") != "http://localhost:9090/article/a" {
		t.Errorf("derived: %q %q %v", links.Base(), links.Article("a"), err)
	}
	links, err = NewPublicLinks(ioc.ServerConfig{Addr: ":8080", PublicURL: "https://blog.example/", ArticleURL: "https://www.example/p/{slug}"})
	if err != nil || links.Base() != "https://blog.example" || links.Article("a b") != "https://www.example/p/a%20b" {
		t.Errorf("set: %q %q %v", links.Base(), links.Article("a b"), err)
	}
	if _, err := NewPublicLinks(ioc.ServerConfig{Addr: ":8080", ArticleURL: "/article/{slug}"}); err == nil {
		t.Error("a relative article template was accepted")
	}
}
