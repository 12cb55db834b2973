package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=codelogin.go -destination=mocks/codelogin_mock.go -package=mocks

// CodeLoginService is what the one-time code handlers need.
type CodeLoginService interface {
	Send(ctx context.Context, email, phone string) error
	Login(ctx context.Context, email, phone, code string) (service.Session, error)
	SendStepUpCode(ctx context.Context, userID int64) error
}

// CodeLoginHandler serves one-time code login.
type CodeLoginHandler struct {
	svc CodeLoginService
	log *slog.Logger
}

// NewCodeLoginHandler returns the handler.
func NewCodeLoginHandler(svc CodeLoginService, log *slog.Logger) *CodeLoginHandler {
	return &CodeLoginHandler{svc: svc, log: log}
}

// codeRequest accepts the fields at the top level ({"email": ...}) or, like the other account
// endpoints, inside "user".
type codeRequest struct {
	Email string `json:"email"`
	Phone string `json:"phone"`
	Code  string `json:"code"`
	User  *struct {
		Email string `json:"email"`
		Phone string `json:"phone"`
		Code  string `json:"code"`
	} `json:"user"`
}

func (r codeRequest) fields() (email, phone, code string) {
	if r.User != nil {
		return r.User.Email, r.User.Phone, r.User.Code
	}
	return r.Email, r.Phone, r.Code
}

// Send handles POST /api/users/login/code/send.
func (h *CodeLoginHandler) Send(c *gin.Context) {
	var req codeRequest
	if !bindJSON(c, &req) {
		return
	}
	email, phone, _ := req.fields()
	if err := h.svc.Send(c.Request.Context(), email, phone); err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusAccepted, gin.H{"sent": true, "expiresIn": 600, "resendAfter": 60})
}

// SendStepUp handles POST /api/user/step-up/code: a code to the account's own email or phone,
// which PUT /api/user takes as "code" instead of the current password.
func (h *CodeLoginHandler) SendStepUp(c *gin.Context) {
	if err := h.svc.SendStepUpCode(c.Request.Context(), viewerID(c)); err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusAccepted, gin.H{"sent": true, "expiresIn": 600, "resendAfter": 60})
}

// Login handles POST /api/users/login/code.
func (h *CodeLoginHandler) Login(c *gin.Context) {
	var req codeRequest
	if !bindJSON(c, &req) {
		return
	}
	email, phone, code := req.fields()
	s, err := h.svc.Login(c.Request.Context(), email, phone, code)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, sessionResponse(s))
}
