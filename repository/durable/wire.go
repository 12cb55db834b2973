package durable

import "github.com/google/wire"

// ProviderSet builds the durable delivery room: the job queue, the outbox and the idempotency
// store. Their sqlc handle (dao.Querier) comes from repository.NewQuerier, like every room's.
var ProviderSet = wire.NewSet(NewJobQueue, NewOutbox, NewIdempotencyStore)
