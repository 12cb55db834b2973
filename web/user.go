package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=user.go -destination=mocks/user_mock.go -package=mocks

// UserService is what the account handlers need. Shared: the Authenticator (middleware.go) calls
// Authenticate, the SessionHandler (session.go) Current.
type UserService interface {
	Register(ctx context.Context, in service.RegisterInput) (service.Session, error)
	RegisterIdempotent(ctx context.Context, in service.RegisterInput, idem service.Idempotent[service.Session]) (domain.StoredResponse, bool, error)
	Login(ctx context.Context, email, password string) (service.Session, error)
	Authenticate(ctx context.Context, token string) (domain.Credential, error)
	Current(ctx context.Context, userID int64) (domain.User, error)
	Update(ctx context.Context, cred domain.Credential, in service.UpdateUserInput) (domain.User, error)
}

// UserHandler serves registration, login and the current user.
type UserHandler struct {
	users UserService
	log   *slog.Logger
}

// NewUserHandler returns the handler.
func NewUserHandler(users UserService, log *slog.Logger) *UserHandler {
	return &UserHandler{users: users, log: log}
}

type userJSON struct {
	Email        string `json:"email"`
	Token        string `json:"token"` // empty when the request used an API key (never echoed)
	Username     string `json:"username"`
	Bio          string `json:"bio"`
	Image        string `json:"image"`
	RefreshToken string `json:"refreshToken,omitempty"` // EXT: on login, registration and refresh
	Role         string `json:"role,omitempty"`         // EXT: user, moderator or admin
}

type userEnvelope struct {
	User userJSON `json:"user"`
}

func userResponse(u domain.User, token string) userEnvelope {
	return userEnvelope{User: userJSON{Email: u.Email, Token: token, Username: u.Username, Bio: u.Bio, Image: u.Image, Role: string(u.Role)}}
}

func sessionResponse(s service.Session) userEnvelope {
	e := userResponse(s.User, s.Token)
	e.User.RefreshToken = s.Refresh
	return e
}

type registerRequest struct {
	User struct {
		Username string `json:"username"`
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"user"`
}

// Register handles POST /api/users.
func (h *UserHandler) Register(c *gin.Context) {
	var req registerRequest
	if !bindJSON(c, &req) {
		return
	}
	in := service.RegisterInput{Username: req.User.Username, Email: req.User.Email, Password: req.User.Password}
	respond := func(s service.Session, err error) {
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusCreated, sessionResponse(s))
	}
	if key, ok := idempotencyKeyOf(c); ok {
		res, replayed, err := h.users.RegisterIdempotent(c.Request.Context(), in, idempotent(c, key, respond))
		writeStored(c, h.log, res, replayed, err)
		return
	}
	respond(h.users.Register(c.Request.Context(), in))
}

type loginRequest struct {
	User struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"user"`
}

// Login handles POST /api/users/login.
func (h *UserHandler) Login(c *gin.Context) {
	var req loginRequest
	if !bindJSON(c, &req) {
		return
	}
	s, err := h.users.Login(c.Request.Context(), req.User.Email, req.User.Password)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, sessionResponse(s))
}

// Current handles GET /api/user.
func (h *UserHandler) Current(c *gin.Context) {
	u, err := h.users.Current(c.Request.Context(), viewerID(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, userResponse(u, sessionToken(c)))
}

type updateUserRequest struct {
	User struct {
		Email           *string `json:"email"`
		Username        *string `json:"username"`
		Password        *string `json:"password"`
		Bio             *string `json:"bio"`
		Image           *string `json:"image"`
		CurrentPassword string  `json:"currentPassword"` // EXT: required to change email or password
		Code            string  `json:"code"`            // EXT: instead of currentPassword, a login code sent to the account's own email or phone
	} `json:"user"`
}

// Update handles PUT /api/user. Absent fields stay as they are; RealWorld front ends send the whole
// user back, with an empty password meaning "unchanged", so an empty password is ignored.
func (h *UserHandler) Update(c *gin.Context) {
	var req updateUserRequest
	if !bindJSON(c, &req) {
		return
	}
	in := service.UpdateUserInput{
		Email: req.User.Email, Username: req.User.Username, Password: req.User.Password,
		Bio: req.User.Bio, Image: req.User.Image, CurrentPassword: req.User.CurrentPassword, Code: req.User.Code,
	}
	if in.Password != nil && *in.Password == "" {
		in.Password = nil
	}
	u, err := h.users.Update(c.Request.Context(), credentialOf(c), in)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, userResponse(u, sessionToken(c)))
}
