package domain

import (
	"strconv"
	"time"
)

// ReportReason is why a user reports something.
type ReportReason string

// Report reasons.
const (
	ReasonSpam    ReportReason = "spam"
	ReasonAbuse   ReportReason = "abuse"
	ReasonIllegal ReportReason = "illegal"
	ReasonOther   ReportReason = "other"
)

// ErrReportReason is the message for a reason outside ParseReportReason's list.
const ErrReportReason = "must be one of spam, abuse, illegal, other"

// ParseReportReason accepts the four reasons.
func ParseReportReason(s string) (ReportReason, bool) {
	switch r := ReportReason(s); r {
	case ReasonSpam, ReasonAbuse, ReasonIllegal, ReasonOther:
		return r, true
	}
	return "", false
}

// CaseStatus is where a moderation case (one reported target with its reports) stands.
type CaseStatus string

// Case statuses: open cases are the moderation queue.
const (
	CaseOpen     CaseStatus = "open"
	CaseResolved CaseStatus = "resolved"
)

// Resolutions of a case: hidden by a moderator, dismissed, or closed because the target is gone.
const (
	ResolutionHide    = "hide"
	ResolutionDismiss = "dismiss"
)

// Report is one user's report of a target.
type Report struct {
	ID         int64
	CaseID     int64
	ReporterID int64
	Reason     ReportReason
	Note       string
	Status     CaseStatus
	Target     ModerationTarget
	CreatedAt  time.Time
}

// ModerationCase is one reported target with its reports, as the moderation queue shows it.
// Target.Label is empty when the target is gone.
type ModerationCase struct {
	ID     int64
	Target ModerationTarget
	// ArticleSlug is the reported article's slug, or the reported comment's article's; Username
	// the reported user's. Empty when gone.
	ArticleSlug string
	Username    string
	Status      CaseStatus
	ReportCount int
	Reasons     []ReportReason
	NewestNote  string
	OpenedAt    time.Time
	UpdatedAt   time.Time
	ResolvedAt  time.Time // zero while open
	Resolution  string    // "" while open
}

// Position is the case's place in its queue: (opened_at, id) while open, (resolved_at, id) once
// resolved.
func (c ModerationCase) Position() Cursor {
	if c.Status == CaseResolved {
		return Cursor{CreatedAt: c.ResolvedAt, ID: c.ID}
	}
	return Cursor{CreatedAt: c.OpenedAt, ID: c.ID}
}

// ReportResolvedDetail is the notice a reporter gets when their report's case is resolved: it
// never names the action.
func ReportResolvedDetail(label string) string {
	return "Your report about " + label + " was reviewed."
}

// TargetLabel is how the queue, the log and the notices name a target: an article's slug, a
// user's name, "comment 12 on <slug>". A target that is gone (no name) is "<kind> <id>".
func TargetLabel(kind TargetKind, id int64, articleSlug, username string) string {
	switch {
	case kind == TargetArticle && articleSlug != "":
		return articleSlug
	case kind == TargetUser && username != "":
		return username
	case kind == TargetComment && articleSlug != "":
		return "comment " + strconv.FormatInt(id, 10) + " on " + articleSlug
	}
	return string(kind) + " " + strconv.FormatInt(id, 10)
}
