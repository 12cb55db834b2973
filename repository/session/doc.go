// Package session is the storage room of sessions: login sessions with their refresh tokens, and
// API keys. Revocation marks live in Redis (cache/session_revocations.go); the use cases are
// service/session*.go. This package imports no core repository.
package session
