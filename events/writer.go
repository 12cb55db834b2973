package events

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// StreamWriter appends single entries to streams (the outbox relay's output).
type StreamWriter struct{ rdb redis.UniversalClient }

// NewStreamWriter returns a writer.
func NewStreamWriter(rdb redis.UniversalClient) *StreamWriter { return &StreamWriter{rdb: rdb} }

// Add appends one entry to stream.
func (w *StreamWriter) Add(ctx context.Context, stream string, values map[string]any) error {
	return w.rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: values}).Err()
}
