package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=account.go -destination=mocks/account_mock.go -package=mocks

// AccountService is what the email verification and password reset handlers need.
type AccountService interface {
	SendVerification(ctx context.Context, userID int64) error
	VerifyEmail(ctx context.Context, userID int64, code string) (domain.User, error)
	RequestPasswordReset(ctx context.Context, email string) error
	ConfirmPasswordReset(ctx context.Context, email, code, password string) error
}

// AccountHandler serves email verification and password reset.
type AccountHandler struct {
	svc AccountService
	log *slog.Logger
}

// NewAccountHandler returns the handler.
func NewAccountHandler(svc AccountService, log *slog.Logger) *AccountHandler {
	return &AccountHandler{svc: svc, log: log}
}

// accountRequest takes its fields inside "user", like the other account endpoints.
type accountRequest struct {
	User struct {
		Email    string `json:"email"`
		Code     string `json:"code"`
		Password string `json:"password"`
	} `json:"user"`
}

// VerifyEmail handles POST /api/user/email/verify.
func (h *AccountHandler) VerifyEmail(c *gin.Context) {
	var req accountRequest
	if !bindJSON(c, &req) {
		return
	}
	u, err := h.svc.VerifyEmail(c.Request.Context(), viewerID(c), req.User.Code)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"email": u.Email, "emailVerified": true})
}

// ResendVerification handles POST /api/user/email/verify/resend.
func (h *AccountHandler) ResendVerification(c *gin.Context) {
	if err := h.svc.SendVerification(c.Request.Context(), viewerID(c)); err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusAccepted, gin.H{"sent": true, "expiresIn": int(domain.VerifyEmailValidity.Seconds()),
		"resendAfter": int(domain.AccountCodeResend.Seconds())})
}

// RequestPasswordReset handles POST /api/users/password/reset. The answer is the same whether or
// not an account has the email.
func (h *AccountHandler) RequestPasswordReset(c *gin.Context) {
	var req accountRequest
	if !bindJSON(c, &req) {
		return
	}
	if err := h.svc.RequestPasswordReset(c.Request.Context(), req.User.Email); err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusAccepted, gin.H{"expiresIn": int(domain.ResetPasswordValidity.Seconds())})
}

// ConfirmPasswordReset handles POST /api/users/password/reset/confirm.
func (h *AccountHandler) ConfirmPasswordReset(c *gin.Context) {
	var req accountRequest
	if !bindJSON(c, &req) {
		return
	}
	if err := h.svc.ConfirmPasswordReset(c.Request.Context(), req.User.Email, req.User.Code, req.User.Password); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}
