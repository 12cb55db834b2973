package web

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=webhook.go -destination=mocks/webhook_mock.go -package=mocks

// WebhookService is what the webhook handlers need (service.WebhookService). site: the site-wide
// endpoints (/api/admin/webhooks), which the service lets admins only manage.
type WebhookService interface {
	Create(ctx context.Context, cred domain.Credential, site bool, in service.WebhookInput) (domain.Webhook, string, error)
	List(ctx context.Context, cred domain.Credential, site bool) ([]domain.Webhook, error)
	Get(ctx context.Context, cred domain.Credential, site bool, id int64) (domain.Webhook, error)
	Update(ctx context.Context, cred domain.Credential, site bool, id int64, in service.WebhookInput) (domain.Webhook, error)
	Delete(ctx context.Context, cred domain.Credential, site bool, id int64) error
	Deliveries(ctx context.Context, cred domain.Credential, site bool, id, before int64, limit int) (service.WebhookDeliveryList, error)
	Redeliver(ctx context.Context, cred domain.Credential, site bool, id, deliveryID int64) error
	Test(ctx context.Context, cred domain.Credential, site bool, id int64) error
}

// WebhookHandler serves /api/user/webhooks and /api/admin/webhooks.
type WebhookHandler struct {
	svc WebhookService
	log *slog.Logger
}

// NewWebhookHandler returns the handler.
func NewWebhookHandler(svc WebhookService, log *slog.Logger) *WebhookHandler {
	return &WebhookHandler{svc: svc, log: log}
}

type webhookJSON struct {
	ID           int64      `json:"id"`
	URL          string     `json:"url"`
	Events       []string   `json:"events"`
	Active       bool       `json:"active"`
	FailingSince *timestamp `json:"failingSince"`
	// Secret is shown once, in the answer to the create.
	Secret    string    `json:"secret,omitempty"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

func webhookOf(w domain.Webhook, secret string) webhookJSON {
	out := webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active, Secret: secret,
		CreatedAt: timestamp(w.CreatedAt), UpdatedAt: timestamp(w.UpdatedAt)}
	if out.Events == nil {
		out.Events = []string{}
	}
	if w.FailingSince != nil {
		t := timestamp(*w.FailingSince)
		out.FailingSince = &t
	}
	return out
}

type webhookRequest struct {
	Webhook struct {
		URL    *string  `json:"url"`
		Events []string `json:"events"`
		Active *bool    `json:"active"`
	} `json:"webhook"`
}

type webhookDeliveryJSON struct {
	ID          int64      `json:"id"`
	Event       string     `json:"event"`
	EventID     string     `json:"eventId"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	StatusCode  *int       `json:"statusCode"`
	LatencyMs   *int       `json:"latencyMs"`
	Response    string     `json:"response"`
	Error       string     `json:"error"`
	CreatedAt   timestamp  `json:"createdAt"`
	AttemptedAt *timestamp `json:"attemptedAt"`
	// AttemptLog is each attempt, newest first (attempts above is their count; statusCode to
	// attemptedAt repeat the newest, as before it was listed).
	AttemptLog []webhookAttemptJSON `json:"attemptLog"`
}

type webhookAttemptJSON struct {
	Attempt    int       `json:"attempt"`
	StatusCode *int      `json:"statusCode"`
	LatencyMs  int       `json:"latencyMs"`
	Response   string    `json:"response"`
	Error      string    `json:"error"`
	At         timestamp `json:"at"`
}

func webhookDeliveryOf(d domain.WebhookDelivery) webhookDeliveryJSON {
	out := webhookDeliveryJSON{ID: d.ID, Event: d.EventType, EventID: d.EventID, Status: string(d.Status), Attempts: d.Attempts,
		Response: d.Response, Error: d.Error, CreatedAt: timestamp(d.CreatedAt), AttemptLog: make([]webhookAttemptJSON, len(d.History))}
	for i, a := range d.History {
		out.AttemptLog[i] = webhookAttemptJSON{Attempt: a.Attempt, LatencyMs: a.LatencyMs, Response: a.Response, Error: a.Error, At: timestamp(a.At)}
		if a.StatusCode != 0 {
			out.AttemptLog[i].StatusCode = &a.StatusCode
		}
	}
	if d.StatusCode != 0 {
		out.StatusCode = &d.StatusCode
	}
	if d.AttemptedAt != nil {
		t := timestamp(*d.AttemptedAt)
		out.AttemptedAt = &t
		out.LatencyMs = &d.LatencyMs
	}
	return out
}

