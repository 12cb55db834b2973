package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// MaxScheduleAhead is how far ahead an article may be scheduled (#32): a year.
const MaxScheduleAhead = 365 * 24 * time.Hour

// ParsePublishAt reads the publishAt of a schedule request (RFC 3339) and checks it against now:
// it must lie in the future and at most MaxScheduleAhead ahead. The time comes back in UTC,
// truncated to the microsecond PostgreSQL stores, so the publish job's compare-and-set (status
// scheduled at exactly this publish_at) matches the row it was scheduled with. Every refusal is a
// ValidationError on "publishAt".
func ParsePublishAt(raw string, now time.Time) (time.Time, error) {
	const field = "publishAt"
	switch {
	case !utf8.ValidString(raw):
		return time.Time{}, NewValidationError(field, "is not valid UTF-8")
	case strings.ContainsRune(raw, 0):
		return time.Time{}, NewValidationError(field, "must not contain NUL characters")
	case strings.TrimSpace(raw) == "":
		return time.Time{}, NewValidationError(field, "can't be blank")
	}
	at, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, NewValidationError(field, "must be an RFC 3339 time, like 2030-01-02T15:04:05Z")
	}
	at = at.UTC().Truncate(time.Microsecond)
	switch {
	case !at.After(now):
		return time.Time{}, NewValidationError(field, "must be in the future")
	case at.Sub(now) > MaxScheduleAhead:
		return time.Time{}, NewValidationError(field, "is too far ahead (at most one year)")
	}
	return at, nil
}
