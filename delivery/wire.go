package delivery

import "github.com/google/wire"

// ProviderSet wraps the configured Sender for resilience.
var ProviderSet = wire.NewSet(NewResilient)
