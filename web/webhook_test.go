package web_test

import (
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

type webhookBundle struct {
	users *mocks.MockUserService
	hooks *mocks.MockWebhookService
}

type webhookCase struct {
	name          string
	method        string
	target        string
	body          string
	buildStubs    func(b webhookBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runWebhookCases(t *testing.T, cases []webhookCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			b := webhookBundle{users: mocks.NewMockUserService(ctrl), hooks: mocks.NewMockWebhookService(ctrl)}
			tc.buildStubs(b)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth: web.NewAuthenticator(b.users, logger), Webhooks: web.NewWebhookHandler(b.hooks, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.target, tc.body, authHeader))
			tc.checkResponse(t, rec)
		})
	}
}

var hookAt = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func TestWebhookHandler(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	hook := domain.Webhook{ID: 7, URL: "https://hooks.example.com/in", Events: []string{"article.published"}, Active: true, CreatedAt: hookAt, UpdatedAt: hookAt}
	runWebhookCases(t, []webhookCase{
		{
			name: "create answers the secret once", method: http.MethodPost, target: "/api/user/webhooks",
			body: `{"webhook":{"url":"https://hooks.example.com/in","events":["article.published"]}}`,
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				url := "https://hooks.example.com/in"
				b.hooks.EXPECT().Create(a, sessionCred, false, service.WebhookInput{URL: &url, Events: []string{"article.published"}}).Return(hook, "whsec_c2VjcmV0", nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, `{"webhook":{"id":7,"url":"https://hooks.example.com/in","events":["article.published"],"active":true,
					"failingSince":null,"secret":"whsec_c2VjcmV0","createdAt":"2026-12-04T10:00:00.000Z","updatedAt":"2026-12-04T10:00:00.000Z"}}`)
			},
		},
		{
			name: "the admin routes are the site's", method: http.MethodGet, target: "/api/admin/webhooks/7",
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().Get(a, sessionCred, true, int64(7)).Return(hook, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "secret") {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "a non-admin on the site's routes is 403", method: http.MethodGet, target: "/api/admin/webhooks",
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().List(a, sessionCred, true).Return(nil, domain.ErrForbidden)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusForbidden) },
		},
		{
			name: "a refused URL is 422 url", method: http.MethodPost, target: "/api/user/webhooks",
			body: `{"webhook":{"url":"https://127.0.0.1/","events":["article.published"]}}`,
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().Create(a, a, false, a).Return(domain.Webhook{}, "", domain.NewValidationError("url", "must not point to a private, loopback or link-local address"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"url": {"must not point to a private, loopback or link-local address"}})
			},
		},
		{
			name: "deliveries page on from the cursor's number", method: http.MethodGet, target: "/api/user/webhooks/7/deliveries?limit=1&cursor=bjox",
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().Deliveries(a, sessionCred, false, int64(7), int64(1), 1).Return(service.WebhookDeliveryList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"deliveries":[]}`)
			},
		},
		{
			name: "each delivery lists its attempts, newest first", method: http.MethodGet, target: "/api/user/webhooks/7/deliveries",
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().Deliveries(a, sessionCred, false, int64(7), int64(0), domain.DefaultPageLimit).Return(service.WebhookDeliveryList{Items: []domain.WebhookDelivery{{
					ID: 41, EventType: "article.published", EventID: "e1", Status: domain.WebhookDelivered, Attempts: 2, StatusCode: 200, LatencyMs: 12,
					Response: "ok", CreatedAt: hookAt, AttemptedAt: &hookAt, History: []domain.WebhookDeliveryAttempt{
						{Attempt: 2, StatusCode: 200, LatencyMs: 12, Response: "ok", At: hookAt},
						{Attempt: 1, LatencyMs: 10000, Error: "timed out", At: hookAt.Add(-time.Minute)},
					}}}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"deliveries":[{"id":41,"event":"article.published","eventId":"e1","status":"delivered","attempts":2,`+
					`"statusCode":200,"latencyMs":12,"response":"ok","error":"","createdAt":"2026-12-04T10:00:00.000Z","attemptedAt":"2026-12-04T10:00:00.000Z",`+
					`"attemptLog":[{"attempt":2,"statusCode":200,"latencyMs":12,"response":"ok","error":"","at":"2026-12-04T10:00:00.000Z"},`+
					`{"attempt":1,"statusCode":null,"latencyMs":10000,"response":"","error":"timed out","at":"2026-12-04T09:59:00.000Z"}]}]}`)
			},
		},
		{
			name: "a bad cursor is 422", method: http.MethodGet, target: "/api/user/webhooks/7/deliveries?cursor=nope",
			buildStubs: func(b webhookBundle) { expectAuth(b.users); b.hooks.EXPECT().Deliveries(a, a, a, a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"cursor": {"is not a cursor this API returned"}})
			},
		},
		{
			name: "redeliver names the delivery", method: http.MethodPost, target: "/api/user/webhooks/7/deliveries/41/redeliver",
			buildStubs: func(b webhookBundle) {
				expectAuth(b.users)
				b.hooks.EXPECT().Redeliver(a, sessionCred, false, int64(7), int64(41)).Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusAccepted) },
		},
		{
			name: "a delivery id that is no number is 404", method: http.MethodPost, target: "/api/user/webhooks/7/deliveries/x/redeliver",
			buildStubs:    func(b webhookBundle) { expectAuth(b.users); b.hooks.EXPECT().Redeliver(a, a, a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
	})
}
