package repository

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
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

// Create opens a session with its first refresh token.
func (r *SessionRepository) Create(ctx context.Context, sessionID string, userID int64, refreshHash []byte, expires time.Time) error {
	return inTx(ctx, r.pool, func(q *dao.Queries) error {
		if err := q.SessionInsert(ctx, dao.SessionInsertParams{ID: sessionID, UserID: userID}); err != nil {
			return wrapf(err, "create session")
		}
		return wrapf(q.RefreshTokenInsert(ctx, dao.RefreshTokenInsertParams{TokenHash: refreshHash, SessionID: sessionID, ExpiresAt: expires}), "store refresh token")
	})
}

// Rotate spends the token with hash and stores nextHash in its session. The token row is locked
// first, so of two concurrent uses of one token exactly one rotates; the other finds it spent,
// which is what a replay by a thief looks like, and revokes the session.
func (r *SessionRepository) Rotate(ctx context.Context, hash, nextHash []byte, nextExpires, now time.Time) (int64, string, bool, error) {
	var userID int64
	var sessionID string
	var revoked bool
	err := inTx(ctx, r.pool, func(q *dao.Queries) error {
		row, err := q.RefreshTokenGetForUpdate(ctx, hash)
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
			if _, err := q.SessionRevoke(ctx, row.SessionID); err != nil {
				return wrapf(err, "revoke session")
			}
			revoked = true
			return nil // commit the revocation; the caller still gets ErrRefreshInvalid
		case !row.ExpiresAt.After(now) || !bytes.Equal(row.TokenHash, hash):
			return domain.ErrRefreshInvalid
		}
		if err := q.RefreshTokenSpend(ctx, hash); err != nil {
			return wrapf(err, "spend refresh token")
		}
		return wrapf(q.RefreshTokenInsert(ctx, dao.RefreshTokenInsertParams{TokenHash: nextHash, SessionID: row.SessionID, ExpiresAt: nextExpires}), "store refresh token")
	})
	if err == nil && revoked {
		err = domain.ErrRefreshInvalid
	}
	return userID, sessionID, revoked, err
}

