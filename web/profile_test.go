package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

var (
	celeb         = domain.Profile{Username: "celeb", Bio: "famous", Image: "https://example.com/celeb.png"}
	celebFollowed = domain.Profile{Username: "celeb", Bio: "famous", Image: "https://example.com/celeb.png", Following: true}
	celebJSON     = `{"profile":{"username":"celeb","bio":"famous","image":"https://example.com/celeb.png","following":false}}`
	// A signed-in viewer's profile also says whether the viewer blocks the user.
	celebFollowedJ = `{"profile":{"username":"celeb","bio":"famous","image":"https://example.com/celeb.png","following":true,"blocking":false}}`
	celebSignedInJ = `{"profile":{"username":"celeb","bio":"famous","image":"https://example.com/celeb.png","following":false,"blocking":false}}`
	celebBlockedJ  = `{"profile":{"username":"celeb","bio":"famous","image":"https://example.com/celeb.png","following":false,"blocking":true}}`
)

func requireNotFound(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"not found"}})
}

func requireMissingToken(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing; send Authorization: Token <jwt>"}})
}

func TestGetProfile(t *testing.T) {
	t.Parallel()
	runRouteCases(t, http.MethodGet, "/api/profiles/celeb", []routeCase{
		{
			name: "anonymous viewer",
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				profiles.EXPECT().Get(gomock.Any(), int64(0), "celeb").Return(celeb, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebJSON)
			},
		},
		{
			name:    "authenticated viewer who follows",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Get(gomock.Any(), authedID, "celeb").Return(celebFollowed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebFollowedJ)
			},
		},
		{
			name:    "authenticated viewer who blocks",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				blocked := celeb
				blocked.Blocking = true
				profiles.EXPECT().Get(gomock.Any(), authedID, "celeb").Return(blocked, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebBlockedJ)
			},
		},
		{
			name:    "invalid token is refused, not downgraded to anonymous",
			headers: map[string]string{"Authorization": "Token garbled"},
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), "garbled").Return(domain.Credential{}, domain.ErrUnauthorized)
				profiles.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
			},
		},
		{
			name:   "unknown username",
			target: "/api/profiles/nobody",
			buildStubs: func(_ *mocks.MockUserService, profiles *mocks.MockProfileService) {
				profiles.EXPECT().Get(gomock.Any(), int64(0), "nobody").Return(domain.Profile{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
		{
			name:   "escaped username is decoded",
			target: "/api/profiles/jake%2Esmith",
			buildStubs: func(_ *mocks.MockUserService, profiles *mocks.MockProfileService) {
				profiles.EXPECT().Get(gomock.Any(), int64(0), "jake.smith").Return(domain.Profile{Username: "jake.smith"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profile":{"username":"jake.smith","bio":"","image":"","following":false}}`)
			},
		},
	})
}

func TestFollow(t *testing.T) {
	t.Parallel()
	runRouteCases(t, http.MethodPost, "/api/profiles/celeb/follow", []routeCase{
		{
			name:    "follows",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Follow(gomock.Any(), authedID, "celeb").Return(celebFollowed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebFollowedJ)
			},
		},
		{
			name: "anonymous",
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				profiles.EXPECT().Follow(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
		{
			name:    "yourself",
			target:  "/api/profiles/jake/follow",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Follow(gomock.Any(), authedID, "jake").
					Return(domain.Profile{}, domain.NewValidationError("username", "you cannot follow yourself"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"username": {"you cannot follow yourself"}})
			},
		},
		{
			name:    "unknown username",
			target:  "/api/profiles/nobody/follow",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Follow(gomock.Any(), authedID, "nobody").Return(domain.Profile{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
		{
			name:    "a user who blocks the viewer: 403 with the reason",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Follow(gomock.Any(), authedID, "celeb").Return(domain.Profile{}, domain.ErrBlockedByTarget)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"profile": {domain.ErrBlockedByTarget.Message}})
			},
		},
		{
			name:    "unexpected service error is a generic 500",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Follow(gomock.Any(), authedID, "celeb").Return(domain.Profile{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestUnfollow(t *testing.T) {
	t.Parallel()
	runRouteCases(t, http.MethodDelete, "/api/profiles/celeb/follow", []routeCase{
		{
			name:    "unfollows",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Unfollow(gomock.Any(), authedID, "celeb").Return(celeb, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, celebSignedInJ)
			},
		},
		{
			name: "anonymous",
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				profiles.EXPECT().Unfollow(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
		{
			name:    "unknown username",
			target:  "/api/profiles/nobody/follow",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, profiles *mocks.MockProfileService) {
				expectAuth(users)
				profiles.EXPECT().Unfollow(gomock.Any(), authedID, "nobody").Return(domain.Profile{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
	})
}
