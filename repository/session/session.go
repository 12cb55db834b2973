package session

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// The scopes of UserLockScope this room takes: each serializes one user's writes of what a cap
// counts. The names are the locks' identities, shared with instances of other versions during a
// rolling deploy (the core repository holds the collections' scope).
const (
	lockScopeAPIKeys  = "api_keys"
	lockScopeSessions = "sessions"
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

// Create opens a session with its first refresh token, in a unit of work of its own, and ends
// the user's sessions beyond the keep most recently used (see CreateIn).
func (r *SessionRepository) Create(ctx context.Context, sessionID string, userID int64, userAgent string, refreshHash []byte, expires time.Time, keep int) ([]string, error) {
	var ended []string
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		ended, err = r.CreateIn(ctx, tx, sessionID, userID, userAgent, refreshHash, expires, keep)
		return err
	})
	return ended, err
}

// CreateIn opens a session with its first refresh token in the caller's unit of work, then ends
// the user's sessions beyond the keep most recently used, the new one counted, and returns their
// ids. Starts for one user take a transaction-scoped lock first, so two of them cannot both
// count the other's session out and leave one too many.
func (r *SessionRepository) CreateIn(ctx context.Context, stx service.Tx, sessionID string, userID int64, userAgent string, refreshHash []byte, expires time.Time, keep int) ([]string, error) {
	tx := pg.TxOf(stx)
	var ended []string
	err := tx.Savepoint(ctx, func(tx pgx.Tx) error {
		if err := r.q.UserLockScope(ctx, tx, dao.UserLockScopeParams{Scope: lockScopeSessions, UserID: userID}); err != nil {
			return pg.Wrapf(err, "lock sessions of user %d", userID)
		}
		if err := r.q.SessionInsert(ctx, tx, dao.SessionInsertParams{ID: sessionID, UserID: userID, UserAgent: userAgent}); err != nil {
			return pg.Wrapf(err, "create session")
		}
		if err := r.q.RefreshTokenInsert(ctx, tx, dao.RefreshTokenInsertParams{TokenHash: refreshHash, SessionID: sessionID, ExpiresAt: expires}); err != nil {
			return pg.Wrapf(err, "store refresh token")
		}
		var err error
		ended, err = r.q.SessionRevokeBeyond(ctx, tx, dao.SessionRevokeBeyondParams{UserID: userID, Keep: int32(keep)})
		return pg.Wrapf(err, "end sessions of user %d beyond %d", userID, keep)
	})
	return ended, err
}

// Rotate spends the token with hash and stores nextHash in its session. The token row is locked
// first, so of two concurrent uses of one token exactly one rotates; the other finds it spent,
// which is what a replay by a thief looks like, and revokes the session.
func (r *SessionRepository) Rotate(ctx context.Context, hash, nextHash []byte, nextExpires, now time.Time) (int64, string, bool, error) {
	var userID int64
	var sessionID string
	var revoked bool
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		row, err := r.q.RefreshTokenGetForUpdate(ctx, tx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.ErrRefreshInvalid
		}
		if err != nil {
			return pg.Wrapf(err, "load refresh token")
		}
		userID, sessionID = row.UserID, row.SessionID
		switch {
		case row.RevokedAt.Valid:
			return domain.ErrRefreshInvalid
		case row.SpentAt.Valid:
			if _, err := r.q.SessionRevoke(ctx, tx, row.SessionID); err != nil {
				return pg.Wrapf(err, "revoke session")
			}
			revoked = true
			return nil // commit the revocation; the caller still gets ErrRefreshInvalid
		case !row.ExpiresAt.After(now) || !bytes.Equal(row.TokenHash, hash):
			return domain.ErrRefreshInvalid
		}
		if err := r.q.RefreshTokenSpend(ctx, tx, hash); err != nil {
			return pg.Wrapf(err, "spend refresh token")
		}
		if err := r.q.SessionTouch(ctx, tx, row.SessionID); err != nil {
			return pg.Wrapf(err, "note session use")
		}
		return pg.Wrapf(r.q.RefreshTokenInsert(ctx, tx, dao.RefreshTokenInsertParams{TokenHash: nextHash, SessionID: row.SessionID, ExpiresAt: nextExpires}), "store refresh token")
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
	return pg.Wrapf(err, "revoke session")
}

// RevokeOwned ends userID's live session sessionID; any other is domain.ErrNotFound.
func (r *SessionRepository) RevokeOwned(ctx context.Context, userID int64, sessionID string) error {
	n, err := r.q.SessionRevokeOwned(ctx, r.pool, dao.SessionRevokeOwnedParams{ID: sessionID, UserID: userID})
	if err != nil {
		return pg.Wrapf(err, "revoke session")
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

// RevokeAll ends every live session of userID and returns their ids.
func (r *SessionRepository) RevokeAll(ctx context.Context, userID int64) ([]string, error) {
	var ids []string
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		ids, err = r.RevokeAllIn(ctx, tx, userID, "")
		return err
	})
	return ids, err
}

