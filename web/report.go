package web

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=report.go -destination=mocks/report_mock.go -package=mocks

// ReportService is what the report, queue and log handlers need.
type ReportService interface {
	File(ctx context.Context, cred domain.Credential, in service.ReportInput) (domain.Report, bool, error)
	Queue(ctx context.Context, cred domain.Credential, status string, p domain.Page) (service.CaseList, error)
	Resolve(ctx context.Context, cred domain.Credential, caseID int64, action, reason string) (domain.ModerationCase, error)
	ModerationLog(ctx context.Context, cred domain.Credential, p domain.Page) (service.LogList, error)
}

// DefaultReportRate is the per-user budget of filed reports (POST /api/reports), on top of the
// write budget: enough for a reader who meets a spam wave, too little to flood the queue.
var DefaultReportRate = RateRule{Name: "reports", Limit: 20, Window: time.Hour}

// ReportHandler serves reports, the moderation queue and the moderation log.
type ReportHandler struct {
	svc ReportService
	log *slog.Logger
}

// NewReportHandler returns the handler.
func NewReportHandler(svc ReportService, log *slog.Logger) *ReportHandler {
	return &ReportHandler{svc: svc, log: log}
}

type fileReportRequest struct {
	Report struct {
		Article string `json:"article"`
		Comment int64  `json:"comment"`
		User    string `json:"user"`
		Reason  string `json:"reason"`
		Note    string `json:"note"`
	} `json:"report"`
}

// reportTargetJSON names a report's target the way the client named it.
type reportTargetJSON struct {
	Kind    string `json:"kind"`
	Article string `json:"article,omitempty"`
	Comment int64  `json:"comment,omitempty"`
	User    string `json:"user,omitempty"`
}

type reportJSON struct {
	ID        int64            `json:"id"`
	Status    string           `json:"status"`
	Reason    string           `json:"reason"`
	Note      string           `json:"note"`
	Target    reportTargetJSON `json:"target"`
	CreatedAt timestamp        `json:"createdAt"`
}

// File handles POST /api/reports: 201 with the new report, 200 with the reporter's open report
// on the same target when there is one.
func (h *ReportHandler) File(c *gin.Context) {
	var req fileReportRequest
	if !bindJSON(c, &req) {
		return
	}
	in := service.ReportInput(req.Report)
	r, created, err := h.svc.File(c.Request.Context(), credentialOf(c), in)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	target := reportTargetJSON{Kind: string(r.Target.Kind)}
	switch r.Target.Kind {
	case domain.TargetArticle:
		target.Article = in.Article
	case domain.TargetComment:
		target.Article, target.Comment = in.Article, r.Target.ID
	case domain.TargetUser:
		target.User = in.User
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	renderJSON(c, status, gin.H{"report": reportJSON{ID: r.ID, Status: string(r.Status), Reason: string(r.Reason), Note: r.Note,
		Target: target, CreatedAt: timestamp(r.CreatedAt)}})
}

type caseTargetJSON struct {
	Kind    string `json:"kind"`
	Label   string `json:"label"`
	Article string `json:"article,omitempty"`
	Comment int64  `json:"comment,omitempty"`
	User    string `json:"user,omitempty"`
}

type caseJSON struct {
	ID          int64          `json:"id"`
	Status      string         `json:"status"`
	Target      caseTargetJSON `json:"target"`
	ReportCount int            `json:"reportCount"`
	Reasons     []string       `json:"reasons"`
	NewestNote  string         `json:"newestNote"`
	OpenedAt    timestamp      `json:"openedAt"`
	UpdatedAt   timestamp      `json:"updatedAt"`
	ResolvedAt  *timestamp     `json:"resolvedAt,omitempty"`
	Resolution  string         `json:"resolution,omitempty"`
}

func caseOf(m domain.ModerationCase) caseJSON {
	t := caseTargetJSON{Kind: string(m.Target.Kind), Label: m.Target.Label}
	switch m.Target.Kind {
	case domain.TargetArticle:
		t.Article = m.ArticleSlug
	case domain.TargetComment:
		t.Article, t.Comment = m.ArticleSlug, m.Target.ID
	case domain.TargetUser:
		t.User = m.Username
	}
	out := caseJSON{ID: m.ID, Status: string(m.Status), Target: t, ReportCount: m.ReportCount, Reasons: make([]string, len(m.Reasons)),
		NewestNote: m.NewestNote, OpenedAt: timestamp(m.OpenedAt), UpdatedAt: timestamp(m.UpdatedAt), Resolution: m.Resolution}
	for i, r := range m.Reasons {
		out.Reasons[i] = string(r)
	}
	if !m.ResolvedAt.IsZero() {
		at := timestamp(m.ResolvedAt)
		out.ResolvedAt = &at
	}
	return out
}

// Queue handles GET /api/moderation/reports?status=open|resolved&cursor=&limit=.
func (h *ReportHandler) Queue(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.svc.Queue(c.Request.Context(), credentialOf(c), c.Query("status"), p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	items := make([]caseJSON, len(l.Cases))
	for i, m := range l.Cases {
		items[i] = caseOf(m)
	}
	body := gin.H{"reports": items}
	if cur := encodeCursor(l.NextCursor); cur != "" {
		body["nextCursor"] = cur
	}
	renderJSON(c, http.StatusOK, body)
}

type resolveRequest struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// Resolve handles POST /api/moderation/reports/:id/resolve {"action": "hide"|"dismiss", "reason"}.
func (h *ReportHandler) Resolve(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		abortWith(c, http.StatusNotFound, "body", "not found")
		return
	}
	var req resolveRequest
	if !bindJSON(c, &req) {
		return
	}
	m, err := h.svc.Resolve(c.Request.Context(), credentialOf(c), id, req.Action, req.Reason)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"report": caseOf(m)})
}

type logEntryJSON struct {
	Action string `json:"action"`
	Actor  string `json:"actor"`
	Target struct {
		Kind  string `json:"kind"`
		Label string `json:"label"`
	} `json:"target"`
	Reason string    `json:"reason"`
	At     timestamp `json:"at"`
}

// Log handles GET /api/moderation/log?cursor=&limit=.
func (h *ReportHandler) Log(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.svc.ModerationLog(c.Request.Context(), credentialOf(c), p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	items := make([]logEntryJSON, len(l.Entries))
	for i, e := range l.Entries {
		items[i] = logEntryJSON{Action: string(e.Action), Actor: e.ActorName, Reason: e.Reason, At: timestamp(e.At)}
		items[i].Target.Kind, items[i].Target.Label = string(e.Target.Kind), e.Target.Label
	}
	body := gin.H{"entries": items}
	if cur := encodeCursor(l.NextCursor); cur != "" {
		body["nextCursor"] = cur
	}
	renderJSON(c, http.StatusOK, body)
}
