package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=oidc.go -destination=mocks/oidc_mock.go -package=mocks

// SignInService is what the sign-in provider handlers need (issue #30).
type SignInService interface {
	Providers() []service.ProviderInfo
	Start(ctx context.Context, provider, redirect string, linkUserID int64) (service.SignInStart, error)
	StartLink(ctx context.Context, cred domain.Credential, provider, redirect, password, code string) (service.SignInStart, error)
	Callback(ctx context.Context, provider, state, cookie, code, errParam string) (string, error)
	Exchange(ctx context.Context, code string) (service.Session, error)
	Identities(ctx context.Context, userID int64) ([]domain.UserIdentity, error)
	Unlink(ctx context.Context, userID, id int64) error
}

// SignInCookieConfig says how the browser-binding cookie is set.
type SignInCookieConfig struct {
	// Secure: the API's public URL is https, so the cookie is never sent in clear.
	Secure bool
}

// signInCookie binds a sign-in to the browser that started it. It is sent only to the callback
// (its Path), only by the browser (HttpOnly), and on the provider's top-level redirect back
// (SameSite=Lax).
const signInCookie = "inkwell_sign_in"

// SignInHandler serves sign-in through providers and the identities of an account.
type SignInHandler struct {
	svc SignInService
	cfg SignInCookieConfig
	log *slog.Logger
}

// NewSignInHandler returns the handler.
func NewSignInHandler(svc SignInService, cfg SignInCookieConfig, log *slog.Logger) *SignInHandler {
	return &SignInHandler{svc: svc, cfg: cfg, log: log}
}

type providerJSON struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Available   bool   `json:"available"`
}

// Providers handles GET /api/auth/providers.
func (h *SignInHandler) Providers(c *gin.Context) {
	list := h.svc.Providers()
	out := make([]providerJSON, len(list))
	for i, p := range list {
		out[i] = providerJSON{Name: p.Name, DisplayName: p.DisplayName, Available: p.Available}
	}
	renderJSON(c, http.StatusOK, gin.H{"providers": out})
}

// Start handles GET /api/auth/oidc/:provider/start?redirect=: a 302 to the provider, with the
// browser-binding cookie. Linking needs the step-up, which a redirect cannot carry: POST.
func (h *SignInHandler) Start(c *gin.Context) {
	if c.Query("link") != "" && c.Query("link") != "false" {
		abortWith(c, http.StatusUnprocessableEntity, "link", "needs the step-up: POST /api/auth/oidc/{provider}/start with a password or code, signed in")
		return
	}
	provider := c.Param("provider")
	st, err := h.svc.Start(c.Request.Context(), provider, c.Query("redirect"), 0)
	if err != nil {
		writeSignInError(c, h.log, err)
		return
	}
	h.setCookie(c, provider, st.Cookie, 600)
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, st.AuthorizationURL)
}

type linkStartRequest struct {
	Redirect string `json:"redirect"`
	Password string `json:"password"`
	Code     string `json:"code"`
}

// StartLink handles POST /api/auth/oidc/:provider/start {"redirect", "password" | "code"} (a
// "link": true is accepted and changes nothing: the POST always links): a signed-in user links
// another provider, after the step-up of credential changes. The answer is 200
// {"authorizationUrl"} and the cookie; the front end sends the browser there.
func (h *SignInHandler) StartLink(c *gin.Context) {
	var req linkStartRequest
	if !bindJSON(c, &req) {
		return
	}
	provider := c.Param("provider")
	st, err := h.svc.StartLink(c.Request.Context(), credentialOf(c), provider, req.Redirect, req.Password, req.Code)
	if err != nil {
		writeSignInError(c, h.log, err)
		return
	}
	h.setCookie(c, provider, st.Cookie, 600)
	renderJSON(c, http.StatusOK, gin.H{"authorizationUrl": st.AuthorizationURL})
}

// Callback handles GET /api/auth/oidc/:provider/callback: the provider's redirect back. A state
// that is not this browser's live one is a 400; anything after a valid state redirects to the
// front end with ?code=, ?linked= or ?error=.
func (h *SignInHandler) Callback(c *gin.Context) {
	provider := c.Param("provider")
	cookie, _ := c.Cookie(signInCookie)
	to, err := h.svc.Callback(c.Request.Context(), provider, c.Query("state"), cookie, c.Query("code"), c.Query("error"))
	if err != nil {
		writeSignInError(c, h.log, err)
		return
	}
	h.setCookie(c, provider, "", -1) // spent
	c.Header("Cache-Control", "no-store")
	c.Header("Referrer-Policy", "no-referrer")
	c.Redirect(http.StatusFound, to)
}

type exchangeRequest struct {
	Code string `json:"code"`
}

// Exchange handles POST /api/auth/oidc/exchange {"code"}: the body password login answers.
func (h *SignInHandler) Exchange(c *gin.Context) {
	var req exchangeRequest
	if !bindJSON(c, &req) {
		return
	}
	s, err := h.svc.Exchange(c.Request.Context(), req.Code)
	if err != nil {
		writeSignInError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, sessionResponse(s))
}

type identityJSON struct {
	ID         int64     `json:"id"`
	Provider   string    `json:"provider"`
	Email      string    `json:"email"`
	CreatedAt  timestamp `json:"createdAt"`
	LastUsedAt timestamp `json:"lastUsedAt"`
}

// Identities handles GET /api/user/identities.
func (h *SignInHandler) Identities(c *gin.Context) {
	list, err := h.svc.Identities(c.Request.Context(), viewerID(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]identityJSON, len(list))
	for i, id := range list {
		out[i] = identityJSON{ID: id.ID, Provider: id.Provider, Email: id.Email, CreatedAt: timestamp(id.CreatedAt), LastUsedAt: timestamp(id.LastUsedAt)}
	}
	renderJSON(c, http.StatusOK, gin.H{"identities": out})
}

// Unlink handles DELETE /api/user/identities/:id.
func (h *SignInHandler) Unlink(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.svc.Unlink(c.Request.Context(), viewerID(c), id); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *SignInHandler) setCookie(c *gin.Context, provider, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{Name: signInCookie, Value: value, Path: "/api/auth/oidc/" + url.PathEscape(provider) + "/callback",
		MaxAge: maxAge, HttpOnly: true, Secure: h.cfg.Secure, SameSite: http.SameSiteLaxMode})
}
