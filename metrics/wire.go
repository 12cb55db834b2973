package metrics

import "github.com/google/wire"

// ProviderSet builds the registry; the composition root exposes the other layers' counters on it.
var ProviderSet = wire.NewSet(New)
