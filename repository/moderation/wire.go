package moderation

import "github.com/google/wire"

// ProviderSet builds the moderation room. Its sqlc handle (dao.Querier) comes from
// repository.NewQuerier, like every room's.
var ProviderSet = wire.NewSet(NewLog, NewReports, NewCases, NewBlocks)
