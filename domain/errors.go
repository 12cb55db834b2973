package domain

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrNotFound means the thing asked for does not exist, or is not visible to the caller.
// Repositories return it (wrapped) in place of driver-specific no-rows errors.
var ErrNotFound = errors.New("not found")

// ErrUnauthorized means the request carries no valid credentials: no token, a malformed,
// expired or forged token, or a token for a user that no longer exists.
var ErrUnauthorized = errors.New("unauthorized")

// ErrInvalidCredentials means a login named an unknown email or a wrong password. The two cases
// are deliberately indistinguishable to the client.
var ErrInvalidCredentials = errors.New("email or password is invalid")

// ErrForbidden means the caller is authenticated but may not act on this resource.
var ErrForbidden = errors.New("forbidden")

// ErrConflict means the request collides with the current state (a stale version, an illegal
// state transition, a duplicate request still in flight).
var ErrConflict = errors.New("conflict")

// ErrUnavailable means a dependency the request needs (PostgreSQL) cannot be reached right now;
// retrying later may succeed.
var ErrUnavailable = errors.New("service temporarily unavailable")

// ErrCommitUnknown means COMMIT failed in a way that leaves its outcome unknown (the connection
// broke while it ran): the unit of work may or may not have been applied, so it is not retried
// blindly. Callers that can, check; others report it (it comes wrapped with ErrUnavailable).
var ErrCommitUnknown = errors.New("transaction outcome unknown: the commit did not answer")

// ErrOverloaded means this instance is shedding load to protect a dependency (too many reads wait
// for PostgreSQL while Redis is down); retrying in a second may succeed. It is an ErrUnavailable.
var ErrOverloaded = fmt.Errorf("%w: too many requests wait for the database", ErrUnavailable)

// ValidationError reports client input that cannot be accepted, field by field. Each field maps to
// one or more human-readable messages, matching the RealWorld error body.
type ValidationError struct {
	Fields map[string][]string
}

// NewValidationError returns a ValidationError with one message for one field.
func NewValidationError(field, message string) *ValidationError {
	v := &ValidationError{}
	v.Add(field, message)
	return v
}

// Add records one more message for field.
func (v *ValidationError) Add(field, message string) {
	if v.Fields == nil {
		v.Fields = map[string][]string{}
	}
	v.Fields[field] = append(v.Fields[field], message)
}

// OrNil returns v as an error when it holds any message, else nil, so callers can collect problems
// and return once.
func (v *ValidationError) OrNil() error {
	if v == nil || len(v.Fields) == 0 {
		return nil
	}
	return v
}

func (v *ValidationError) Error() string {
	keys := make([]string, 0, len(v.Fields))
	for k := range v.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+strings.Join(v.Fields[k], ", "))
	}
	return "validation failed: " + strings.Join(parts, "; ")
}

// ErrEmailTaken means another account already uses this email address.
var ErrEmailTaken = errors.New("email has already been taken")

// ErrUsernameTaken means another account already uses this username (compared case-insensitively).
var ErrUsernameTaken = errors.New("username has already been taken")

// ErrSlugTaken means another article already has this slug; the service retries with a suffix.
var ErrSlugTaken = errors.New("slug has already been taken")

// ErrStaleVersion means an update named a version the article has moved past. It is a conflict.
var ErrStaleVersion = fmt.Errorf("%w: stale version", ErrConflict)

// ErrIllegalTransition means the article's current status does not allow the requested change
// (publishing a published article, withdrawing a draft). It is a conflict.
var ErrIllegalTransition = fmt.Errorf("%w: illegal status transition", ErrConflict)

// ErrCollectionNameTaken means the owner already has a collection with this name.
var ErrCollectionNameTaken = errors.New("collection name has already been taken")

// ErrCollectionLimit means the owner has the most collections one account may have.
var ErrCollectionLimit = errors.New("too many collections")

// ErrIdempotencyInFlight means a request with the same Idempotency-Key is still being processed.
var ErrIdempotencyInFlight = fmt.Errorf("%w: a request with this Idempotency-Key is still in flight", ErrConflict)

// ErrIdempotencyMismatch means an Idempotency-Key was reused for a different request.
var ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")

// ErrRefreshInvalid means a refresh token is unknown, expired, spent or of a revoked session.
var ErrRefreshInvalid = fmt.Errorf("%w: refresh token is invalid", ErrUnauthorized)

// ErrWrongCurrentPassword means a credential change named a current password that is not the
// account's. The caller is signed in, so it is forbidden, not unauthorized.
var ErrWrongCurrentPassword = fmt.Errorf("%w: current password is wrong", ErrForbidden)

// ErrWrongStepUpCode means a credential change named a login code (instead of a current
// password) that is not valid for the account's own email or phone.
var ErrWrongStepUpCode = fmt.Errorf("%w: code is invalid or has expired", ErrForbidden)
