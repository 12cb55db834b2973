package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=report.go -destination=mocks/report_mock.go -package=mocks

// ReportStore files reports (repository/moderation.Reports).
type ReportStore interface {
	// File files r (its Target's Kind, ID and ArticleID, ReporterID, Reason, Note) into the
	// target's open case, opening one if none is; created is false when the reporter already has
	// an open report on the target, which is returned unchanged.
	File(ctx context.Context, r domain.Report) (report domain.Report, created bool, err error)
}

// ReportCases is the moderation queue's storage (repository/moderation.Cases).
type ReportCases interface {
	// List returns up to limit cases with status after cursor (nil: from the start): open ones
	// oldest first, resolved ones newest resolution first.
	List(ctx context.Context, status domain.CaseStatus, cursor *domain.Cursor, limit int) ([]domain.ModerationCase, error)
	// Get returns a case; domain.ErrNotFound when there is none.
	Get(ctx context.Context, id int64) (domain.ModerationCase, error)
	// LockIn holds the case's row in tx and returns it as it stands under the lock.
	LockIn(ctx context.Context, tx Tx, id int64) (domain.ModerationCase, error)
	// ResolveTargetIn resolves the target's open case and its reports in tx and notices each
	// reporter (event id eventID); false when the target has no open case.
	ResolveTargetIn(ctx context.Context, tx Tx, target domain.ModerationTarget, actorID int64, resolution string, eventID string) (bool, error)
}

// ReportLog is the moderation log as the report use cases write and read it
// (repository/moderation.Log).
type ReportLog interface {
	// AppendIn appends e in tx and returns it with its id and time.
	AppendIn(ctx context.Context, tx Tx, e domain.ModerationEntry) (domain.ModerationEntry, error)
	// List returns up to limit entries before cursor (nil: the newest), newest first.
	List(ctx context.Context, cursor *domain.Cursor, limit int) ([]domain.ModerationEntry, error)
}

// TargetHider hides a reported article or comment in the caller's unit of work: it hides the
// content, appends the log entry, notices the author and resolves the target's open case
// (ReportCases.ResolveTargetIn) itself. The moderation use case implements it.
type TargetHider interface {
	HideTargetIn(ctx context.Context, tx Tx, actor domain.User, target domain.ModerationTarget, reason string) error
}

// ReportInput is a report as a user files it: exactly one target (Article alone, Comment with
// its Article, or User), a reason and an optional note.
type ReportInput struct {
	Article string
	Comment int64
	User    string
	Reason  string
	Note    string
}

// CaseList is one page of the moderation queue; NextCursor is set only when a next page exists.
type CaseList struct {
	Cases      []domain.ModerationCase
	NextCursor *domain.Cursor
}

// LogList is one page of the moderation log, newest first.
type LogList struct {
	Entries    []domain.ModerationEntry
	NextCursor *domain.Cursor
}

// Resolution actions a moderator picks for a case in the queue.
const (
	ResolveHide    = "hide"
	ResolveDismiss = "dismiss"
)

// ReportService files reports, shows the moderation queue and the log, and resolves cases.
type ReportService struct {
	users    UserRepository
	articles ArticleRepository
	comments CommentRepository
	reports  ReportStore
	cases    ReportCases
	log      ReportLog
	hider    TargetHider
	uow      UnitOfWork
	stats    *ModerationStats
}

// NewReportService returns the report use cases over their ports.
func NewReportService(users UserRepository, articles ArticleRepository, comments CommentRepository, reports ReportStore,
	cases ReportCases, log ReportLog, hider TargetHider, uow UnitOfWork, stats *ModerationStats) *ReportService {
	return &ReportService{users: users, articles: articles, comments: comments, reports: reports, cases: cases,
		log: log, hider: hider, uow: uow, stats: stats}
}

