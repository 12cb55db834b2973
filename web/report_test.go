package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type reportBundle struct {
	users   *mocks.MockUserService
	reports *mocks.MockReportService
	limiter *mocks.MockRateLimiter
}

var reportRule = web.RateRule{Name: "reports", Limit: 20, Window: time.Hour}

type reportCase struct {
	name          string
	method        string
	target        string
	body          string
	headers       map[string]string
	buildStubs    func(b reportBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runReportCases(t *testing.T, cases []reportCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			b := reportBundle{users: mocks.NewMockUserService(ctrl), reports: mocks.NewMockReportService(ctrl), limiter: mocks.NewMockRateLimiter(ctrl)}
			tc.buildStubs(b)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, RateLimits: web.RateLimits{Reports: reportRule}}, logger, web.Handlers{
				Auth: web.NewAuthenticator(b.users, logger), Reports: web.NewReportHandler(b.reports, logger), Limiter: b.limiter,
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.target, tc.body, tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

var (
	repAt     = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	repFiled  = domain.Report{ID: 11, CaseID: 4, ReporterID: authedID, Reason: domain.ReasonSpam, Note: "pills", Status: domain.CaseOpen, CreatedAt: repAt}
	repTarget = domain.ModerationTarget{Kind: domain.TargetComment, ID: 5, ArticleID: 1, Label: "comment 5 on dragons"}
	repCase   = domain.ModerationCase{ID: 4, Target: repTarget, ArticleSlug: "dragons", Status: domain.CaseOpen, ReportCount: 2,
		Reasons: []domain.ReportReason{domain.ReasonSpam, domain.ReasonAbuse}, NewestNote: "pills", OpenedAt: repAt, UpdatedAt: repAt}
)

// allowReports lets the report budget through (any other limiter use is unexpected).
func allowReports(b reportBundle) {
	b.limiter.EXPECT().Allow(gomock.Any(), "reports:user:7", 20, time.Hour).Return(domain.RateDecision{Allowed: true, Limit: 20, Remaining: 19, Reset: time.Minute}, nil)
}

func TestReportHandler_File(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	const commentBody = `{"report":{"article":"dragons","comment":5,"reason":"spam","note":"pills"}}`
	comment := func(created bool) func(b reportBundle) {
		return func(b reportBundle) {
			expectAuth(b.users)
			allowReports(b)
			r := repFiled
			r.Target = repTarget
			b.reports.EXPECT().File(a, sessionCred, service.ReportInput{Article: "dragons", Comment: 5, Reason: "spam", Note: "pills"}).Return(r, created, nil)
		}
	}
	const filed = `{"report":{"id":11,"status":"open","reason":"spam","note":"pills","target":{"kind":"comment","article":"dragons","comment":5},"createdAt":"2026-12-01T10:00:00.000Z"}}`
	runReportCases(t, []reportCase{
		{
			name: "a new report is 201", method: http.MethodPost, target: "/api/reports", body: commentBody, headers: authHeader,
			buildStubs:    comment(true),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusCreated, filed) },
		},
		{
			name: "a repeat is 200 with the same report", method: http.MethodPost, target: "/api/reports", body: commentBody, headers: authHeader,
			buildStubs:    comment(false),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusOK, filed) },
		},
		{
			name: "a user", method: http.MethodPost, target: "/api/reports", body: `{"report":{"user":"troll","reason":"abuse"}}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				allowReports(b)
				r := repFiled
				r.Reason, r.Note, r.Target = domain.ReasonAbuse, "", domain.ModerationTarget{Kind: domain.TargetUser, ID: 50, Label: "troll"}
				b.reports.EXPECT().File(a, sessionCred, service.ReportInput{User: "troll", Reason: "abuse"}).Return(r, true, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, `{"report":{"id":11,"status":"open","reason":"abuse","note":"","target":{"kind":"user","user":"troll"},"createdAt":"2026-12-01T10:00:00.000Z"}}`)
			},
		},
		{
			name: "signed out is 401 before the budget", method: http.MethodPost, target: "/api/reports", body: commentBody,
			buildStubs: func(b reportBundle) {
				b.limiter.EXPECT().Allow(a, a, a, a).Times(0)
				b.reports.EXPECT().File(a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
		{
			name: "over the report budget is 429 and files nothing", method: http.MethodPost, target: "/api/reports", body: commentBody, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.limiter.EXPECT().Allow(a, "reports:user:7", 20, time.Hour).Return(domain.RateDecision{Allowed: false, Limit: 20, Reset: time.Hour, RetryAfter: 3 * time.Minute}, nil)
				b.reports.EXPECT().File(a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				if rec.Header().Get("Retry-After") != "180" {
					t.Fatalf("Retry-After = %q", rec.Header().Get("Retry-After"))
				}
			},
		},
		{
			name: "a wrongly typed body is 422 and files nothing", method: http.MethodPost, target: "/api/reports", body: `{"report":{"comment":"5"}}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				allowReports(b)
				b.reports.EXPECT().File(a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "the use case's refusals keep their status", method: http.MethodPost, target: "/api/reports", body: `{"report":{"user":"jake","reason":"spam"}}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				allowReports(b)
				b.reports.EXPECT().File(a, a, a).Return(domain.Report{}, false, domain.NewValidationError("user", "is you: you cannot report yourself"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"user": {"is you: you cannot report yourself"}})
			},
		},
	})
}

func TestReportHandler_QueueResolveLog(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	const entry = `{"id":4,"status":"open","target":{"kind":"comment","label":"comment 5 on dragons","article":"dragons","comment":5},"reportCount":2,"reasons":["spam","abuse"],"newestNote":"pills","openedAt":"2026-12-01T10:00:00.000Z","updatedAt":"2026-12-01T10:00:00.000Z"}`
	cursor := &domain.Cursor{CreatedAt: repAt, ID: 4}
	resolved := repCase
	resolved.Status, resolved.ResolvedAt, resolved.Resolution = domain.CaseResolved, repAt, domain.ResolutionDismiss
	runReportCases(t, []reportCase{
		{
			name: "the queue pages by cursor", method: http.MethodGet, target: "/api/moderation/reports?status=open&limit=1", headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Queue(a, sessionCred, "open", domain.Page{Limit: 1}).Return(service.CaseList{Cases: []domain.ModerationCase{repCase}, NextCursor: cursor}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"reports":[`+entry+`],"nextCursor":"MTc5NjExOTIwMDAwMDAwMDo0"}`)
			},
		},
		{
			name: "a cursor is passed back", method: http.MethodGet, target: "/api/moderation/reports?cursor=MTc5NjExOTIwMDAwMDAwMDo0", headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Queue(a, sessionCred, "", gomock.Cond(func(p domain.Page) bool {
					return p.Limit == domain.DefaultPageLimit && p.Cursor != nil && p.Cursor.ID == 4 && p.Cursor.CreatedAt.Equal(repAt)
				})).Return(service.CaseList{Cases: []domain.ModerationCase{}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"reports":[]}`)
			},
		},
		{
			name: "a bad cursor is 422 before the use case", method: http.MethodGet, target: "/api/moderation/reports?cursor=!!", headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Queue(a, a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "a plain user is 403", method: http.MethodGet, target: "/api/moderation/reports", headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Queue(a, a, a, a).Return(service.CaseList{}, domain.ErrForbidden)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusForbidden) },
		},
		{
			name: "an API key reaches the use case as one (which refuses it)", method: http.MethodGet, target: "/api/moderation/log", headers: map[string]string{"Authorization": "Token " + apiKeyToken},
			buildStubs: func(b reportBundle) {
				b.users.EXPECT().Authenticate(a, apiKeyToken).Return(writeKeyCred, nil)
				b.reports.EXPECT().ModerationLog(a, writeKeyCred, a).Return(service.LogList{}, domain.ErrForbidden)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusForbidden) },
		},
		{
			name: "resolve", method: http.MethodPost, target: "/api/moderation/reports/4/resolve", body: `{"action":"dismiss","reason":"fine"}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Resolve(a, sessionCred, int64(4), "dismiss", "fine").Return(resolved, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"report":{"id":4,"status":"resolved","target":{"kind":"comment","label":"comment 5 on dragons","article":"dragons","comment":5},"reportCount":2,"reasons":["spam","abuse"],"newestNote":"pills","openedAt":"2026-12-01T10:00:00.000Z","updatedAt":"2026-12-01T10:00:00.000Z","resolvedAt":"2026-12-01T10:00:00.000Z","resolution":"dismiss"}}`)
			},
		},
		{
			name: "resolving a resolved case is 409", method: http.MethodPost, target: "/api/moderation/reports/4/resolve", body: `{"action":"dismiss"}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Resolve(a, a, a, a, a).Return(domain.ModerationCase{}, domain.ErrConflict)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusConflict) },
		},
		{
			name: "a case id that is not one is 404 before the use case", method: http.MethodPost, target: "/api/moderation/reports/x/resolve", body: `{"action":"dismiss"}`, headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().Resolve(a, a, a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
		{
			name: "the log", method: http.MethodGet, target: "/api/moderation/log?limit=1", headers: authHeader,
			buildStubs: func(b reportBundle) {
				expectAuth(b.users)
				b.reports.EXPECT().ModerationLog(a, sessionCred, domain.Page{Limit: 1}).Return(service.LogList{Entries: []domain.ModerationEntry{
					{ID: 2, ActorName: "mod", Action: domain.ActionDismiss, Target: repTarget, Reason: "fine", At: repAt}}, NextCursor: cursor}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"entries":[{"action":"dismiss","actor":"mod","target":{"kind":"comment","label":"comment 5 on dragons"},"reason":"fine","at":"2026-12-01T10:00:00.000Z"}],"nextCursor":"MTc5NjExOTIwMDAwMDAwMDo0"}`)
			},
		},
		{
			name: "signed out is 401", method: http.MethodGet, target: "/api/moderation/reports",
			buildStubs: func(b reportBundle) {
				b.reports.EXPECT().Queue(a, a, a, a).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
	})
}
