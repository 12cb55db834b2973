package service

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=moderation.go -destination=mocks/moderation_mock.go -package=mocks

// ModeratedArticles is the article storage moderation writes: hiding one article, and all of an
// author's published articles during a suspension. Each write drops the caches it touched from
// every instance after the commit, before the unit of work returns.
type ModeratedArticles interface {
	GetBySlug(ctx context.Context, slug string) (domain.Article, error)
	// GetByIDs returns the articles among ids that exist (summaries).
	GetByIDs(ctx context.Context, ids []int64) ([]domain.Article, error)
	HideIn(ctx context.Context, tx Tx, id int64, reason string) (domain.Article, error)
	// UnhideIn reports changed=false when the article was not hidden.
	UnhideIn(ctx context.Context, tx Tx, id int64) (a domain.Article, changed bool, err error)
	HideByAuthorIn(ctx context.Context, tx Tx, authorID int64) (int, error)
	RestoreByAuthorIn(ctx context.Context, tx Tx, authorID int64) (int, error)
}

// ModeratedComments is the comment storage moderation writes.
type ModeratedComments interface {
	Get(ctx context.Context, id int64) (domain.Comment, error)
	HideIn(ctx context.Context, tx Tx, id int64, reason string) (domain.Comment, error)
	UnhideIn(ctx context.Context, tx Tx, id int64) (domain.Comment, error)
}

// ModeratedAccounts is the account storage moderation writes: roles and suspensions.
type ModeratedAccounts interface {
	ActorReader
	GetByUsername(ctx context.Context, username string) (domain.User, error)
	SetRoleIn(ctx context.Context, tx Tx, id int64, role domain.Role) (domain.User, error)
	SuspendIn(ctx context.Context, tx Tx, id int64, until time.Time, reason string) (domain.User, error)
	// UnsuspendIn ends a suspension (with onlyIfEnded, only one whose end has come); changed is
	// false when there was none.
	UnsuspendIn(ctx context.Context, tx Tx, id int64, onlyIfEnded bool) (u domain.User, changed bool, err error)
}

// ModerationRecorder appends to the moderation log and writes notices, in the action's unit of
// work.
type ModerationRecorder interface {
	AppendIn(ctx context.Context, tx Tx, e domain.ModerationEntry) (domain.ModerationEntry, error)
	NoticeIn(ctx context.Context, tx Tx, n domain.Notice) error
}

// CaseResolver closes the open reports of a target an action settled, telling each reporter
// (without naming the action) under eventID. No open case is not an error.
type CaseResolver interface {
	ResolveTargetIn(ctx context.Context, tx Tx, target domain.ModerationTarget, actorID int64, resolution, eventID string) (bool, error)
}

// JobScheduler adds a durable job in the caller's unit of work (the end of a suspension).
type JobScheduler interface {
	EnqueueIn(ctx context.Context, tx Tx, j domain.NewJob) (bool, error)
}

// JobKindSuspensionEnd is the job that lifts a suspension at its end.
const JobKindSuspensionEnd = "suspension_end"

// SuspensionEndPayload is the payload of a suspension_end job.
type SuspensionEndPayload struct {
	UserID int64 `json:"userId"`
}

// ModerationService holds the moderators' and admins' actions on content and accounts. Every
// action checks the actor's role first (no storage is touched for anyone else), then writes the
// change, its log entry, its notices and the closing of the target's reports in one unit of work.
type ModerationService struct {
	articles ModeratedArticles
	comments ModeratedComments
	accounts ModeratedAccounts
	record   ModerationRecorder
	cases    CaseResolver
	jobs     JobScheduler
	uow      UnitOfWork
	stats    *ModerationStats
	now      func() time.Time
	log      *slog.Logger
}

// NewModerationService returns the service.
func NewModerationService(articles ModeratedArticles, comments ModeratedComments, accounts ModeratedAccounts, record ModerationRecorder,
	cases CaseResolver, jobs JobScheduler, uow UnitOfWork, stats *ModerationStats, now func() time.Time, log *slog.Logger) *ModerationService {
	return &ModerationService{articles: articles, comments: comments, accounts: accounts, record: record, cases: cases, jobs: jobs,
		uow: uow, stats: stats, now: now, log: log}
}