// Revoke ends a session.
func (r *SessionRepository) Revoke(ctx context.Context, sessionID string) error {
	_, err := r.q.SessionRevoke(ctx, sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return wrapf(err, "revoke session")
}

// IsRevoked reports whether a session was revoked (an unknown session counts as revoked).
func (r *SessionRepository) IsRevoked(ctx context.Context, sessionID string) (bool, error) {
	revoked, err := r.q.SessionIsRevoked(ctx, sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	return revoked, wrapf(err, "check session")
}

// RevokedSince lists the sessions revoked at or after since.
func (r *SessionRepository) RevokedSince(ctx context.Context, since time.Time) ([]string, error) {
	ids, err := r.q.SessionRevokedSince(ctx, since)
	return ids, wrapf(err, "list sessions revoked since %s", since.Format(time.RFC3339))
}

// APIKeyRepository stores API keys by hash.
type APIKeyRepository struct{ q dao.Querier }

// NewAPIKeyRepository returns the repository.
func NewAPIKeyRepository(q dao.Querier) *APIKeyRepository { return &APIKeyRepository{q: q} }

// Create stores a new key's hash and prefix.
func (r *APIKeyRepository) Create(ctx context.Context, userID int64, name, prefix string, hash []byte) (domain.APIKey, error) {
	row, err := r.q.APIKeyInsert(ctx, dao.APIKeyInsertParams{UserID: userID, Name: name, Prefix: prefix, KeyHash: hash})
	if err != nil {
		return domain.APIKey{}, wrapf(err, "create api key")
	}
	return apiKeyFromRow(row), nil
}

// List returns userID's live keys.
func (r *APIKeyRepository) List(ctx context.Context, userID int64) ([]domain.APIKey, error) {
	rows, err := r.q.APIKeyListByUser(ctx, userID)
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
	n, err := r.q.APIKeyRevoke(ctx, dao.APIKeyRevokeParams{ID: id, UserID: userID})
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
	uid, err := r.q.APIKeyAuthenticate(ctx, hash)
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

// IdempotencyStore keeps Idempotency-Key results.
type IdempotencyStore struct {
	pool   *pgxpool.Pool
	q      dao.Querier
	maxAge time.Duration
	wait   time.Duration // how long a duplicate waits for the request holding its key
}

// NewIdempotencyStore returns the store; keys older than 24 hours are forgotten.
func NewIdempotencyStore(pool *pgxpool.Pool, q dao.Querier) *IdempotencyStore {
	return &IdempotencyStore{pool: pool, q: q, maxAge: 24 * time.Hour, wait: 3 * time.Second}
}

// Do runs the request run at most once per (scope, key): in one transaction it takes an advisory
// lock on the key (another request holding it means "in flight": domain.ErrIdempotencyInFlight),
// replays a stored response for the same request hash (domain.ErrIdempotencyMismatch for another
// hash), or runs run with the transaction in its context, so the business write and the stored
// response commit together. Responses of 500 and up are not stored: the transaction rolls back
// and a retry runs again.
func (s *IdempotencyStore) Do(ctx context.Context, scope, key, hash string, run func(ctx context.Context) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	var res domain.StoredResponse
	var replayed bool
	errServerError := errors.New("not stored: server error")
	// The request's cache changes, run once its transaction has committed (dropped if it did not:
	// a rollback, or a panic on the way out).
	hooks := &txHooks{}
	defer func() { hooks.finish(ctx, false) }()
	err := RunTx(ctx, s.pool, RetryPolicy{Attempts: 1}, func(ctx context.Context, tx pgx.Tx) error {
		q := dao.New(tx)
		// Wait a little for a request with the same key that is still running: retries of a quick
		// request then get its answer instead of a 409. Only a request still running after the
		// wait is refused as in flight.
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", strconv.FormatInt(s.wait.Milliseconds(), 10)); err != nil {
			return wrapf(err, "set lock timeout")
		}
		if err := q.IdempotencyLock(ctx, dao.IdempotencyLockParams{Scope: scope, Key: key}); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
				return domain.ErrIdempotencyInFlight
			}
			return wrapf(err, "lock idempotency key")
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', '0', true)"); err != nil {
			return wrapf(err, "reset lock timeout")
		}
		prev, err := q.IdempotencyGet(ctx, dao.IdempotencyGetParams{Scope: scope, Key: key, NotBefore: time.Now().Add(-s.maxAge)})
		switch {
		case err == nil:
			if prev.RequestHash != hash {
				return domain.ErrIdempotencyMismatch
			}
			res, replayed = domain.StoredResponse{Status: int(prev.ResponseStatus), Body: prev.ResponseBody}, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return wrapf(err, "read idempotency key")
		}
		// The request's writes run after a savepoint: when one of its statements fails outside a
		// savepoint of its own (a single-statement insert hitting a unique key), the transaction is
		// aborted, and only rolling back to here lets the rejection be stored.
		if _, err := tx.Exec(ctx, "SAVEPOINT idempotent_request"); err != nil {
			return wrapf(err, "savepoint before the request")
		}
		res = run(withTxHooks(WithTx(ctx, tx), hooks))
		if res.Status >= 500 {
			return errServerError
		}
		if tx.Conn().PgConn().TxStatus() == 'E' { // a statement of the request failed
			if res.Status < 400 {
				// A success over writes that did not happen: neither answer nor store it.
				return errors.New("idempotent request answered success after a failed statement")
			}
			// Rejected, as without a key; none of its writes stand, its answer is kept.
			if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT idempotent_request"); err != nil {
				return wrapf(err, "roll back the rejected request")
			}
		}
		return wrapf(q.IdempotencyPut(ctx, dao.IdempotencyPutParams{
			Scope: scope, Key: key, RequestHash: hash, ResponseStatus: int32(res.Status), ResponseBody: res.Body,
		}), "store idempotent response")
	})
	// Committed: the request's cache changes may run now. Rolled back (or of unknown outcome):
	// none of its writes can be assumed, so they are dropped.
	hooks.finish(ctx, err == nil)
	if errors.Is(err, errServerError) {
		return res, false, nil
	}
	return res, replayed, err
}

// Prune forgets keys older than 24 hours and says how many.
func (s *IdempotencyStore) Prune(ctx context.Context) (int64, error) {
	n, err := s.q.IdempotencyPrune(ctx, time.Now().Add(-s.maxAge))
	return n, wrapf(err, "prune idempotency keys")
}