// File files cred's report. Any signed-in user may, also with an API key that may write. The
// target must exist and be visible to the reporter (otherwise domain.ErrNotFound) and must not be
// the reporter's own (422). created is false for a repeat: the reporter's open report on the
// target, unchanged.
func (s *ReportService) File(ctx context.Context, cred domain.Credential, in ReportInput) (domain.Report, bool, error) {
	if cred.UserID == 0 {
		return domain.Report{}, false, domain.ErrUnauthorized
	}
	if !cred.CanWrite() {
		return domain.Report{}, false, domain.ErrForbidden
	}
	v := &domain.ValidationError{}
	switch {
	case in.User != "" && (in.Article != "" || in.Comment != 0):
		v.Add("report", "names more than one target: report an article, a comment (with its article) or a user")
	case in.User == "" && in.Article == "":
		v.Add("report", "names no target: give an article, a comment with its article, or a user")
	}
	if in.Comment < 0 {
		v.Add("comment", "must be a comment id")
	}
	reason, ok := domain.ParseReportReason(in.Reason)
	if !ok {
		v.Add("reason", domain.ErrReportReason)
	}
	domain.ValidateModerationText(v, "note", in.Note, domain.MaxReportNoteLen)
	if err := v.OrNil(); err != nil {
		return domain.Report{}, false, err
	}
	target, err := s.target(ctx, cred.UserID, in)
	if err != nil {
		return domain.Report{}, false, err
	}
	r, created, err := s.reports.File(ctx, domain.Report{ReporterID: cred.UserID, Target: target, Reason: reason, Note: in.Note})
	if err != nil {
		return domain.Report{}, false, err
	}
	r.Target = target
	return r, created, nil
}

// target finds what in names, as the reporter may see it.
func (s *ReportService) target(ctx context.Context, reporterID int64, in ReportInput) (domain.ModerationTarget, error) {
	if in.User != "" {
		u, err := s.users.GetByUsername(ctx, in.User)
		if err != nil {
			return domain.ModerationTarget{}, err
		}
		if u.ID == reporterID {
			return domain.ModerationTarget{}, domain.NewValidationError("user", "is you: you cannot report yourself")
		}
		return domain.ModerationTarget{Kind: domain.TargetUser, ID: u.ID, OwnerID: u.ID,
			Label: domain.TargetLabel(domain.TargetUser, u.ID, "", u.Username)}, nil
	}
	a, err := loadVisible(ctx, s.articles, reporterID, in.Article)
	if err != nil {
		return domain.ModerationTarget{}, err
	}
	if in.Comment == 0 {
		if a.AuthorID == reporterID {
			return domain.ModerationTarget{}, domain.NewValidationError("article", "is yours: you cannot report your own article")
		}
		return domain.ModerationTarget{Kind: domain.TargetArticle, ID: a.ID, OwnerID: a.AuthorID,
			Label: domain.TargetLabel(domain.TargetArticle, a.ID, a.Slug, "")}, nil
	}
	c, err := s.comments.Get(ctx, in.Comment)
	if err != nil {
		return domain.ModerationTarget{}, err
	}
	if c.ArticleID != a.ID {
		return domain.ModerationTarget{}, fmt.Errorf("%w: comment %d is not on %q", domain.ErrNotFound, c.ID, a.Slug)
	}
	if c.Deleted { // a placeholder of a deleted comment: nothing left to report
		return domain.ModerationTarget{}, fmt.Errorf("%w: comment %d is deleted", domain.ErrNotFound, c.ID)
	}
	if c.Moderation.Hidden && c.AuthorID != reporterID {
		// Hidden: only its author sees it, and to everyone else it is not there.
		return domain.ModerationTarget{}, fmt.Errorf("%w: comment %d is hidden", domain.ErrNotFound, c.ID)
	}
	if c.AuthorID == reporterID {
		return domain.ModerationTarget{}, domain.NewValidationError("comment", "is yours: you cannot report your own comment")
	}
	return domain.ModerationTarget{Kind: domain.TargetComment, ID: c.ID, ArticleID: a.ID, OwnerID: c.AuthorID,
		Label: domain.TargetLabel(domain.TargetComment, c.ID, a.Slug, "")}, nil
}

// Queue lists the moderation queue's cases with status ("" or "open": open cases, oldest first;
// "resolved": newest resolution first). Moderators and admins only.
func (s *ReportService) Queue(ctx context.Context, cred domain.Credential, status string, p domain.Page) (CaseList, error) {
	if _, err := moderatorOf(ctx, s.users, cred); err != nil {
		return CaseList{}, err
	}
	st := domain.CaseStatus(status)
	switch st {
	case "":
		st = domain.CaseOpen
	case domain.CaseOpen, domain.CaseResolved:
	default:
		return CaseList{}, domain.NewValidationError("status", "must be open or resolved")
	}
	limit := pageLimit(p)
	cs, err := s.cases.List(ctx, st, p.Cursor, limit+1)
	if err != nil {
		return CaseList{}, err
	}
	cs, more := domain.CutPage(cs, limit)
	out := CaseList{Cases: cs}
	if more {
		pos := cs[len(cs)-1].Position()
		out.NextCursor = &pos
	}
	return out, nil
}