// operatorName is the actor the log names for the command line (`inkwell users role`) and for a
// suspension that ended by itself.
const (
	operatorName = "operator (command line)"
	systemName   = "inkwell (suspension ended)"
)

// SetRole gives username role; admins only.
func (s *ModerationService) SetRole(ctx context.Context, cred domain.Credential, username, role string) (domain.User, error) {
	actor, err := adminOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.User{}, err
	}
	return s.setRole(ctx, actor.ID, actor.Username, username, role)
}

// SetRoleByOperator is SetRole for the operator at the command line (how the first admin is made).
func (s *ModerationService) SetRoleByOperator(ctx context.Context, username, role string) (domain.User, error) {
	return s.setRole(ctx, 0, operatorName, username, role)
}

func (s *ModerationService) setRole(ctx context.Context, actorID int64, actorName, username, role string) (domain.User, error) {
	r, ok := domain.ParseRole(role)
	if !ok {
		return domain.User{}, domain.NewValidationError("role", domain.ErrRoleUnknown)
	}
	target, err := s.accounts.GetByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	var out domain.User
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if out, err = s.accounts.SetRoleIn(ctx, tx, target.ID, r); err != nil {
			return err
		}
		_, err = s.record.AppendIn(ctx, tx, domain.ModerationEntry{ActorID: actorID, ActorName: actorName, Action: domain.ActionRole,
			Target: userTarget(target), Reason: "role " + string(r)})
		return err
	})
	if err != nil {
		return domain.User{}, err
	}
	s.stats.Acted(domain.ActionRole)
	return out, nil
}

// HideArticle hides the article with slug from everyone but its author.
func (s *ModerationService) HideArticle(ctx context.Context, cred domain.Credential, slug, reason string) (domain.Article, error) {
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.Article{}, err
	}
	if err := requiredReason(reason); err != nil {
		return domain.Article{}, err
	}
	a, err := s.articles.GetBySlug(ctx, slug)
	if err != nil {
		return domain.Article{}, err
	}
	var out domain.Article
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		out, err = s.hideArticleIn(ctx, tx, actor, a, reason)
		return err
	})
	if err != nil {
		return domain.Article{}, err
	}
	s.stats.Acted(domain.ActionHide)
	return out, nil
}

// UnhideArticle shows a hidden article again (unless its author is suspended).
func (s *ModerationService) UnhideArticle(ctx context.Context, cred domain.Credential, slug, reason string) (domain.Article, error) {
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.Article{}, err
	}
	if err := optionalReason(reason); err != nil {
		return domain.Article{}, err
	}
	a, err := s.articles.GetBySlug(ctx, slug)
	if err != nil {
		return domain.Article{}, err
	}
	if !a.Moderation.Hidden {
		return a, nil
	}
	out := a
	acted := false
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if out, acted, err = s.articles.UnhideIn(ctx, tx, a.ID); err != nil || !acted {
			return err
		}
		target := articleTarget(out)
		e, err := s.record.AppendIn(ctx, tx, entry(actor, domain.ActionUnhide, target, reason))
		if err != nil {
			return err
		}
		return s.record.NoticeIn(ctx, tx, domain.Notice{UserID: out.AuthorID, Kind: domain.NoticeContentRestored, ArticleID: out.ID,
			EventID: eventID(e), Detail: fmt.Sprintf("Your article %q is shown again.", out.Title)})
	})
	if err != nil {
		return domain.Article{}, err
	}
	if acted {
		s.stats.Acted(domain.ActionUnhide)
	}
	return out, nil
}

// HideComment hides comment id from everyone but its author.
func (s *ModerationService) HideComment(ctx context.Context, cred domain.Credential, id int64, reason string) (domain.Comment, error) {
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.Comment{}, err
	}
	if err := requiredReason(reason); err != nil {
		return domain.Comment{}, err
	}
	c, err := s.comments.Get(ctx, id)
	if err != nil {
		return domain.Comment{}, err
	}
	var out domain.Comment
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		out, err = s.hideCommentIn(ctx, tx, actor, c, reason)
		return err
	})
	if err != nil {
		return domain.Comment{}, err
	}
	s.stats.Acted(domain.ActionHide)
	return out, nil
}