// Create handles POST {user,admin}/webhooks: 201 with the secret, shown this once.
func (h *WebhookHandler) Create(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		var req webhookRequest
		if !bindJSON(c, &req) {
			return
		}
		w, secret, err := h.svc.Create(c.Request.Context(), credentialOf(c), site,
			service.WebhookInput{URL: req.Webhook.URL, Events: req.Webhook.Events, Active: req.Webhook.Active})
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusCreated, gin.H{"webhook": webhookOf(w, secret)})
	}
}

// List handles GET {user,admin}/webhooks.
func (h *WebhookHandler) List(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		list, err := h.svc.List(c.Request.Context(), credentialOf(c), site)
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		out := make([]webhookJSON, len(list))
		for i, w := range list {
			out[i] = webhookOf(w, "")
		}
		renderJSON(c, http.StatusOK, gin.H{"webhooks": out})
	}
}

// Get handles GET {user,admin}/webhooks/:id.
func (h *WebhookHandler) Get(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		w, err := h.svc.Get(c.Request.Context(), credentialOf(c), site, id)
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusOK, gin.H{"webhook": webhookOf(w, "")})
	}
}

// Update handles PATCH {user,admin}/webhooks/:id with any of url, events, active.
func (h *WebhookHandler) Update(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		var req webhookRequest
		if !bindJSON(c, &req) {
			return
		}
		w, err := h.svc.Update(c.Request.Context(), credentialOf(c), site, id,
			service.WebhookInput{URL: req.Webhook.URL, Events: req.Webhook.Events, Active: req.Webhook.Active})
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusOK, gin.H{"webhook": webhookOf(w, "")})
	}
}

// Delete handles DELETE {user,admin}/webhooks/:id.
func (h *WebhookHandler) Delete(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		if err := h.svc.Delete(c.Request.Context(), credentialOf(c), site, id); err != nil {
			writeError(c, h.log, err)
			return
		}
		c.Status(http.StatusNoContent)
	}
}

type webhookDeliveriesEnvelope struct {
	Deliveries []webhookDeliveryJSON `json:"deliveries"`
	NextCursor string                `json:"nextCursor,omitempty"`
}

// Deliveries handles GET {user,admin}/webhooks/:id/deliveries?limit=&cursor=, newest first.
func (h *WebhookHandler) Deliveries(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		v := &domain.ValidationError{}
		limit := intParam(c, v, "limit", domain.DefaultPageLimit, 1, domain.MaxPageLimit)
		var before int64
		if s := c.Query("cursor"); s != "" {
			seq, ok := decodeSeqCursor(s)
			if !ok || seq <= 0 {
				v.Add("cursor", "is not a cursor this API returned")
			}
			before = seq
		}
		if v.OrNil() != nil {
			c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
			return
		}
		l, err := h.svc.Deliveries(c.Request.Context(), credentialOf(c), site, id, before, limit)
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		out := webhookDeliveriesEnvelope{Deliveries: make([]webhookDeliveryJSON, len(l.Items))}
		for i, d := range l.Items {
			out.Deliveries[i] = webhookDeliveryOf(d)
		}
		if l.NextBefore != 0 {
			out.NextCursor = encodeSeqCursor(l.NextBefore)
		}
		renderJSON(c, http.StatusOK, out)
	}
}

// Redeliver handles POST {user,admin}/webhooks/:id/deliveries/:delivery/redeliver: 202, the
// event is sent again as a new delivery.
func (h *WebhookHandler) Redeliver(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		did, err := strconv.ParseInt(c.Param("delivery"), 10, 64)
		if err != nil || did <= 0 {
			abortWith(c, http.StatusNotFound, "body", "not found")
			return
		}
		if err := h.svc.Redeliver(c.Request.Context(), credentialOf(c), site, id, did); err != nil {
			writeError(c, h.log, err)
			return
		}
		c.Status(http.StatusAccepted)
	}
}

// Test handles POST {user,admin}/webhooks/:id/test: 202, a webhook.ping delivery is on its way.
func (h *WebhookHandler) Test(site bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		if err := h.svc.Test(c.Request.Context(), credentialOf(c), site, id); err != nil {
			writeError(c, h.log, err)
			return
		}
		c.Status(http.StatusAccepted)
	}
}

// mountWebhooks mounts one scope's routes under base (/user/webhooks, /admin/webhooks).
func (h *WebhookHandler) mount(g gin.IRoutes, base string, site bool) {
	g.POST(base, h.Create(site))
	g.GET(base, h.List(site))
	g.GET(base+"/:id", h.Get(site))
	g.PATCH(base+"/:id", h.Update(site))
	g.DELETE(base+"/:id", h.Delete(site))
	g.GET(base+"/:id/deliveries", h.Deliveries(site))
	g.POST(base+"/:id/deliveries/:delivery/redeliver", h.Redeliver(site))
	g.POST(base+"/:id/test", h.Test(site))
}
