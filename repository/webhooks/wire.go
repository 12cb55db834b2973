package webhooks

import "github.com/google/wire"

// ProviderSet builds the webhooks room. Its sqlc handle (dao.Querier) comes from
// repository.NewQuerier, like every room's.
var ProviderSet = wire.NewSet(NewStore)
