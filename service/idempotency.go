package service

//go:generate go tool mockgen -source=idempotency.go -destination=mocks/idempotency_mock.go -package=mocks

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// IdempotencyKey identifies one creating request sent with an Idempotency-Key: whose key it is
// (the signed-in user, or the client for a registration), the key, and a fingerprint of the
// request, so the same key with another request is told apart from a retry.
type IdempotencyKey struct {
	Scope, Key, RequestHash string
}

// Idempotent is what a creating use case needs to be retried safely: the key, and how its
// outcome is answered. Render is the transport's rendering of an outcome (a result, or the error
// a caller without a key would get); what it returns is stored with the write, in the same unit
// of work, and a retry gets exactly that back. What is stored never holds a secret: a use case
// whose answer hands one out renders it without (RegisterIdempotent stores no token).
type Idempotent[T any] struct {
	Key    IdempotencyKey
	Render func(v T, err error) domain.StoredResponse
}

// Idempotency answers keyed requests (IdempotencyRunner); the creating use cases take it.
type Idempotency interface {
	// Lookup returns the answer stored under k, if any, without waiting for a request holding it;
	// domain.ErrIdempotencyMismatch when k was used for another request.
	Lookup(ctx context.Context, k IdempotencyKey) (res domain.StoredResponse, found bool, err error)
	// Do runs write at most once per key, in one unit of work with the answer it returns, unless
	// that answer is a server error (5xx), which is neither stored nor committed. A concurrent
	// request with the key is waited for briefly, then domain.ErrIdempotencyInFlight; a stored
	// answer is returned with replayed true.
	Do(ctx context.Context, k IdempotencyKey, write func(ctx context.Context, tx Tx) domain.StoredResponse) (res domain.StoredResponse, replayed bool, err error)
}

// IdempotencyStore keeps the answers of keyed requests: plain reads and writes, the *In ones in
// the caller's unit of work. The algorithm over them is IdempotencyRunner's.
type IdempotencyStore interface {
	// Lookup returns the live answer stored under k, without any lock;
	// domain.ErrIdempotencyMismatch when k was used for another request.
	Lookup(ctx context.Context, k IdempotencyKey) (res domain.StoredResponse, found bool, err error)
	// ClaimIn takes k's lock (request hash aside) until tx ends, if no other unit of work holds
	// it: claimed is false then, and nothing waits.
	ClaimIn(ctx context.Context, tx Tx, k IdempotencyKey) (claimed bool, err error)
	// LookupIn is Lookup in tx, under the claim.
	LookupIn(ctx context.Context, tx Tx, k IdempotencyKey) (res domain.StoredResponse, found bool, err error)
	// MarkIn sets a savepoint in tx that UndoIn rolls back to, commit hooks registered since
	// included.
	MarkIn(ctx context.Context, tx Tx) error
	UndoIn(ctx context.Context, tx Tx) error
	// Failed reports whether a statement of tx failed outside a savepoint: tx can only roll back.
	Failed(tx Tx) bool
	// PutIn stores res as the answer to k.
	PutIn(ctx context.Context, tx Tx, k IdempotencyKey, res domain.StoredResponse) error
}

// IdempotencyWait is how long a duplicate waits for the request holding its key before it is
// answered domain.ErrIdempotencyInFlight (0: DefaultIdempotencyWait).
type IdempotencyWait time.Duration

// DefaultIdempotencyWait is IdempotencyWait when it is not set.
const DefaultIdempotencyWait = 3 * time.Second

