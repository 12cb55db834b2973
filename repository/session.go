package repository

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// SessionRepository stores login sessions and their refresh tokens (hashed).
type SessionRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewSessionRepository returns the repository.
func NewSessionRepository(pool *pgxpool.Pool, q dao.Querier) *SessionRepository {
	return &SessionRepository{pool: pool, q: q}
}

// Create opens a session with its first refresh token, in a unit of work of its own.
func (r *SessionRepository) Create(ctx context.Context, sessionID string, userID int64, refreshHash []byte, expires time.Time) error {
	return inTx(ctx, r.pool, defaultRetry, func(tx *Tx) error {
		return r.CreateIn(ctx, tx, sessionID, userID, refreshHash, expires)
	})
}

// CreateIn opens a session with its first refresh token in the caller's unit of work.
func (r *SessionRepository) CreateIn(ctx context.Context, stx service.Tx, sessionID string, userID int64, refreshHash []byte, expires time.Time) error {
	tx := txOf(stx)
	return tx.savepoint(ctx, func(tx pgx.Tx) error {
		if err := queries.SessionInsert(ctx, tx, dao.SessionInsertParams{ID: sessionID, UserID: userID}); err != nil {
			return wrapf(err, "create session")
		}
		return wrapf(queries.RefreshTokenInsert(ctx, tx, dao.RefreshTokenInsertParams{TokenHash: refreshHash, SessionID: sessionID, ExpiresAt: expires}), "store refresh token")
	})
}

// Rotate spends the token with hash and stores nextHash in its session. The token row is locked
// first, so of two concurrent uses of one token exactly one rotates; the other finds it spent,
// which is what a replay by a thief looks like, and revokes the session.
func (r *SessionRepository) Rotate(ctx context.Context, hash, nextHash []byte, nextExpires, now time.Time) (int64, string, bool, error) {
	var userID int64
	var sessionID string
	var revoked bool
	err := inTx(ctx, r.pool, defaultRetry, func(tx *Tx) error {
		row, err := queries.RefreshTokenGetForUpdate(ctx, tx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.ErrRefreshInvalid
		}
		if err != nil {
			return wrapf(err, "load refresh token")
		}
		userID, sessionID = row.UserID, row.SessionID
		switch {
		case row.RevokedAt.Valid:
			return domain.ErrRefreshInvalid
		case row.SpentAt.Valid:
			if _, err := queries.SessionRevoke(ctx, tx, row.SessionID); err != nil {
				return wrapf(err, "revoke session")
			}
			revoked = true
			return nil // commit the revocation; the caller still gets ErrRefreshInvalid
		case !row.ExpiresAt.After(now) || !bytes.Equal(row.TokenHash, hash):
			return domain.ErrRefreshInvalid
		}
		if err := queries.RefreshTokenSpend(ctx, tx, hash); err != nil {
			return wrapf(err, "spend refresh token")
		}
		return wrapf(queries.RefreshTokenInsert(ctx, tx, dao.RefreshTokenInsertParams{TokenHash: nextHash, SessionID: row.SessionID, ExpiresAt: nextExpires}), "store refresh token")
	})
	if err == nil && revoked {
		err = domain.ErrRefreshInvalid
	}
	return userID, sessionID, revoked, err
}

// Revoke ends a session.
func (r *SessionRepository) Revoke(ctx context.Context, sessionID string) error {
	_, err := r.q.SessionRevoke(ctx, r.pool, sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return wrapf(err, "revoke session")
}

// IsRevoked reports whether a session was revoked (an unknown session counts as revoked).
func (r *SessionRepository) IsRevoked(ctx context.Context, sessionID string) (bool, error) {
	revoked, err := r.q.SessionIsRevoked(ctx, r.pool, sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	return revoked, wrapf(err, "check session")
}

// RevokedWithin lists the sessions revoked in the last d, by PostgreSQL's clock.
func (r *SessionRepository) RevokedWithin(ctx context.Context, d time.Duration) ([]string, error) {
	ids, err := r.q.SessionRevokedWithin(ctx, r.pool, d.Seconds())
	return ids, wrapf(err, "list sessions revoked in the last %s", d)
}

// APIKeyRepository stores API keys by hash.
type APIKeyRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewAPIKeyRepository returns the repository.
func NewAPIKeyRepository(pool *pgxpool.Pool, q dao.Querier) *APIKeyRepository {
	return &APIKeyRepository{pool: pool, q: q}
}

// Create stores a new key's hash and prefix.
func (r *APIKeyRepository) Create(ctx context.Context, userID int64, name, prefix string, hash []byte) (domain.APIKey, error) {
	row, err := r.q.APIKeyInsert(ctx, r.pool, dao.APIKeyInsertParams{UserID: userID, Name: name, Prefix: prefix, KeyHash: hash})
	if err != nil {
		return domain.APIKey{}, wrapf(err, "create api key")
	}
	return apiKeyFromRow(row), nil
}

// List returns userID's live keys.
func (r *APIKeyRepository) List(ctx context.Context, userID int64) ([]domain.APIKey, error) {
	rows, err := r.q.APIKeyListByUser(ctx, r.pool, userID)
	if err != nil {
		return nil, wrapf(err, "list api keys")
	}
	out := make([]domain.APIKey, len(rows))
	for i, row := range rows {
		out[i] = apiKeyFromRow(row)
	}
	return out, nil
}

// Revoke revokes userID's key id.
func (r *APIKeyRepository) Revoke(ctx context.Context, userID, id int64) error {
	n, err := r.q.APIKeyRevoke(ctx, r.pool, dao.APIKeyRevokeParams{ID: id, UserID: userID})
	if err != nil {
		return wrapf(err, "revoke api key")
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

// Authenticate returns the owner of the live key with hash.
func (r *APIKeyRepository) Authenticate(ctx context.Context, hash []byte) (int64, error) {
	uid, err := r.q.APIKeyAuthenticate(ctx, r.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, domain.ErrUnauthorized
	}
	return uid, wrapf(err, "authenticate api key")
}

func apiKeyFromRow(row dao.ApiKey) domain.APIKey {
	k := domain.APIKey{ID: row.ID, UserID: row.UserID, Name: row.Name, Prefix: row.Prefix, CreatedAt: row.CreatedAt}
	if row.LastUsedAt.Valid {
		t := row.LastUsedAt.Time
		k.LastUsedAt = &t
	}
	return k
}
