package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// scheduleBundle is the router with the schedule handler over a mock scheduler.
type scheduleBundle struct {
	bundle
	schedule *mocks.MockArticleScheduler
}

func setupSchedule(t *testing.T) scheduleBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	users := mocks.NewMockUserService(ctrl)
	schedule := mocks.NewMockArticleScheduler(ctrl)
	logger := slog.New(slog.DiscardHandler)
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth:     web.NewAuthenticator(users, logger),
		Schedule: web.NewArticleScheduleHandler(schedule, logger),
	})
	return scheduleBundle{bundle: bundle{ctrl: ctrl, users: users, router: router}, schedule: schedule}
}

// planned is jake's note, scheduled.
var planned = func() domain.ArticleView {
	v := note
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	v.Status, v.PublishAt = domain.StatusScheduled, &at
	return v
}()

const plannedFields = `"slug":"note","title":"Note","description":"d","tagList":[],"createdAt":"2026-01-02T03:04:05.000Z",` +
	`"updatedAt":"2026-01-02T03:04:05.000Z","favorited":false,"favoritesCount":0,` +
	`"author":{"username":"jake","bio":"I work at statefarm","image":"","following":false},` +
	`"status":"scheduled","version":1,"readsCount":0,"collected":false,"collectsCount":0,"publishAt":"2030-01-02T03:04:05.000Z"`

func TestScheduleArticle(t *testing.T) {
	t.Parallel()
	const target = "/api/articles/note/schedule"
	tests := []struct {
		name          string
		body          string
		headers       map[string]string
		buildStubs    func(b scheduleBundle)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "ok", body: `{"publishAt":"2030-01-02T03:04:05Z"}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Schedule(gomock.Any(), authedID, "note", "2030-01-02T03:04:05Z").Return(planned, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"article":`+one(plannedFields, note.Body)+`}`)
			},
		},
		{
			name: "the service's refusal of the time is 422 publishAt", body: `{"publishAt":"2001-01-01T00:00:00Z"}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Schedule(gomock.Any(), authedID, "note", "2001-01-01T00:00:00Z").
					Return(domain.ArticleView{}, domain.NewValidationError("publishAt", "must be in the future"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"publishAt": {"must be in the future"}})
			},
		},
		{
			name: "missing publishAt", body: `{}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) { expectAuth(b.users) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"publishAt": {"can't be blank"}})
			},
		},
		{
			name: "publishAt not a string", body: `{"publishAt":12}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) { expectAuth(b.users) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"publishAt": {"must be a string"}})
			},
		},
		{
			name: "NUL", body: `{"publishAt":"2030-01-02T03:04:05Z\u0000"}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) { expectAuth(b.users) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"publishAt": {"must be UTF-8 text without NUL characters"}})
			},
		},
		{
			name: "invalid UTF-8", body: "{\"publishAt\":\"2030-01-02T03:04:05Z\xff\"}", headers: authHeader,
			buildStubs: func(b scheduleBundle) { expectAuth(b.users) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"publishAt": {"must be UTF-8 text without NUL characters"}})
			},
		},
		{
			name: "not JSON", body: `{"publishAt":`, headers: authHeader,
			buildStubs: func(b scheduleBundle) { expectAuth(b.users) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name: "a published article is 409", body: `{"publishAt":"2030-01-02T03:04:05Z"}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Schedule(gomock.Any(), authedID, "note", gomock.Any()).Return(domain.ArticleView{}, domain.ErrIllegalTransition)
			},
			checkResponse: requireIllegalTransition,
		},
		{
			name: "someone else's article", body: `{"publishAt":"2030-01-02T03:04:05Z"}`, headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Schedule(gomock.Any(), authedID, "note", gomock.Any()).Return(domain.ArticleView{}, domain.ErrForbidden)
			},
			checkResponse: requireForbidden,
		},
		{
			name: "missing token", body: `{"publishAt":"2030-01-02T03:04:05Z"}`,
			buildStubs: func(b scheduleBundle) {
				noAuth(b.bundle)
				b.schedule.EXPECT().Schedule(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSchedule(t)
			tc.buildStubs(b)
			tc.checkResponse(t, b.do(newRequest(http.MethodPost, target, tc.body, tc.headers)))
		})
	}
}

func TestUnscheduleArticle(t *testing.T) {
	t.Parallel()
	const target = "/api/articles/note/schedule"
	tests := []struct {
		name          string
		headers       map[string]string
		buildStubs    func(b scheduleBundle)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "ok: a draft again", headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Unschedule(gomock.Any(), authedID, "note").Return(note, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusOK, noteJSON) },
		},
		{
			name: "not scheduled", headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Unschedule(gomock.Any(), authedID, "note").Return(domain.ArticleView{}, domain.ErrIllegalTransition)
			},
			checkResponse: requireIllegalTransition,
		},
		{
			name: "not found", headers: authHeader,
			buildStubs: func(b scheduleBundle) {
				expectAuth(b.users)
				b.schedule.EXPECT().Unschedule(gomock.Any(), authedID, "note").Return(domain.ArticleView{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSchedule(t)
			tc.buildStubs(b)
			tc.checkResponse(t, b.do(newRequest(http.MethodDelete, target, "", tc.headers)))
		})
	}
}
