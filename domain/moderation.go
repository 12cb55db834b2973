package domain

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is what an account may do beyond its own content.
type Role string

// Roles, from least to most power.
const (
	RoleUser      Role = "user"
	RoleModerator Role = "moderator"
	RoleAdmin     Role = "admin"
)

// ParseRole accepts the three role names.
func ParseRole(s string) (Role, bool) {
	switch r := Role(s); r {
	case RoleUser, RoleModerator, RoleAdmin:
		return r, true
	}
	return "", false
}

// CanModerate reports whether the role may hide content, work the report queue and suspend.
func (r Role) CanModerate() bool { return r == RoleModerator || r == RoleAdmin }

// ErrRoleUnknown is the message for a role outside ParseRole's list.
const ErrRoleUnknown = "must be one of user, moderator, admin"

// Suspension is an account's suspension: in force while Until is after now. Until is
// SuspendedForever for a suspension without an end.
type Suspension struct {
	Until  time.Time
	Reason string
}

// SuspendedForever is the end of a suspension that has none (PostgreSQL's 'infinity' reads as a
// time far enough ahead).
var SuspendedForever = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// InForce reports whether the suspension holds at now.
func (s Suspension) InForce(now time.Time) bool { return !s.Until.IsZero() && s.Until.After(now) }

// Lifted reports whether no suspension is on record. A suspension's content (articles, comments)
// stays hidden from others until it is lifted — by a moderator, or by the job that runs at its
// end — so views follow this, not the clock, and agree with the articles the lift restores.
func (s Suspension) Lifted() bool { return s.Until.IsZero() }

// Forever reports whether the suspension has no end.
func (s Suspension) Forever() bool { return !s.Until.Before(SuspendedForever) }

// ModeratorMaxSuspension is the longest suspension a moderator (not an admin) may give.
const ModeratorMaxSuspension = 7 * 24 * time.Hour

// SuspendedError refuses every credential and login of a suspended account (403): it carries the
// reason and the end, which the error body shows.
type SuspendedError struct{ Suspension }

func (e *SuspendedError) Error() string {
	if e.Forever() {
		return "account suspended: " + e.Reason
	}
	return fmt.Sprintf("account suspended until %s: %s", e.Until.UTC().Format(time.RFC3339), e.Reason)
}

// ContentModeration is what moderation did to an article or comment, shown to its author only.
type ContentModeration struct {
	Hidden bool
	Reason string
}

// TargetKind names what a report or moderation action is about.
type TargetKind string

// Targets of reports and moderation.
const (
	TargetArticle TargetKind = "article"
	TargetComment TargetKind = "comment"
	TargetUser    TargetKind = "user"
)

// ModerationTarget is one reported or moderated thing. Label is how people name it (a slug, a
// username, "comment 12 on slug"): the log keeps it after the thing is gone.
type ModerationTarget struct {
	Kind  TargetKind
	ID    int64
	Label string
	// ArticleID is the article of a comment target; 0 otherwise.
	ArticleID int64
	// OwnerID is who wrote or is the target (the author of an article or comment, the user).
	OwnerID int64
}

// ModerationAction names an entry of the moderation log.
type ModerationAction string

// Moderation actions, as the log names them.
const (
	ActionHide          ModerationAction = "hide"
	ActionUnhide        ModerationAction = "unhide"
	ActionSuspend       ModerationAction = "suspend"
	ActionUnsuspend     ModerationAction = "unsuspend"
	ActionRole          ModerationAction = "role"
	ActionDismiss       ModerationAction = "dismiss"
	ActionSuspensionEnd ModerationAction = "suspension-ended"
)

// ModerationActions is every action, for the metrics' closed label set.
var ModerationActions = []ModerationAction{ActionHide, ActionUnhide, ActionSuspend, ActionUnsuspend, ActionRole, ActionDismiss, ActionSuspensionEnd}

// ModerationEntry is one line of the moderation log. ActorID is 0 for the system (a suspension
// that ended by itself) and for an operator at the command line.
type ModerationEntry struct {
	ID        int64
	ActorID   int64
	ActorName string
	Action    ModerationAction
	Target    ModerationTarget
	Reason    string
	At        time.Time
}

// Limits on moderation text.
const (
	MaxModerationReasonLen = 1000
	MaxReportNoteLen       = 1000
)

// ValidateModerationText adds a message to v when text (a reason or a note) is unacceptable:
// longer than max characters, invalid UTF-8, or holding NUL. Blank is the caller's decision.
func ValidateModerationText(v *ValidationError, field, text string, max int) {
	switch {
	case !utf8.ValidString(text):
		v.Add(field, "is not valid UTF-8")
	case strings.ContainsRune(text, 0):
		v.Add(field, "must not contain NUL characters")
	case utf8.RuneCountInString(text) > max:
		v.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", max))
	}
}

// Notice kinds: notifications that are not about a followed author's article.
const (
	NoticeContentHidden   = "moderation.hidden"
	NoticeContentRestored = "moderation.restored"
	NoticeReportResolved  = "report.resolved"
)

// Notice is a notification written by a moderation action, in its unit of work. EventID makes it
// once per action (the log entry's id).
type Notice struct {
	UserID    int64
	Kind      string
	ArticleID int64
	Detail    string
	EventID   string
}
