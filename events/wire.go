package events

import "github.com/google/wire"

// ProviderSet builds the read-event publisher, the aggregator of anonymous reads in front of it,
// and the stream writer the outbox relay uses.
// Consumers and trimmers, one per stream and group, are built where the workers are listed.
var ProviderSet = wire.NewSet(NewPublisher, NewReadAggregator, NewStreamWriter)
