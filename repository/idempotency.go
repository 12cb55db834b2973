package repository

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// IdempotencyStore keeps the answers of creating requests sent with an Idempotency-Key.
type IdempotencyStore struct {
	pool   *pgxpool.Pool
	q      dao.Querier
	maxAge time.Duration
	wait   time.Duration // how long a duplicate waits for the request holding its key

	// held has a channel per key a request of this process is running; it is closed when that
	// request is done. Duplicates in this process wait on it instead of polling the database.
	mu   sync.Mutex
	held map[service.IdempotencyKey]chan struct{}

	onLocalWait func() // tests: called when a duplicate starts waiting for one of this process

	Stats IdempotencyStats
}

// IdempotencyStats counts how keyed requests ended, once each. Values only grow.
type IdempotencyStats struct {
	Executed      atomic.Int64 // the request ran (its answer stored, or a 5xx not stored)
	Replayed      atomic.Int64 // a stored answer was returned
	Mismatched    atomic.Int64 // the key was used for another request (422)
	InFlight      atomic.Int64 // the request holding the key did not finish in time (409)
	CommitUnknown atomic.Int64 // the unit of work's COMMIT did not answer (503): run, or not
}

// IdempotencyWait is how long a duplicate waits for the request holding its key before it is
// answered domain.ErrIdempotencyInFlight (0: DefaultIdempotencyWait).
type IdempotencyWait time.Duration

// DefaultIdempotencyWait is IdempotencyWait when it is not set.
const DefaultIdempotencyWait = 3 * time.Second

// NewIdempotencyStore returns the store; keys older than 24 hours (by the database's clock, which
// stamps them) are forgotten, and deleted by the retention job (policy idempotency_keys).
func NewIdempotencyStore(pool *pgxpool.Pool, q dao.Querier, wait IdempotencyWait) *IdempotencyStore {
	if wait <= 0 {
		wait = IdempotencyWait(DefaultIdempotencyWait)
	}
	return &IdempotencyStore{pool: pool, q: q, maxAge: 24 * time.Hour, wait: time.Duration(wait), held: map[service.IdempotencyKey]chan struct{}{}}
}

// Lookup returns the answer stored under k without taking its lock: a retry of a finished request
// is answered before the use case spends anything on it. domain.ErrIdempotencyMismatch when the
// key was used for another request.
func (s *IdempotencyStore) Lookup(ctx context.Context, k service.IdempotencyKey) (domain.StoredResponse, bool, error) {
	prev, err := s.q.IdempotencyGet(ctx, s.pool, dao.IdempotencyGetParams{Scope: k.Scope, Key: k.Key, MaxAgeSecs: s.maxAge.Seconds()})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return domain.StoredResponse{}, false, nil // Do decides how it ends
	case err != nil:
		return domain.StoredResponse{}, false, pg.Wrapf(err, "read idempotency key")
	case prev.RequestHash != k.RequestHash:
		s.Stats.Mismatched.Add(1)
		return domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch
	}
	s.Stats.Replayed.Add(1)
	return storedResponseOf(prev), true, nil
}

// count records how a Do ended.
func (s *IdempotencyStore) count(replayed bool, err error) {
	switch {
	case err == nil && replayed:
		s.Stats.Replayed.Add(1)
	case err == nil:
		s.Stats.Executed.Add(1)
	case errors.Is(err, domain.ErrIdempotencyMismatch):
		s.Stats.Mismatched.Add(1)
	case errors.Is(err, domain.ErrIdempotencyInFlight):
		s.Stats.InFlight.Add(1)
	case errors.Is(err, pg.ErrCommitUnknown):
		s.Stats.CommitUnknown.Add(1)
	}
}

// storedResponseOf is the answer kept in an idempotency record.
func storedResponseOf(row dao.IdempotencyKey) domain.StoredResponse {
	return domain.StoredResponse{Status: int(row.ResponseStatus), Body: row.ResponseBody, SessionFor: row.SessionUserID.Int64}
}

