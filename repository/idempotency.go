package repository

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// IdempotencyStore keeps the answers of creating requests sent with an Idempotency-Key.
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

// Lookup returns the answer stored under k without taking its lock: a retry of a finished request
// is answered before the use case spends anything on it. domain.ErrIdempotencyMismatch when the
// key was used for another request.
func (s *IdempotencyStore) Lookup(ctx context.Context, k service.IdempotencyKey) (domain.StoredResponse, bool, error) {
	prev, err := s.q.IdempotencyGet(ctx, s.pool, dao.IdempotencyGetParams{Scope: k.Scope, Key: k.Key, NotBefore: time.Now().Add(-s.maxAge)})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return domain.StoredResponse{}, false, nil
	case err != nil:
		return domain.StoredResponse{}, false, wrapf(err, "read idempotency key")
	case prev.RequestHash != k.RequestHash:
		return domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch
	}
	return domain.StoredResponse{Status: int(prev.ResponseStatus), Body: prev.ResponseBody}, true, nil
}

// Do runs write at most once per key, in one unit of work: it takes an advisory lock on the key
// (waiting up to the store's wait for a request holding it, then domain.ErrIdempotencyInFlight),
// replays a stored answer for the same request hash (domain.ErrIdempotencyMismatch for another
// hash), or runs write and stores the answer it returns, so the business write and the stored
// answer commit together. Answers of 500 and up are not stored: the unit of work rolls back and a
// retry runs again. Hooks write registered run only after the commit.
func (s *IdempotencyStore) Do(ctx context.Context, k service.IdempotencyKey, write func(ctx context.Context, tx service.Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	var res domain.StoredResponse
	var replayed bool
	errServerError := errors.New("not stored: server error")
	err := inTx(ctx, s.pool, RetryPolicy{Attempts: 1}, func(tx *Tx) error {
		res, replayed = domain.StoredResponse{}, false
		// Wait a little for a request with the same key that is still running: retries of a quick
		// request then get its answer instead of a 409. Only a request still running after the
		// wait is refused as in flight.
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", strconv.FormatInt(s.wait.Milliseconds(), 10)); err != nil {
			return wrapf(err, "set lock timeout")
		}
		if err := queries.IdempotencyLock(ctx, tx, dao.IdempotencyLockParams{Scope: k.Scope, Key: k.Key}); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
				return domain.ErrIdempotencyInFlight
			}
			return wrapf(err, "lock idempotency key")
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', '0', true)"); err != nil {
			return wrapf(err, "reset lock timeout")
		}
		prev, err := queries.IdempotencyGet(ctx, tx, dao.IdempotencyGetParams{Scope: k.Scope, Key: k.Key, NotBefore: time.Now().Add(-s.maxAge)})
		switch {
		case err == nil:
			if prev.RequestHash != k.RequestHash {
				return domain.ErrIdempotencyMismatch
			}
			res, replayed = domain.StoredResponse{Status: int(prev.ResponseStatus), Body: prev.ResponseBody}, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return wrapf(err, "read idempotency key")
		}
		// The write runs after a savepoint: a rejection it got from a failed statement (a unique
		// key) is then stored with none of its writes.
		if _, err := tx.Exec(ctx, "SAVEPOINT idempotent_request"); err != nil {
			return wrapf(err, "savepoint before the request")
		}
		res = write(ctx, tx)
		if res.Status >= 500 {
			return errServerError
		}
		if tx.tx.Conn().PgConn().TxStatus() == 'E' { // a statement of the write failed outside its own savepoint
			if res.Status < 400 {
				// A success over writes that did not happen: neither answer nor store it.
				return errors.New("idempotent request answered success after a failed statement")
			}
		}
		if res.Status >= 400 {
			// Rejected, as without a key: none of its writes stand, its answer is kept. The
			// commit hooks of writes that are undone go with them.
			if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT idempotent_request"); err != nil {
				return wrapf(err, "roll back the rejected request")
			}
			tx.dropHooks()
		}
		return wrapf(queries.IdempotencyPut(ctx, tx, dao.IdempotencyPutParams{
			Scope: k.Scope, Key: k.Key, RequestHash: k.RequestHash, ResponseStatus: int32(res.Status), ResponseBody: res.Body,
		}), "store idempotent response")
	})
	if errors.Is(err, errServerError) {
		return res, false, nil
	}
	return res, replayed, err
}

// Prune forgets keys older than 24 hours and says how many.
func (s *IdempotencyStore) Prune(ctx context.Context) (int64, error) {
	n, err := s.q.IdempotencyPrune(ctx, s.pool, time.Now().Add(-s.maxAge))
	return n, wrapf(err, "prune idempotency keys")
}
