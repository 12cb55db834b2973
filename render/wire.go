package render

import "github.com/google/wire"

// ProviderSet builds the one renderer every article shares.
var ProviderSet = wire.NewSet(New)