// UnhideComment shows a hidden comment again.
func (s *ModerationService) UnhideComment(ctx context.Context, cred domain.Credential, id int64, reason string) (domain.Comment, error) {
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.Comment{}, err
	}
	if err := optionalReason(reason); err != nil {
		return domain.Comment{}, err
	}
	c, err := s.comments.Get(ctx, id)
	if err != nil {
		return domain.Comment{}, err
	}
	if !c.Moderation.Hidden {
		return c, nil
	}
	var out domain.Comment
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if out, err = s.comments.UnhideIn(ctx, tx, c.ID); err != nil {
			return err
		}
		e, err := s.record.AppendIn(ctx, tx, entry(actor, domain.ActionUnhide, s.commentTarget(ctx, c), reason))
		if err != nil {
			return err
		}
		return s.record.NoticeIn(ctx, tx, domain.Notice{UserID: c.AuthorID, Kind: domain.NoticeContentRestored, ArticleID: c.ArticleID,
			EventID: eventID(e), Detail: fmt.Sprintf("Your comment %d is shown again.", c.ID)})
	})
	if err != nil {
		return domain.Comment{}, err
	}
	s.stats.Acted(domain.ActionUnhide)
	return out, nil
}

// HideTargetIn hides a reported article or comment in the caller's unit of work (resolving a
// report with "hide"). A user is suspended, not hidden.
func (s *ModerationService) HideTargetIn(ctx context.Context, tx Tx, actor domain.User, target domain.ModerationTarget, reason string) error {
	if err := requiredReason(reason); err != nil {
		return err
	}
	switch target.Kind {
	case domain.TargetArticle:
		a, err := s.articleByID(ctx, target)
		if err != nil {
			return err
		}
		_, err = s.hideArticleIn(ctx, tx, actor, a, reason)
		if err == nil {
			tx.AfterCommit(func(context.Context) { s.stats.Acted(domain.ActionHide) })
		}
		return err
	case domain.TargetComment:
		c, err := s.comments.Get(ctx, target.ID)
		if err != nil {
			return err
		}
		_, err = s.hideCommentIn(ctx, tx, actor, c, reason)
		if err == nil {
			tx.AfterCommit(func(context.Context) { s.stats.Acted(domain.ActionHide) })
		}
		return err
	}
	return domain.NewValidationError("action", "a reported user is suspended (POST /api/moderation/users/:username/suspend), not hidden; or dismiss the report")
}

// articleByID finds a reported article by its id (its slug may have changed since the report).
func (s *ModerationService) articleByID(ctx context.Context, target domain.ModerationTarget) (domain.Article, error) {
	arts, err := s.articles.GetByIDs(ctx, []int64{target.ID})
	if err != nil {
		return domain.Article{}, err
	}
	if len(arts) == 0 {
		return domain.Article{}, domain.ErrNotFound
	}
	return arts[0], nil
}

func (s *ModerationService) hideArticleIn(ctx context.Context, tx Tx, actor domain.User, a domain.Article, reason string) (domain.Article, error) {
	out, err := s.articles.HideIn(ctx, tx, a.ID, reason)
	if err != nil {
		return domain.Article{}, err
	}
	target := articleTarget(out)
	e, err := s.record.AppendIn(ctx, tx, entry(actor, domain.ActionHide, target, reason))
	if err != nil {
		return domain.Article{}, err
	}
	if err := s.record.NoticeIn(ctx, tx, domain.Notice{UserID: out.AuthorID, Kind: domain.NoticeContentHidden, ArticleID: out.ID,
		EventID: eventID(e), Detail: fmt.Sprintf("Your article %q was hidden by a moderator: %s", out.Title, reason)}); err != nil {
		return domain.Article{}, err
	}
	if _, err := s.cases.ResolveTargetIn(ctx, tx, target, actor.ID, "hide", eventID(e)); err != nil {
		return domain.Article{}, err
	}
	return out, nil
}

