package job

import "github.com/google/wire"

// ProviderSet builds the ranking job. The queue runner, the reaper, the relay and the stream
// handlers are built where the workers are listed: each takes a per-process owner name and its
// own settings.
var ProviderSet = wire.NewSet(NewRankJob)
