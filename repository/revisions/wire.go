package revisions

import "github.com/google/wire"

// ProviderSet builds the revisions room. Its sqlc handle (dao.Querier) comes from
// repository.NewQuerier, like every room's.
var ProviderSet = wire.NewSet(NewStore)