// Do runs write at most once per key, in one unit of work: it takes an advisory lock on the key,
// replays a stored answer for the same request hash (domain.ErrIdempotencyMismatch for another
// hash), or runs write and stores the answer it returns, so the business write and the stored
// answer commit together. Answers of 500 and up are not stored: the unit of work rolls back and a
// retry runs again. Hooks write registered run only after the commit.
//
// A request whose key is held by another waits up to the store's wait for it, then gets
// domain.ErrIdempotencyInFlight. It waits without a connection: the lock is only tried, and
// between tries the connection goes back to the pool. Waiting on the lock itself would let a
// burst of duplicates take every connection while the request they wait for needs one more to
// finish (its reads run beside its unit of work). Duplicates within this process do not even
// try: they queue behind the one of theirs that holds the key, on a channel, and only that one
// polls. A burst of 50 duplicates on one instance is then one request's worth of database work,
// not 50 pollers crowding the pool that the request they wait for needs.
func (s *IdempotencyStore) Do(ctx context.Context, k service.IdempotencyKey, write func(ctx context.Context, tx service.Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	res, replayed, err := s.do(ctx, k, write)
	s.count(replayed, err)
	return res, replayed, err
}

func (s *IdempotencyStore) do(ctx context.Context, k service.IdempotencyKey, write func(ctx context.Context, tx service.Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	deadline := time.Now().Add(s.wait)
	release, err := s.enter(ctx, service.IdempotencyKey{Scope: k.Scope, Key: k.Key}, deadline)
	if err != nil {
		return domain.StoredResponse{}, false, err
	}
	defer release()
	pause := 5 * time.Millisecond
	for {
		res, replayed, err := s.once(ctx, k, write)
		if !errors.Is(err, errKeyBusy) {
			return res, replayed, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return domain.StoredResponse{}, false, domain.ErrIdempotencyInFlight
		}
		t := time.NewTimer(min(left, pause/2+rand.N(pause/2+1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return domain.StoredResponse{}, false, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// enter waits until no other request of this process holds key, then holds it until release is
// called; domain.ErrIdempotencyInFlight when deadline comes first. The request hash is not part
// of key: a different request under a busy key waits too, and is then a mismatch.
func (s *IdempotencyStore) enter(ctx context.Context, key service.IdempotencyKey, deadline time.Time) (release func(), err error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		busy, ok := s.held[key]
		if !ok {
			done := make(chan struct{})
			s.held[key] = done
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				delete(s.held, key)
				s.mu.Unlock()
				close(done)
			}, nil
		}
		s.mu.Unlock()
		if timer == nil {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, domain.ErrIdempotencyInFlight
			}
			timer = time.NewTimer(left)
			if s.onLocalWait != nil {
				s.onLocalWait()
			}
		}
		select {
		case <-busy:
		case <-timer.C:
			return nil, domain.ErrIdempotencyInFlight
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// errKeyBusy says another request holds the key's lock right now.
var errKeyBusy = errors.New("idempotency key busy")

// once is one try of Do: errKeyBusy when the key's lock is taken.
func (s *IdempotencyStore) once(ctx context.Context, k service.IdempotencyKey, write func(ctx context.Context, tx service.Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	var res domain.StoredResponse
	var replayed bool
	errServerError := errors.New("not stored: server error")
	err := pg.InTx(ctx, s.pool, pg.RetryPolicy{Attempts: 1}, func(tx *pg.Tx) error {
		locked, err := s.q.IdempotencyTryLock(ctx, tx, dao.IdempotencyTryLockParams{Scope: k.Scope, Key: k.Key})
		if err != nil {
			return pg.Wrapf(err, "lock idempotency key")
		}
		if !locked {
			return errKeyBusy
		}
		prev, err := s.q.IdempotencyGet(ctx, tx, dao.IdempotencyGetParams{Scope: k.Scope, Key: k.Key, MaxAgeSecs: s.maxAge.Seconds()})
		switch {
		case err == nil:
			if prev.RequestHash != k.RequestHash {
				return domain.ErrIdempotencyMismatch
			}
			res, replayed = storedResponseOf(prev), true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return pg.Wrapf(err, "read idempotency key")
		}
		// The write runs after a savepoint: a rejection it got from a failed statement (a unique
		// key) is then stored with none of its writes.
		if _, err := tx.Exec(ctx, "SAVEPOINT idempotent_request"); err != nil {
			return pg.Wrapf(err, "savepoint before the request")
		}
		res = write(ctx, tx)
		if res.Status >= 500 {
			return errServerError
		}
		if tx.Aborted() && res.Status < 400 {
			// A statement of the write failed outside its own savepoint, and the use case answered
			// success over writes that did not happen: neither answer nor store it.
			return errors.New("idempotent request answered success after a failed statement")
		}
		if res.Status >= 400 {
			// Rejected, as without a key: none of its writes stand, its answer is kept. The
			// commit hooks of the writes undone go with them.
			if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT idempotent_request"); err != nil {
				return pg.Wrapf(err, "roll back the rejected request")
			}
			tx.DropHooks()
		}
		return pg.Wrapf(s.q.IdempotencyPut(ctx, tx, dao.IdempotencyPutParams{
			Scope: k.Scope, Key: k.Key, RequestHash: k.RequestHash, ResponseStatus: int32(res.Status), ResponseBody: res.Body,
			SessionUserID: pgtype.Int8{Int64: res.SessionFor, Valid: res.SessionFor != 0},
		}), "store idempotent response")
	})
	if errors.Is(err, errServerError) {
		return res, false, nil
	}
	return res, replayed, err
}
