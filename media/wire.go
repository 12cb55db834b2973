package media

import (
	"runtime"

	"github.com/google/wire"
)

// ProviderSet builds the image pipeline with one decoding slot per core.
var ProviderSet = wire.NewSet(NewDefaultProcessor)

// NewDefaultProcessor returns NewProcessor(runtime.NumCPU()).
func NewDefaultProcessor() *Processor { return NewProcessor(runtime.NumCPU()) }
