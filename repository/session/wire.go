package session

import "github.com/google/wire"

// ProviderSet builds the sessions room: login sessions and API keys. Their sqlc handle
// (dao.Querier) comes from repository.NewQuerier, like every room's.
var ProviderSet = wire.NewSet(NewSessionRepository, NewAPIKeyRepository)
