package domain

import (
	"fmt"
	"strings"
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
	RetentionOutboxApplied   = "outbox_applied"
	RetentionOutboxDead      = "outbox_dead"
	RetentionUploads         = "uploads"
	RetentionSignInStates    = "sign_in_states" // sign-ins never finished, past their 10 minutes
	RetentionSignInCodes     = "sign_in_codes"  // exchange codes never exchanged, past their 60 seconds
	// RetentionWebhookDeliveries is webhook deliveries that are done (delivered or dead, never
	// pending ones), with their attempts.
	RetentionWebhookDeliveries = "webhook_deliveries"
	// RetentionUploadObjects is the media store's objects no upload uses any more (not a table).
	RetentionUploadObjects = "upload_objects"
)

// retentionClocks says, per policy, which time of a row its age is measured from.
var retentionClocks = map[string]string{
	RetentionInbox: "received", RetentionJobsDone: "finished", RetentionJobsDead: "finished",
	RetentionNotifications: "created", RetentionRefreshTokens: "expired", RetentionSessionsRevoked: "revoked",
	RetentionSessionsIdle: "last used", RetentionIdempotencyKeys: "created", RetentionLoginCodes: "expired",
	RetentionLoginCodeMeters: "window ended", RetentionAccountCodes: "expired",
	RetentionOutboxApplied: "created", RetentionOutboxDead: "created",
	RetentionUploads: "last referenced (or, never referenced, uploaded)", RetentionUploadObjects: "orphaned",
	RetentionSignInStates: "expired", RetentionSignInCodes: "expired",
	RetentionWebhookDeliveries: "made (delivered or dead ones)",
}

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

// String describes what the rule deletes, for `inkwell prune`.
func (r RetentionRule) String() string {
	switch {
	case r.Newest > 0:
		return fmt.Sprintf("all but the newest %d per user", r.Newest)
	case r.MaxAge > 0:
		clock, ok := retentionClocks[r.Name]
		if !ok {
			clock = "made"
		}
		return clock + " over " + FormatRetention(r.MaxAge) + " ago"
	default:
		return "off"
	}
}

// FormatRetention writes a retention age in whole days when it is one ("7d"), else as a Go
// duration without zero units ("1h", "90m"→"1h30m"); 0 is "off".
func FormatRetention(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return "off"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	default:
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
}