func (s *ModerationService) hideCommentIn(ctx context.Context, tx Tx, actor domain.User, c domain.Comment, reason string) (domain.Comment, error) {
	out, err := s.comments.HideIn(ctx, tx, c.ID, reason)
	if err != nil {
		return domain.Comment{}, err
	}
	target := s.commentTarget(ctx, c)
	e, err := s.record.AppendIn(ctx, tx, entry(actor, domain.ActionHide, target, reason))
	if err != nil {
		return domain.Comment{}, err
	}
	// A placeholder (threaded comments: deleted, kept for its replies) has no author to tell.
	if c.AuthorID != 0 {
		if err := s.record.NoticeIn(ctx, tx, domain.Notice{UserID: c.AuthorID, Kind: domain.NoticeContentHidden, ArticleID: c.ArticleID,
			EventID: eventID(e), Detail: fmt.Sprintf("Your comment %d was hidden by a moderator: %s", c.ID, reason)}); err != nil {
			return domain.Comment{}, err
		}
	}
	if _, err := s.cases.ResolveTargetIn(ctx, tx, target, actor.ID, "hide", eventID(e)); err != nil {
		return domain.Comment{}, err
	}
	return out, nil
}

// Suspend suspends username: every session, refresh token and API key of the account is refused
// from the next request on every instance, logins too, and its articles are hidden from others
// until the suspension ends (at Until, by a durable job, or by Unsuspend). Admins may suspend
// anyone but themselves, for any time; moderators only non-admins, for at most
// domain.ModeratorMaxSuspension.
// until nil means no end.
func (s *ModerationService) Suspend(ctx context.Context, cred domain.Credential, username, reason string, until *time.Time) (domain.User, error) {
	in := struct {
		Reason string
		Until  *time.Time
	}{reason, until}
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.User{}, err
	}
	now := s.now()
	v := &domain.ValidationError{}
	addReasonRequired(v, in.Reason)
	end := domain.SuspendedForever
	switch {
	case in.Until == nil && actor.Role != domain.RoleAdmin:
		v.Add("until", fmt.Sprintf("is required: moderators suspend for at most %d days; ask an admin for longer", int(domain.ModeratorMaxSuspension.Hours()/24)))
	case in.Until == nil:
	case !in.Until.After(now):
		v.Add("until", "must be in the future")
	case actor.Role != domain.RoleAdmin && in.Until.Sub(now) > domain.ModeratorMaxSuspension:
		v.Add("until", fmt.Sprintf("is too far: moderators suspend for at most %d days; ask an admin for longer", int(domain.ModeratorMaxSuspension.Hours()/24)))
	case in.Until.After(domain.SuspendedForever):
		v.Add("until", "is too far; send null for a suspension without an end")
	default:
		end = in.Until.UTC()
	}
	if err := v.OrNil(); err != nil {
		return domain.User{}, err
	}
	target, err := s.accounts.GetByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	if target.ID == actor.ID {
		return domain.User{}, domain.NewValidationError("username", "is you: you cannot suspend yourself")
	}
	if target.Role == domain.RoleAdmin && actor.Role != domain.RoleAdmin {
		return domain.User{}, domain.ErrForbidden
	}
	var out domain.User
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if out, err = s.accounts.SuspendIn(ctx, tx, target.ID, end, in.Reason); err != nil {
			return err
		}
		if _, err := s.articles.HideByAuthorIn(ctx, tx, target.ID); err != nil {
			return err
		}
		reason := in.Reason
		if end != domain.SuspendedForever {
			reason += " (until " + end.Format(time.RFC3339) + ")"
		}
		e, err := s.record.AppendIn(ctx, tx, entry(actor, domain.ActionSuspend, userTarget(target), reason))
		if err != nil {
			return err
		}
		if _, err := s.cases.ResolveTargetIn(ctx, tx, userTarget(target), actor.ID, "hide", eventID(e)); err != nil {
			return err
		}
		if end == domain.SuspendedForever {
			return nil
		}
		payload, err := json.Marshal(SuspensionEndPayload{UserID: target.ID})
		if err != nil {
			return err
		}
		_, err = s.jobs.EnqueueIn(ctx, tx, domain.NewJob{Queue: QueueDefault, Kind: JobKindSuspensionEnd, Payload: payload, RunAt: end,
			MaxAttempts: 10, DeleteWhenDone: true,
			UniqueKey: "suspension_end:" + strconv.FormatInt(target.ID, 10) + ":" + strconv.FormatInt(end.Unix(), 10)})
		return err
	})
	if err != nil {
		return domain.User{}, err
	}
	s.stats.Acted(domain.ActionSuspend)
	return out, nil
}

