package domain

import (
	"fmt"
	"time"
)

// Retention policies by name: one per kind of row the retention job prunes. Most are a table's
// name; a table pruned by two rules (sessions, jobs) has one name per rule. They are also the
// `table` label of the job's metrics and the rows of `inkwell prune`.
const (
	RetentionInbox           = "inbox"
	RetentionJobsDone        = "jobs_done"
	RetentionJobsDead        = "jobs_dead"
	RetentionNotifications   = "notifications"
	RetentionRefreshTokens   = "refresh_tokens"
	RetentionSessionsRevoked = "sessions_revoked"
	RetentionSessionsIdle    = "sessions_idle"
	RetentionIdempotencyKeys = "idempotency_keys"
	RetentionReadingHistory  = "reading_history"
	RetentionLoginCodes      = "login_codes"
	RetentionLoginCodeMeters = "login_code_meters"
	RetentionAccountCodes    = "account_codes"
)

// RetentionRule says which rows of one policy may go. An age rule (MaxAge > 0) deletes the rows
// whose age, by the policy's own time column, is past MaxAge. A cap rule (Newest > 0) keeps each
// owner's Newest rows and deletes the rest, checking the owners with a row newer than Since. A
// rule with neither is off: nothing of that kind is deleted.
type RetentionRule struct {
	Name   string
	MaxAge time.Duration
	Newest int
	Since  time.Duration
}

// Off reports whether the rule deletes nothing.
func (r RetentionRule) Off() bool { return r.MaxAge <= 0 && r.Newest <= 0 }

// String describes what the rule keeps, for logs and `inkwell prune`.
func (r RetentionRule) String() string {
	switch {
	case r.Newest > 0:
		return fmt.Sprintf("newest %d per owner", r.Newest)
	case r.MaxAge > 0:
		return "older than " + FormatRetention(r.MaxAge)
	default:
		return "off"
	}
}

// FormatRetention writes a retention age in whole days when it is one ("7d"), else as a Go
// duration; 0 is "off".
func FormatRetention(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return "off"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	default:
		return d.String()
	}
}
