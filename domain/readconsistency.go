package domain

import "context"

// Which copy of the data a read may use. With read replicas configured, reads that tolerate a
// little lag go to a replica that has replayed enough (repository/pg.ReadRouter); these context
// values tell it what "enough" is for this request. They carry no data and no transaction.

type readerKey struct{}
type primaryReadsKey struct{}

// WithReader names the signed-in user a request reads for. Their reads must see every write
// they have made (read your writes), on any instance, however far a replica lags.
func WithReader(ctx context.Context, userID int64) context.Context {
	if userID == 0 {
		return ctx
	}
	return context.WithValue(ctx, readerKey{}, userID)
}

// ReaderOf is the user WithReader named; 0 for an anonymous reader.
func ReaderOf(ctx context.Context) int64 {
	id, _ := ctx.Value(readerKey{}).(int64)
	return id
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