// RevokeAllIn ends every live session of userID but keep in the caller's unit of work.
func (r *SessionRepository) RevokeAllIn(ctx context.Context, stx service.Tx, userID int64, keep string) ([]string, error) {
	ids, err := r.q.SessionRevokeAllByUser(ctx, pg.TxOf(stx), dao.SessionRevokeAllByUserParams{UserID: userID, Keep: keep})
	return ids, pg.Wrapf(err, "revoke sessions of user %d", userID)
}

// ListLive lists userID's sessions that can still be refreshed.
func (r *SessionRepository) ListLive(ctx context.Context, userID int64) ([]domain.SessionInfo, error) {
	rows, err := r.q.SessionListLiveByUser(ctx, r.pool, userID)
	if err != nil {
		return nil, pg.Wrapf(err, "list sessions of user %d", userID)
	}
	out := make([]domain.SessionInfo, len(rows))
	for i, row := range rows {
		out[i] = domain.SessionInfo{ID: row.ID, UserAgent: row.UserAgent, CreatedAt: row.CreatedAt}
		if row.LastUsedAt.Valid {
			t := row.LastUsedAt.Time
			out[i].LastUsedAt = &t
		}
	}
	return out, nil
}

// IsRevoked reports whether a session was revoked (an unknown session counts as revoked).
func (r *SessionRepository) IsRevoked(ctx context.Context, sessionID string) (bool, error) {
	revoked, err := r.q.SessionIsRevoked(ctx, r.pool, sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	return revoked, pg.Wrapf(err, "check session")
}

// RevokedWithin lists the sessions revoked in the last d, by PostgreSQL's clock.
func (r *SessionRepository) RevokedWithin(ctx context.Context, d time.Duration) ([]string, error) {
	ids, err := r.q.SessionRevokedWithin(ctx, r.pool, d.Seconds())
	return ids, pg.Wrapf(err, "list sessions revoked in the last %s", d)
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

// Create stores a new key's hash, prefix and scopes unless userID holds max live keys already
// (domain.ErrAPIKeyLimit). Creations by one user take a transaction-scoped lock first, so the
// count and the insert are one step: concurrent creates at the cap cannot all pass the count.
func (r *APIKeyRepository) Create(ctx context.Context, userID int64, name, prefix string, hash []byte, scopes []domain.Scope, max int) (domain.APIKey, error) {
	var created dao.ApiKey
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := r.q.UserLockScope(ctx, tx, dao.UserLockScopeParams{Scope: lockScopeAPIKeys, UserID: userID}); err != nil {
			return pg.Wrapf(err, "lock api keys of user %d", userID)
		}
		live, err := r.q.APIKeyCountLive(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "count api keys of user %d", userID)
		}
		if int(live) >= max {
			return domain.ErrAPIKeyLimit
		}
		if len(scopes) == 0 {
			scopes = []domain.Scope{domain.ScopeWrite}
		}
		names := make([]string, len(scopes))
		for i, s := range scopes {
			names[i] = string(s)
		}
		created, err = r.q.APIKeyInsert(ctx, tx, dao.APIKeyInsertParams{UserID: userID, Name: name, Prefix: prefix, KeyHash: hash, Scopes: names})
		return pg.Wrapf(err, "create api key")
	})
	if err != nil {
		return domain.APIKey{}, err
	}
	return apiKeyFromRow(created), nil
}

// RevokeAllIn revokes every live key of userID in the caller's unit of work.
func (r *APIKeyRepository) RevokeAllIn(ctx context.Context, stx service.Tx, userID int64) error {
	_, err := r.q.APIKeyRevokeAllByUser(ctx, pg.TxOf(stx), userID)
	return pg.Wrapf(err, "revoke api keys of user %d", userID)
}

// List returns userID's live keys.
func (r *APIKeyRepository) List(ctx context.Context, userID int64) ([]domain.APIKey, error) {
	rows, err := r.q.APIKeyListByUser(ctx, r.pool, userID)
	if err != nil {
		return nil, pg.Wrapf(err, "list api keys")
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
		return pg.Wrapf(err, "revoke api key")
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

// Authenticate returns the live key with hash as a credential.
func (r *APIKeyRepository) Authenticate(ctx context.Context, hash []byte) (domain.Credential, error) {
	row, err := r.q.APIKeyAuthenticate(ctx, r.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Credential{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.Credential{}, pg.Wrapf(err, "authenticate api key")
	}
	return domain.Credential{UserID: row.UserID, APIKeyID: row.ID, Scopes: scopesOf(row.Scopes)}, nil
}

func scopesOf(names []string) []domain.Scope {
	out := make([]domain.Scope, len(names))
	for i, n := range names {
		out[i] = domain.Scope(n)
	}
	return out
}

func apiKeyFromRow(row dao.ApiKey) domain.APIKey {
	k := domain.APIKey{ID: row.ID, UserID: row.UserID, Name: row.Name, Prefix: row.Prefix, Scopes: scopesOf(row.Scopes), CreatedAt: row.CreatedAt}
	if row.LastUsedAt.Valid {
		t := row.LastUsedAt.Time
		k.LastUsedAt = &t
	}
	return k
}