// Resolve resolves case caseID: "dismiss" closes it and its reports and notices the reporters;
// "hide" hides the reported article or comment (TargetHider), which also resolves the case. Both
// in one unit of work, with one log entry. Moderators and admins only; a reported user is
// suspended or dismissed, never hidden (422). A resolved case is domain.ErrConflict.
func (s *ReportService) Resolve(ctx context.Context, cred domain.Credential, caseID int64, action, reason string) (domain.ModerationCase, error) {
	actor, err := moderatorOf(ctx, s.users, cred)
	if err != nil {
		return domain.ModerationCase{}, err
	}
	v := &domain.ValidationError{}
	switch action {
	case ResolveHide:
		if strings.TrimSpace(reason) == "" {
			v.Add("reason", "can't be blank when hiding")
		}
	case ResolveDismiss:
	default:
		v.Add("action", "must be hide or dismiss")
	}
	domain.ValidateModerationText(v, "reason", reason, domain.MaxModerationReasonLen)
	if err := v.OrNil(); err != nil {
		return domain.ModerationCase{}, err
	}
	c, err := s.cases.Get(ctx, caseID)
	if err != nil {
		return domain.ModerationCase{}, err
	}
	if action == ResolveHide && c.Target.Kind == domain.TargetUser {
		return domain.ModerationCase{}, domain.NewValidationError("action",
			"cannot hide a user: suspend the user instead (POST /api/moderation/users/:username/suspend), or dismiss")
	}
	if c.Status != domain.CaseOpen {
		return domain.ModerationCase{}, errCaseResolved(caseID)
	}
	err = s.uow.InTx(ctx, func(tx Tx) error {
		cur, err := s.cases.LockIn(ctx, tx, caseID)
		if err != nil {
			return err
		}
		if cur.Status != domain.CaseOpen {
			return errCaseResolved(caseID)
		}
		if action == ResolveHide {
			return s.hider.HideTargetIn(ctx, tx, actor, cur.Target, reason)
		}
		e, err := s.log.AppendIn(ctx, tx, domain.ModerationEntry{ActorID: actor.ID, ActorName: actor.Username,
			Action: domain.ActionDismiss, Target: cur.Target, Reason: reason})
		if err != nil {
			return err
		}
		resolved, err := s.cases.ResolveTargetIn(ctx, tx, cur.Target, actor.ID, domain.ResolutionDismiss, "mod:"+strconv.FormatInt(e.ID, 10))
		if err != nil {
			return err
		}
		if !resolved {
			return errCaseResolved(caseID)
		}
		tx.AfterCommit(func(context.Context) { s.stats.Acted(domain.ActionDismiss) })
		return nil
	})
	if err != nil {
		return domain.ModerationCase{}, err
	}
	return s.cases.Get(ctx, caseID)
}

func errCaseResolved(id int64) error {
	return fmt.Errorf("%w: moderation case %d is already resolved", domain.ErrConflict, id)
}

// ModerationLog lists the moderation log, newest first. Admins only.
func (s *ReportService) ModerationLog(ctx context.Context, cred domain.Credential, p domain.Page) (LogList, error) {
	if _, err := adminOf(ctx, s.users, cred); err != nil {
		return LogList{}, err
	}
	limit := pageLimit(p)
	es, err := s.log.List(ctx, p.Cursor, limit+1)
	if err != nil {
		return LogList{}, err
	}
	es, more := domain.CutPage(es, limit)
	out := LogList{Entries: es}
	if more {
		last := es[len(es)-1]
		out.NextCursor = &domain.Cursor{CreatedAt: last.At, ID: last.ID}
	}
	return out, nil
}

// pageLimit is p's limit within the paging bounds (the web edge checks them; a zero is the
// default).
func pageLimit(p domain.Page) int {
	if p.Limit <= 0 {
		return domain.DefaultPageLimit
	}
	return min(p.Limit, domain.MaxPageLimit)
}
