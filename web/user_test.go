package web_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

var jake = domain.User{
	ID:           authedID,
	Email:        "jake@jake.jake",
	Username:     "jake",
	PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$secret$secret",
	Bio:          "I work at statefarm",
	CreatedAt:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
}

// jakeJSON is jake as every user endpoint returns him with token TOKEN: exactly the five RealWorld
// fields, never the id or the password hash.
const jakeJSON = `{"user":{"email":"jake@jake.jake","token":"TOKEN","username":"jake","bio":"I work at statefarm","image":""}}`

const internalErrorBody = `{"errors":{"body":["internal server error"]}}`

// requireInternalError fails unless the response is the generic 500 and carries no internal detail.
func requireInternalError(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireStatus(t, rec, http.StatusInternalServerError)
	if got := rec.Body.String(); got != internalErrorBody {
		t.Errorf("body = %s, want exactly %s", got, internalErrorBody)
	}
	if strings.Contains(rec.Body.String(), "pq:") || strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("body %s leaks the internal error", rec.Body)
	}
}

var errInternal = errors.New("pq: secret internal detail")

func TestRegister(t *testing.T) {
	t.Parallel()
	const body = `{"user":{"username":"jake","email":"Jake@Jake.jake","password":"jakejake"}}`
	neverRegisters := func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
		users.EXPECT().Register(gomock.Any(), gomock.Any()).Times(0)
	}

	runRouteCases(t, http.MethodPost, "/api/users", []routeCase{
		{
			name: "created",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Register(gomock.Any(), service.RegisterInput{Username: "jake", Email: "Jake@Jake.jake", Password: "jakejake"}).
					Return(service.Session{User: jake, Token: "TOKEN"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, jakeJSON)
			},
		},
		{
			name: "validation error",
			body: `{"user":{"username":"","email":"nope","password":"short"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				verr := &domain.ValidationError{}
				verr.Add("username", "can't be blank")
				verr.Add("email", "is invalid")
				verr.Add("password", "is too short (minimum is 8 characters)")
				users.EXPECT().Register(gomock.Any(), service.RegisterInput{Username: "", Email: "nope", Password: "short"}).
					Return(service.Session{}, verr)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{
					"username": {"can't be blank"},
					"email":    {"is invalid"},
					"password": {"is too short (minimum is 8 characters)"},
				})
			},
		},
		{
			name: "email taken",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Register(gomock.Any(), gomock.Any()).
					Return(service.Session{}, domain.NewValidationError("email", "has already been taken"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"email": {"has already been taken"}})
			},
		},
		{
			name:       "malformed JSON",
			body:       `{"user":{"username":"jake",`,
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name:       "empty body",
			body:       "",
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"request body is empty; send a JSON object"}})
			},
		},
		{
			name:       "number for email",
			body:       `{"user":{"username":"jake","email":5,"password":"jakejake"}}`,
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"email": {"must be a string"}})
			},
		},
		{
			name:       "string for the user object",
			body:       `{"user":"jake"}`,
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"user": {"must be a JSON object"}})
			},
		},
		{
			name:       "array instead of an object",
			body:       `[` + body + `]`,
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name:       "trailing data after the object",
			body:       body + `{"user":{}}`,
			buildStubs: neverRegisters,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name: "unexpected service error is a generic 500",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Register(gomock.Any(), gomock.Any()).Return(service.Session{}, fmt.Errorf("create user: %w", errInternal))
			},
			checkResponse: requireInternalError,
		},
		{
			name: "database unavailable",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Register(gomock.Any(), gomock.Any()).Return(service.Session{}, fmt.Errorf("create user: %w", domain.ErrUnavailable))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{
					"body": {"the service is temporarily unavailable; retry shortly"},
				})
				if rec.Header().Get("Retry-After") == "" {
					t.Error("503 without a Retry-After header")
				}
			},
		},
	})
}

func TestLogin(t *testing.T) {
	t.Parallel()
	const body = `{"user":{"email":"jake@jake.jake","password":"jakejake"}}`
	neverLogsIn := func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
		users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}

	runRouteCases(t, http.MethodPost, "/api/users/login", []routeCase{
		{
			name: "logged in",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Login(gomock.Any(), "jake@jake.jake", "jakejake").Return(service.Session{User: jake, Token: "TOKEN"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, jakeJSON)
			},
		},
		{
			name: "invalid credentials",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Login(gomock.Any(), "jake@jake.jake", "jakejake").Return(service.Session{}, domain.ErrInvalidCredentials)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"email or password": {"is invalid"}})
			},
		},
		{
			name: "blank fields",
			body: `{"user":{}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				verr := domain.NewValidationError("email", "can't be blank")
				verr.Add("password", "can't be blank")
				users.EXPECT().Login(gomock.Any(), "", "").Return(service.Session{}, verr)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{
					"email":    {"can't be blank"},
					"password": {"can't be blank"},
				})
			},
		},
		{
			name:       "malformed JSON",
			body:       `{"user":{"email":"jake@jake.jake" "password":"jakejake"}}`,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name:       "empty body",
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"request body is empty; send a JSON object"}})
			},
		},
		{
			name:       "number for email",
			body:       `{"user":{"email":5,"password":"jakejake"}}`,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"email": {"must be a string"}})
			},
		},
		{
			name:       "list for password",
			body:       `{"user":{"email":"jake@jake.jake","password":["jakejake"]}}`,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"password": {"must be a string"}})
			},
		},
		{
			name: "unexpected service error is a generic 500",
			body: body,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Return(service.Session{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestCurrentUser(t *testing.T) {
	t.Parallel()
	runRouteCases(t, http.MethodGet, "/api/user", []routeCase{
		{
			name:    "returns the user with the token it was called with",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Current(gomock.Any(), authedID).Return(jake, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, jakeJSON)
			},
		},
		{
			name:    "an API key is never echoed back as token",
			headers: map[string]string{"Authorization": "Bearer " + apiKeyToken},
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(writeKeyCred, nil)
				users.EXPECT().Current(gomock.Any(), authedID).Return(jake, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, strings.Replace(jakeJSON, `"token":"TOKEN"`, `"token":""`, 1))
			},
		},
		{
			name: "anonymous",
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				users.EXPECT().Current(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing; send Authorization: Token <jwt>"}})
			},
		},
		{
			name:    "user deleted after authenticating",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Current(gomock.Any(), authedID).Return(domain.User{}, domain.ErrUnauthorized)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
			},
		},
		{
			name:    "unexpected service error is a generic 500",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Current(gomock.Any(), authedID).Return(domain.User{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	ptr := func(s string) *string { return &s }
	neverUpdates := func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
		expectAuth(users)
		users.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	updated := jake
	updated.Bio = "new bio"
	updated.Image = "https://example.com/jake.png"
	const updatedJSON = `{"user":{"email":"jake@jake.jake","token":"TOKEN","username":"jake","bio":"new bio","image":"https://example.com/jake.png"}}`

	runRouteCases(t, http.MethodPut, "/api/user", []routeCase{
		{
			name:    "every field is passed on",
			headers: authHeader,
			body:    `{"user":{"email":"a@b.co","username":"jacob","password":"new-password","bio":"new bio","image":"https://example.com/jake.png"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, service.UpdateUserInput{
					Email: ptr("a@b.co"), Username: ptr("jacob"), Password: ptr("new-password"),
					Bio: ptr("new bio"), Image: ptr("https://example.com/jake.png"),
				}).Return(updated, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, updatedJSON)
			},
		},
		{
			name:    "the current password is passed on",
			headers: authHeader,
			body:    `{"user":{"password":"new-password","currentPassword":"old-password"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, service.UpdateUserInput{
					Password: ptr("new-password"), CurrentPassword: "old-password",
				}).Return(updated, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, updatedJSON)
			},
		},
		{
			name:    "a wrong current password is 403 on currentPassword",
			headers: authHeader,
			body:    `{"user":{"password":"new-password","currentPassword":"guess"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, gomock.Any()).Return(domain.User{}, domain.ErrWrongCurrentPassword)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"currentPassword": {"is wrong"}})
			},
		},
		{
			name:    "an API key never reaches the update, whatever it changes",
			headers: map[string]string{"Authorization": "Bearer " + apiKeyToken},
			body:    `{"user":{"email":"evil@example.com","password":"taken-over","bio":"x"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(writeKeyCred, nil)
				users.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"token": {apiKeyRefusal}})
			},
		},
		{
			name:    "absent and null fields stay unchanged",
			headers: authHeader,
			body:    `{"user":{"bio":"new bio","image":null}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, service.UpdateUserInput{Bio: ptr("new bio")}).Return(updated, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, updatedJSON)
			},
		},
		{
			name:    "empty password means unchanged, other empty fields are passed on",
			headers: authHeader,
			body:    `{"user":{"email":"jake@jake.jake","username":"jake","password":"","bio":"","image":""}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, service.UpdateUserInput{
					Email: ptr("jake@jake.jake"), Username: ptr("jake"), Password: nil, Bio: ptr(""), Image: ptr(""),
				}).Return(jake, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, jakeJSON)
			},
		},
		{
			name: "anonymous",
			body: `{"user":{"bio":"new bio"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				users.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing; send Authorization: Token <jwt>"}})
			},
		},
		{
			name:    "validation error",
			headers: authHeader,
			body:    `{"user":{"image":"ftp://example.com/jake.png"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, gomock.Any()).
					Return(domain.User{}, domain.NewValidationError("image", "must be an https URL or the url of one of your uploads (/media/...)"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"image": {"must be an https URL or the url of one of your uploads (/media/...)"}})
			},
		},
		{
			name:    "username taken",
			headers: authHeader,
			body:    `{"user":{"username":"taken"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, gomock.Any()).
					Return(domain.User{}, domain.NewValidationError("username", "has already been taken"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"username": {"has already been taken"}})
			},
		},
		{
			name:       "malformed JSON",
			headers:    authHeader,
			body:       `{"user":{"bio":"new bio"}`,
			buildStubs: neverUpdates,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
			},
		},
		{
			name:       "empty body",
			headers:    authHeader,
			buildStubs: neverUpdates,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"request body is empty; send a JSON object"}})
			},
		},
		{
			name:       "boolean for bio",
			headers:    authHeader,
			body:       `{"user":{"bio":false}}`,
			buildStubs: neverUpdates,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"bio": {"must be a string"}})
			},
		},
		{
			name:       "number for email",
			headers:    authHeader,
			body:       `{"user":{"email":5}}`,
			buildStubs: neverUpdates,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"email": {"must be a string"}})
			},
		},
		{
			name:    "unexpected service error is a generic 500",
			headers: authHeader,
			body:    `{"user":{"bio":"new bio"}}`,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				expectAuth(users)
				users.EXPECT().Update(gomock.Any(), sessionCred, gomock.Any()).Return(domain.User{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
	})
}
