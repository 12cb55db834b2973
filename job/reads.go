package job

import (
	"context"
	"log/slog"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// Consumer group names on the read-event stream. The group name is also the inbox consumer name,
// so every consumer process of one group shares one dedupe record.
const (
	GroupReadCount   = "read-count"
	GroupReadHistory = "read-history"
)

// ReadCounter applies read events to the counters.
type ReadCounter interface {
	CountReads(ctx context.Context, consumer string, evs []domain.ReadEvent) (int64, error)
}

// HistoryRecorder applies read events to the readers' histories.
type HistoryRecorder interface {
	RecordHistory(ctx context.Context, evs []domain.ReadEvent) error
}

// ReadCountHandler returns the stream handler of the read-count group: one counter update per
// batch, deduplicated by event id (an aggregated entry of anonymous reads is one id).
func ReadCountHandler(svc ReadCounter, log *slog.Logger) events.Handler {
	return func(ctx context.Context, msgs []events.Message) error {
		evs := decode(ctx, msgs, log)
		_, err := svc.CountReads(ctx, GroupReadCount, evs)
		return err
	}
}

// ReadHistoryHandler returns the stream handler of the read-history group.
func ReadHistoryHandler(svc HistoryRecorder, log *slog.Logger) events.Handler {
	return func(ctx context.Context, msgs []events.Message) error {
		return svc.RecordHistory(ctx, decode(ctx, msgs, log))
	}
}

// decode parses the batch; an entry that cannot be parsed can never be applied, so it is logged
// and skipped (and acknowledged with the batch) rather than retried forever.
func decode(ctx context.Context, msgs []events.Message, log *slog.Logger) []domain.ReadEvent {
	evs := make([]domain.ReadEvent, 0, len(msgs))
	for _, m := range msgs {
		var ok bool
		if evs, ok = events.DecodeReadEntry(m.Values, evs); !ok {
			log.WarnContext(ctx, "skipping malformed read event", "entry", m.ID)
		}
	}
	return evs
}
