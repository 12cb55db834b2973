package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// streamCase is one request to the notification stream or its ticket endpoint.
type streamCase struct {
	name          string
	method        string
	target        string
	headers       map[string]string
	buildStubs    func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, h *web.NotificationStreamHandler)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runStreamCases(t *testing.T, cases []streamCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			users := mocks.NewMockUserService(ctrl)
			streams := mocks.NewMockNotificationStreamService(ctrl)
			logger := slog.New(slog.DiscardHandler)
			h := web.NewNotificationStreamHandler(streams, logger)
			tc.buildStubs(users, streams, h)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, RequestTimeout: time.Millisecond}, logger, web.Handlers{
				Auth:               web.NewAuthenticator(users, logger),
				NotificationStream: h,
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.target, "", tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

var (
	streamNote1 = domain.Notification{ID: 8, Kind: "article.published", ActorUsername: "celeb", ArticleSlug: "dragons", ArticleTitle: "Dragons", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	streamNote2 = domain.Notification{ID: 9, Kind: "report.resolved", Detail: "A moderator reviewed your report.", CreatedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)}
)

const (
	streamEvent1 = "id: 8\nevent: notification\ndata: {\"id\":8,\"kind\":\"article.published\",\"actor\":\"celeb\",\"article\":{\"slug\":\"dragons\",\"title\":\"Dragons\"},\"createdAt\":\"2026-01-02T03:04:05.000Z\",\"read\":false}\n\n"
	streamEvent2 = "id: 9\nevent: notification\ndata: {\"id\":9,\"kind\":\"report.resolved\",\"actor\":\"\",\"detail\":\"A moderator reviewed your report.\",\"createdAt\":\"2026-01-02T03:04:06.000Z\",\"read\":false}\n\n"
)

func streamConfig(heartbeat time.Duration) service.NotificationStreamConfig {
	cfg := service.DefaultNotificationStreamConfig()
	cfg.Heartbeat = heartbeat
	return cfg
}

func requireStreamBody(t *testing.T, rec *httptest.ResponseRecorder, want string) {
	t.Helper()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") ||
		rec.Header().Get("X-Accel-Buffering") != "no" || rec.Header().Get("Cache-Control") == "" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant\n%q", got, want)
	}
}

func TestNotificationStream(t *testing.T) {
	t.Parallel()
	noStart := func(streams *mocks.MockNotificationStreamService) {
		streams.EXPECT().Start(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	runStreamCases(t, []streamCase{
		{
			name: "header: replays after Last-Event-ID, then live, past the request deadline, until shutdown", method: http.MethodGet,
			target: "/api/user/notifications/stream", headers: map[string]string{"Authorization": "Token TOKEN", "Last-Event-ID": "7"},
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, h *web.NotificationStreamHandler) {
				expectAuth(users)
				wake := make(chan struct{}, 1)
				wake <- struct{}{}
				st := &service.NotificationStream{UserID: authedID, Wake: wake}
				streams.EXPECT().Config().Return(streamConfig(time.Hour))
				streams.EXPECT().Start(gomock.Any(), sessionCred, "TOKEN", int64(7), true).Return(st, []domain.Notification{streamNote1}, nil)
				streams.EXPECT().Next(gomock.Any(), st).DoAndReturn(func(ctx context.Context, _ *service.NotificationStream) ([]domain.Notification, error) {
					if _, has := ctx.Deadline(); has {
						t.Error("the stream's context has a deadline")
					}
					h.Shutdown() // the server stops: the stream ends after this event
					return []domain.Notification{streamNote2}, nil
				})
				streams.EXPECT().Close(st)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStreamBody(t, rec, "retry: 3000\n\n"+streamEvent1+streamEvent2+"event: shutdown\ndata: {}\n\n")
			},
		},
		{
			name: "ticket: a heartbeat that finds the session revoked ends the stream", method: http.MethodGet,
			target: "/api/user/notifications/stream?ticket=t1&lastEventId=3",
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				st := &service.NotificationStream{UserID: authedID}
				streams.EXPECT().RedeemTicket(gomock.Any(), "t1").Return(sessionCred, nil)
				streams.EXPECT().Config().Return(streamConfig(time.Millisecond))
				streams.EXPECT().Start(gomock.Any(), sessionCred, "", int64(3), true).Return(st, nil, nil)
				gomock.InOrder(
					streams.EXPECT().Heartbeat(gomock.Any(), st).Return(nil),
					streams.EXPECT().Poll(gomock.Any(), st).Return(nil, nil),
					streams.EXPECT().Heartbeat(gomock.Any(), st).Return(domain.ErrUnauthorized),
				)
				streams.EXPECT().Close(st)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStreamBody(t, rec, "retry: 3000\n\n: heartbeat\n\nevent: revoked\ndata: {}\n\n")
			},
		},
		{
			name: "a bad, expired or used ticket: 401", method: http.MethodGet, target: "/api/user/notifications/stream?ticket=used",
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				streams.EXPECT().RedeemTicket(gomock.Any(), "used").Return(domain.Credential{}, domain.ErrUnauthorized)
				noStart(streams)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"ticket": {"is invalid, expired or used"}})
			},
		},
		{
			name: "neither header nor ticket: 401", method: http.MethodGet, target: "/api/user/notifications/stream",
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				noStart(streams)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnauthorized)
			},
		},
		{
			name: "a Last-Event-ID that is no id: 422", method: http.MethodGet, target: "/api/user/notifications/stream",
			headers: map[string]string{"Authorization": "Token TOKEN", "Last-Event-ID": "x"},
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				expectAuth(users)
				noStart(streams)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"Last-Event-ID": {"must be a notification id"}})
			},
		},
		{
			name: "over a cap: 429 with Retry-After", method: http.MethodGet, target: "/api/user/notifications/stream", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				expectAuth(users)
				streams.EXPECT().Start(gomock.Any(), sessionCred, "TOKEN", int64(0), false).Return(nil, nil, service.ErrTooManyStreams)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				if rec.Header().Get("Retry-After") == "" {
					t.Fatal("no Retry-After")
				}
			},
		},
		{
			name: "Redis down at the open: 503", method: http.MethodGet, target: "/api/user/notifications/stream", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				expectAuth(users)
				streams.EXPECT().Start(gomock.Any(), sessionCred, "TOKEN", int64(0), false).Return(nil, nil, errors.Join(domain.ErrUnavailable, errors.New("redis")))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusServiceUnavailable)
			},
		},
		{
			name: "ticket: issued to a login session", method: http.MethodPost, target: "/api/user/notifications/stream/ticket", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				expectAuth(users)
				streams.EXPECT().IssueTicket(gomock.Any(), sessionCred).Return("tkt", time.Date(2026, 1, 2, 3, 4, 35, 0, time.UTC), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, `{"ticket":"tkt","expiresAt":"2026-01-02T03:04:35.000Z"}`)
			},
		},
		{
			name: "ticket: never to an API key", method: http.MethodPost, target: "/api/user/notifications/stream/ticket",
			headers: map[string]string{"Authorization": "Token " + apiKeyToken},
			buildStubs: func(users *mocks.MockUserService, streams *mocks.MockNotificationStreamService, _ *web.NotificationStreamHandler) {
				users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(writeKeyCred, nil)
				streams.EXPECT().IssueTicket(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"token": {apiKeyRefusal}})
			},
		},
	})
}
