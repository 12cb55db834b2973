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

// blockCase is one request to a block endpoint with the mocks behind it.
type blockCase struct {
	name          string
	method        string
	target        string
	headers       map[string]string
	buildStubs    func(users *mocks.MockUserService, blocks *mocks.MockBlockService)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runBlockCases(t *testing.T, cases []blockCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			users := mocks.NewMockUserService(ctrl)
			blocks := mocks.NewMockBlockService(ctrl)
			tc.buildStubs(users, blocks)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth:   web.NewAuthenticator(users, logger),
				Blocks: web.NewBlockHandler(blocks, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.target, "", tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

func noBlockCalls(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
	users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
	blocks.EXPECT().Block(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	blocks.EXPECT().Unblock(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	blocks.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func TestBlock(t *testing.T) {
	t.Parallel()
	blocked := celeb
	blocked.Blocking = true
	runBlockCases(t, []blockCase{
		{
			name: "blocks: the profile with blocking true", method: http.MethodPost, target: "/api/profiles/celeb/block", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().Block(gomock.Any(), authedID, "celeb").Return(blocked, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebBlockedJ)
			},
		},
		{
			name: "unblocks: the profile with blocking false", method: http.MethodDelete, target: "/api/profiles/celeb/block", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().Unblock(gomock.Any(), authedID, "celeb").Return(celeb, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebSignedInJ)
			},
		},
		{
			name: "anonymous block never reaches the use case", method: http.MethodPost, target: "/api/profiles/celeb/block",
			buildStubs: noBlockCalls, checkResponse: requireMissingToken,
		},
		{
			name: "anonymous unblock never reaches the use case", method: http.MethodDelete, target: "/api/profiles/celeb/block",
			buildStubs: noBlockCalls, checkResponse: requireMissingToken,
		},
		{
			name: "yourself is 422", method: http.MethodPost, target: "/api/profiles/jake/block", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().Block(gomock.Any(), authedID, "jake").
					Return(domain.Profile{}, domain.NewValidationError("username", "you cannot block yourself"))
			},
			checkResponse: require422("username", "you cannot block yourself"),
		},
		{
			name: "unknown user is 404", method: http.MethodPost, target: "/api/profiles/nobody/block", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().Block(gomock.Any(), authedID, "nobody").Return(domain.Profile{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
		{
			name: "unexpected service error is a generic 500", method: http.MethodPost, target: "/api/profiles/celeb/block", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().Block(gomock.Any(), authedID, "celeb").Return(domain.Profile{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestListBlocks(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	runBlockCases(t, []blockCase{
		{
			name: "newest first with a cursor to the next page", method: http.MethodGet, target: "/api/user/blocks?limit=1", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().List(gomock.Any(), authedID, (*domain.Cursor)(nil), 1).Return(service.BlockList{
					Blocked:    []domain.BlockedUser{{UserID: 9, Username: "celeb", Bio: "famous", BlockedAt: at}},
					NextCursor: &domain.Cursor{CreatedAt: at, ID: 9},
				}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profiles":[{"username":"celeb","bio":"famous","image":"","following":false,"blocking":true,"blockedAt":"2026-12-01T10:00:00.000Z"}],
					"nextCursor":"MTc5NjExOTIwMDAwMDAwMDo5"}`)
			},
		},
		{
			name: "a cursor is passed on", method: http.MethodGet, target: "/api/user/blocks?cursor=MTc5NjExOTIwMDAwMDAwMDo5", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().List(gomock.Any(), authedID, &domain.Cursor{CreatedAt: at, ID: 9}, domain.DefaultPageLimit).Return(service.BlockList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profiles":[]}`)
			},
		},
		{
			name: "a bad cursor is 422 and never reaches the use case", method: http.MethodGet, target: "/api/user/blocks?cursor=nope!", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: require422("cursor", "is not a cursor this API returned"),
		},
		{
			name: "an offset is 422", method: http.MethodGet, target: "/api/user/blocks?offset=20", headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, blocks *mocks.MockBlockService) {
				expectAuth(users)
				blocks.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: require422("offset", "is not supported here: page with cursor"),
		},
		{
			name: "anonymous", method: http.MethodGet, target: "/api/user/blocks",
			buildStubs: noBlockCalls, checkResponse: requireMissingToken,
		},
	})
}
