package durable

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// IdempotencyStore keeps the answers of creating requests sent with an Idempotency-Key: the
// store under service.IdempotencyRunner, which holds the algorithm.
type IdempotencyStore struct {
	pool   *pgxpool.Pool
	q      dao.Querier
	maxAge time.Duration
}

var _ service.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store; keys older than 24 hours (by the database's clock, which
// stamps them) are forgotten, and deleted by the retention job (policy idempotency_keys).
func NewIdempotencyStore(pool *pgxpool.Pool, q dao.Querier) *IdempotencyStore {
	return &IdempotencyStore{pool: pool, q: q, maxAge: 24 * time.Hour}
}

// Lookup returns the answer stored under k without taking its lock. domain.ErrIdempotencyMismatch
// when the key was used for another request.
func (s *IdempotencyStore) Lookup(ctx context.Context, k service.IdempotencyKey) (domain.StoredResponse, bool, error) {
	return s.lookup(ctx, s.pool, k)
}

// LookupIn is Lookup in tx, which holds the key's claim.
func (s *IdempotencyStore) LookupIn(ctx context.Context, tx service.Tx, k service.IdempotencyKey) (domain.StoredResponse, bool, error) {
	return s.lookup(ctx, pg.TxOf(tx), k)
}

func (s *IdempotencyStore) lookup(ctx context.Context, db dao.DBTX, k service.IdempotencyKey) (domain.StoredResponse, bool, error) {
	prev, err := s.q.IdempotencyGet(ctx, db, dao.IdempotencyGetParams{Scope: k.Scope, Key: k.Key, MaxAgeSecs: s.maxAge.Seconds()})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return domain.StoredResponse{}, false, nil
	case err != nil:
		return domain.StoredResponse{}, false, pg.Wrapf(err, "read idempotency key")
	case prev.RequestHash != k.RequestHash:
		return domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch
	}
	return domain.StoredResponse{Status: int(prev.ResponseStatus), Body: prev.ResponseBody, SessionFor: prev.SessionUserID.Int64}, true, nil
}

// ClaimIn tries the key's transaction-scoped advisory lock: it never waits on it, so a
// duplicate waits without holding a connection (service.IdempotencyRunner.Do says why).
func (s *IdempotencyStore) ClaimIn(ctx context.Context, tx service.Tx, k service.IdempotencyKey) (bool, error) {
	locked, err := s.q.IdempotencyTryLock(ctx, pg.TxOf(tx), dao.IdempotencyTryLockParams{Scope: k.Scope, Key: k.Key})
	return locked, pg.Wrapf(err, "lock idempotency key")
}

// MarkIn sets the savepoint a rejected request's writes are rolled back to.
func (s *IdempotencyStore) MarkIn(ctx context.Context, tx service.Tx) error {
	_, err := pg.TxOf(tx).Exec(ctx, "SAVEPOINT idempotent_request")
	return pg.Wrapf(err, "savepoint before the request")
}

// UndoIn rolls tx back to MarkIn's savepoint, and forgets the commit hooks of the writes undone.
func (s *IdempotencyStore) UndoIn(ctx context.Context, stx service.Tx) error {
	tx := pg.TxOf(stx)
	if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT idempotent_request"); err != nil {
		return pg.Wrapf(err, "roll back the rejected request")
	}
	tx.DropHooks()
	return nil
}

// Failed reports whether a statement of tx failed outside a savepoint.
func (s *IdempotencyStore) Failed(tx service.Tx) bool { return pg.TxOf(tx).Aborted() }

// PutIn stores res as the answer to k.
func (s *IdempotencyStore) PutIn(ctx context.Context, tx service.Tx, k service.IdempotencyKey, res domain.StoredResponse) error {
	return pg.Wrapf(s.q.IdempotencyPut(ctx, pg.TxOf(tx), dao.IdempotencyPutParams{
		Scope: k.Scope, Key: k.Key, RequestHash: k.RequestHash, ResponseStatus: int32(res.Status), ResponseBody: res.Body,
		SessionUserID: pgtype.Int8{Int64: res.SessionFor, Valid: res.SessionFor != 0},
	}), "store idempotent response")
}
