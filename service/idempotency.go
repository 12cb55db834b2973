package service

//go:generate go tool mockgen -source=idempotency.go -destination=mocks/idempotency_mock.go -package=mocks

import (
	"context"

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

// IdempotencyStore keeps the answers of keyed requests.
type IdempotencyStore interface {
	// Lookup returns the answer stored under k, if any, without waiting for a request holding it;
	// domain.ErrIdempotencyMismatch when k was used for another request.
	Lookup(ctx context.Context, k IdempotencyKey) (res domain.StoredResponse, found bool, err error)
	// Do runs write at most once per key, in one unit of work with the answer it returns, unless
	// that answer is a server error (5xx), which is neither stored nor committed. A concurrent
	// request with the key is waited for briefly, then domain.ErrIdempotencyInFlight; a stored
	// answer is returned with replayed true.
	Do(ctx context.Context, k IdempotencyKey, write func(ctx context.Context, tx Tx) domain.StoredResponse) (res domain.StoredResponse, replayed bool, err error)
}

// runIdempotent answers a keyed request: a stored answer at once; otherwise prepare runs with no
// transaction and no connection held (validation, password hashing), then write runs in the unit
// of work that stores its rendered outcome. A prepare error is rendered and stored too, as the
// answer to that request.
func runIdempotent[P, T any](ctx context.Context, store IdempotencyStore, idem Idempotent[T],
	prepare func() (P, error), write func(ctx context.Context, tx Tx, p P) (T, error),
) (domain.StoredResponse, bool, error) {
	if res, found, err := store.Lookup(ctx, idem.Key); err != nil || found {
		return res, found, err
	}
	p, perr := prepare()
	return store.Do(ctx, idem.Key, func(ctx context.Context, tx Tx) domain.StoredResponse {
		var zero T
		if perr != nil {
			return idem.Render(zero, perr)
		}
		v, err := write(ctx, tx, p)
		if err != nil {
			return idem.Render(zero, err)
		}
		return idem.Render(v, nil)
	})
}