// Unsuspend ends username's suspension now and shows the articles it hid again.
func (s *ModerationService) Unsuspend(ctx context.Context, cred domain.Credential, username, reason string) (domain.User, error) {
	actor, err := moderatorOf(ctx, s.accounts, cred)
	if err != nil {
		return domain.User{}, err
	}
	if err := optionalReason(reason); err != nil {
		return domain.User{}, err
	}
	target, err := s.accounts.GetByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	if target.Role == domain.RoleAdmin && actor.Role != domain.RoleAdmin {
		return domain.User{}, domain.ErrForbidden
	}
	out, acted, err := s.unsuspend(ctx, target, false, entry(actor, domain.ActionUnsuspend, userTarget(target), reason))
	if err != nil {
		return domain.User{}, err
	}
	if !acted {
		return target, nil
	}
	s.stats.Acted(domain.ActionUnsuspend)
	return out, nil
}

// EndSuspension lifts userID's suspension if its end has come (the suspension_end job; a later
// suspension that replaced it is left alone).
func (s *ModerationService) EndSuspension(ctx context.Context, userID int64) error {
	target, err := s.accounts.GetByID(ctx, userID)
	if err != nil {
		return err
	}
	_, acted, err := s.unsuspend(ctx, target, true, domain.ModerationEntry{ActorName: systemName, Action: domain.ActionSuspensionEnd,
		Target: userTarget(target)})
	if err == nil && acted {
		s.stats.Acted(domain.ActionSuspensionEnd)
	}
	return err
}

func (s *ModerationService) unsuspend(ctx context.Context, target domain.User, onlyIfEnded bool, e domain.ModerationEntry) (domain.User, bool, error) {
	var out domain.User
	var acted bool
	err := s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if out, acted, err = s.accounts.UnsuspendIn(ctx, tx, target.ID, onlyIfEnded); err != nil || !acted {
			return err
		}
		if _, err := s.articles.RestoreByAuthorIn(ctx, tx, target.ID); err != nil {
			return err
		}
		_, err = s.record.AppendIn(ctx, tx, e)
		return err
	})
	return out, acted, err
}

func entry(actor domain.User, action domain.ModerationAction, target domain.ModerationTarget, reason string) domain.ModerationEntry {
	return domain.ModerationEntry{ActorID: actor.ID, ActorName: actor.Username, Action: action, Target: target, Reason: reason}
}

func articleTarget(a domain.Article) domain.ModerationTarget {
	return domain.ModerationTarget{Kind: domain.TargetArticle, ID: a.ID, Label: a.Slug, OwnerID: a.AuthorID}
}

// commentTarget names a comment as the report queue does ("comment 12 on its-article"). The
// article's slug is only a label: if it cannot be read, the log says "comment 12".
func (s *ModerationService) commentTarget(ctx context.Context, c domain.Comment) domain.ModerationTarget {
	slug := ""
	if arts, err := s.articles.GetByIDs(ctx, []int64{c.ArticleID}); err == nil && len(arts) == 1 {
		slug = arts[0].Slug
	}
	return domain.ModerationTarget{Kind: domain.TargetComment, ID: c.ID, Label: domain.TargetLabel(domain.TargetComment, c.ID, slug, ""),
		ArticleID: c.ArticleID, OwnerID: c.AuthorID}
}

func userTarget(u domain.User) domain.ModerationTarget {
	return domain.ModerationTarget{Kind: domain.TargetUser, ID: u.ID, Label: u.Username, OwnerID: u.ID}
}

// eventID names a log entry's notices, so each is written once per reader.
func eventID(e domain.ModerationEntry) string { return "mod:" + strconv.FormatInt(e.ID, 10) }

func requiredReason(reason string) error {
	v := &domain.ValidationError{}
	addReasonRequired(v, reason)
	return v.OrNil()
}

func addReasonRequired(v *domain.ValidationError, reason string) {
	if strings.TrimSpace(reason) == "" {
		v.Add("reason", "can't be blank: say why, the author and the log see it")
		return
	}
	domain.ValidateModerationText(v, "reason", reason, domain.MaxModerationReasonLen)
}

func optionalReason(reason string) error {
	v := &domain.ValidationError{}
	domain.ValidateModerationText(v, "reason", reason, domain.MaxModerationReasonLen)
	return v.OrNil()
}