// IdempotencyRunner is the one idempotency path: claim the key, wait for its holder, run the
// write after a savepoint, store its answer with it, or replay the stored one.
type IdempotencyRunner struct {
	uow   UnitOfWork
	store IdempotencyStore
	wait  time.Duration // how long a duplicate waits for the request holding its key

	// held has a channel per key a request of this process is running; it is closed when that
	// request is done. Duplicates in this process wait on it instead of polling the database.
	mu   sync.Mutex
	held map[IdempotencyKey]chan struct{}

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

// NewIdempotencyRunner returns the idempotency path over the store, opening its units of work
// through uow.
func NewIdempotencyRunner(uow UnitOfWork, store IdempotencyStore, wait IdempotencyWait) *IdempotencyRunner {
	if wait <= 0 {
		wait = IdempotencyWait(DefaultIdempotencyWait)
	}
	return &IdempotencyRunner{uow: uow, store: store, wait: time.Duration(wait), held: map[IdempotencyKey]chan struct{}{}}
}

// OnLocalWait has f called whenever a duplicate starts waiting for a request of this process
// holding its key: tests order their duplicates with it instead of sleeping.
func (r *IdempotencyRunner) OnLocalWait(f func()) { r.onLocalWait = f }

// Lookup returns the answer stored under k without taking its lock: a retry of a finished request
// is answered before the use case spends anything on it.
func (r *IdempotencyRunner) Lookup(ctx context.Context, k IdempotencyKey) (domain.StoredResponse, bool, error) {
	res, found, err := r.store.Lookup(ctx, k)
	switch {
	case errors.Is(err, domain.ErrIdempotencyMismatch):
		r.Stats.Mismatched.Add(1)
	case err == nil && found:
		r.Stats.Replayed.Add(1)
	}
	return res, found, err
}

// count records how a Do ended.
func (r *IdempotencyRunner) count(replayed bool, err error) {
	switch {
	case err == nil && replayed:
		r.Stats.Replayed.Add(1)
	case err == nil:
		r.Stats.Executed.Add(1)
	case errors.Is(err, domain.ErrIdempotencyMismatch):
		r.Stats.Mismatched.Add(1)
	case errors.Is(err, domain.ErrIdempotencyInFlight):
		r.Stats.InFlight.Add(1)
	case errors.Is(err, domain.ErrCommitUnknown):
		r.Stats.CommitUnknown.Add(1)
	}
}

// Do runs write at most once per key, in one unit of work: it claims the key, replays a stored
// answer for the same request hash (domain.ErrIdempotencyMismatch for another hash), or runs write
// and stores the answer it returns, so the business write and the stored answer commit together.
// Answers of 500 and up are not stored: the unit of work rolls back and a retry runs again. Hooks
// write registered run only after the commit.
//
// A request whose key is held by another waits up to the runner's wait for it, then gets
// domain.ErrIdempotencyInFlight. It waits without a connection: the claim is only tried, and
// between tries the connection goes back to the pool. Waiting on the lock itself would let a
// burst of duplicates take every connection while the request they wait for needs one more to
// finish (its reads run beside its unit of work). Duplicates within this process do not even
// try: they queue behind the one of theirs that holds the key, on a channel, and only that one
// polls. A burst of 50 duplicates on one instance is then one request's worth of database work,
// not 50 pollers crowding the pool that the request they wait for needs.
func (r *IdempotencyRunner) Do(ctx context.Context, k IdempotencyKey, write func(ctx context.Context, tx Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	res, replayed, err := r.do(ctx, k, write)
	r.count(replayed, err)
	return res, replayed, err
}

func (r *IdempotencyRunner) do(ctx context.Context, k IdempotencyKey, write func(ctx context.Context, tx Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	deadline := time.Now().Add(r.wait)
	release, err := r.enter(ctx, IdempotencyKey{Scope: k.Scope, Key: k.Key}, deadline)
	if err != nil {
		return domain.StoredResponse{}, false, err
	}
	defer release()
	pause := 5 * time.Millisecond
	for {
		res, replayed, err := r.once(ctx, k, write)
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
func (r *IdempotencyRunner) enter(ctx context.Context, key IdempotencyKey, deadline time.Time) (release func(), err error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		r.mu.Lock()
		busy, ok := r.held[key]
		if !ok {
			done := make(chan struct{})
			r.held[key] = done
			r.mu.Unlock()
			return func() {
				r.mu.Lock()
				delete(r.held, key)
				r.mu.Unlock()
				close(done)
			}, nil
		}
		r.mu.Unlock()
		if timer == nil {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, domain.ErrIdempotencyInFlight
			}
			timer = time.NewTimer(left)
			if r.onLocalWait != nil {
				r.onLocalWait()
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

// errKeyBusy says another request holds the key's claim right now.
var errKeyBusy = errors.New("idempotency key busy")

// once is one try of Do, in one unit of work that is never retried by itself (do polls instead):
// errKeyBusy when the key is claimed by another.
func (r *IdempotencyRunner) once(ctx context.Context, k IdempotencyKey, write func(ctx context.Context, tx Tx) domain.StoredResponse) (domain.StoredResponse, bool, error) {
	var res domain.StoredResponse
	var replayed bool
	errServerError := errors.New("not stored: server error")
	err := r.uow.InTxOnce(ctx, func(tx Tx) error {
		claimed, err := r.store.ClaimIn(ctx, tx, k)
		if err != nil {
			return err
		}
		if !claimed {
			return errKeyBusy
		}
		prev, found, err := r.store.LookupIn(ctx, tx, k)
		if err != nil || found {
			res, replayed = prev, found
			return err
		}
		// The write runs after a savepoint: a rejection it got from a failed statement (a unique
		// key) is then stored with none of its writes.
		if err := r.store.MarkIn(ctx, tx); err != nil {
			return err
		}
		res = write(ctx, tx)
		if res.Status >= 500 {
			return errServerError
		}
		if r.store.Failed(tx) && res.Status < 400 {
			// A statement of the write failed outside its own savepoint, and the use case answered
			// success over writes that did not happen: neither answer nor store it.
			return errors.New("idempotent request answered success after a failed statement")
		}
		if res.Status >= 400 {
			// Rejected, as without a key: none of its writes stand, its answer is kept. The
			// commit hooks of the writes undone go with them.
			if err := r.store.UndoIn(ctx, tx); err != nil {
				return err
			}
		}
		return r.store.PutIn(ctx, tx, k, res)
	})
	if errors.Is(err, errServerError) {
		return res, false, nil
	}
	return res, replayed, err
}

// runIdempotent answers a keyed request: a stored answer at once; otherwise prepare runs with no
// transaction and no connection held (validation, password hashing), then write runs in the unit
// of work that stores its rendered outcome. A prepare error is rendered and stored too, as the
// answer to that request.
func runIdempotent[P, T any](ctx context.Context, idem Idempotency, in Idempotent[T],
	prepare func() (P, error), write func(ctx context.Context, tx Tx, p P) (T, error),
) (domain.StoredResponse, bool, error) {
	if res, found, err := idem.Lookup(ctx, in.Key); err != nil || found {
		return res, found, err
	}
	p, perr := prepare()
	return idem.Do(ctx, in.Key, func(ctx context.Context, tx Tx) domain.StoredResponse {
		var zero T
		if perr != nil {
			return in.Render(zero, perr)
		}
		v, err := write(ctx, tx, p)
		if err != nil {
			return in.Render(zero, err)
		}
		return in.Render(v, nil)
	})
}
