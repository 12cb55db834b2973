package domain

import (
	"context"
	"sync"
)

// Which copy of the data a read may use. With read replicas configured, reads that tolerate a
// little lag go to a replica that has replayed enough (repository/pg.ReadRouter); these context
// values tell it what "enough" is for this request. They carry no data and no transaction.

type readerKey struct{}
type primaryReadsKey struct{}

// reader is the signed-in user a request reads for, and the WAL position their reads need once
// it has been looked up (one lookup per request, however many reads it makes).
type reader struct {
	id    int64
	mu    sync.Mutex
	known bool
	floor int64
}

// WithReader names the signed-in user a request reads for. Their reads must see every write
// they have made (read your writes), on any instance, however far a replica lags.
func WithReader(ctx context.Context, userID int64) context.Context {
	if userID == 0 {
		return ctx
	}
	return context.WithValue(ctx, readerKey{}, &reader{id: userID})
}

// ReaderOf is the user WithReader named; 0 for an anonymous reader.
func ReaderOf(ctx context.Context) int64 {
	if r, ok := ctx.Value(readerKey{}).(*reader); ok {
		return r.id
	}
	return 0
}

// ReaderFloor returns the position the reader's reads need, looking it up with lookup the first
// time a request asks (a failed lookup is not remembered).
func ReaderFloor(ctx context.Context, lookup func(userID int64) (int64, error)) (int64, error) {
	r, ok := ctx.Value(readerKey{}).(*reader)
	if !ok {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known {
		return r.floor, nil
	}
	floor, err := lookup(r.id)
	if err != nil {
		return 0, err
	}
	r.known, r.floor = true, floor
	return floor, nil
}

// WithPrimaryReads marks ctx's reads as needing the primary: a cache fill that follows an
// invalidation must not store what a replica replayed before the invalidating write.
func WithPrimaryReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryReadsKey{}, true)
}

// PrimaryReadsOnly reports whether WithPrimaryReads marked ctx.
func PrimaryReadsOnly(ctx context.Context) bool {
	v, _ := ctx.Value(primaryReadsKey{}).(bool)
	return v
}
