package job

import (
	"context"
	"log/slog"
	"time"
)

// SearchIndexer gives search documents to the published articles that have none; one instance
// of a fleet at a time does the work (search.Repository.BackfillSearch in repository/search).
type SearchIndexer interface {
	BackfillSearch(ctx context.Context) (int, error)
}

// SearchBackfill runs the backfill at start and then every interval: after the search migration
// on a database with articles, and for the articles an instance of an older version publishes
// during a rolling upgrade. A pass over a database with nothing to do is one probe of an empty
// partial index.
type SearchBackfill struct {
	indexer SearchIndexer
	every   time.Duration
	tick    func(time.Duration) <-chan time.Time // time.After; tests drive it
	log     *slog.Logger
}

// NewSearchBackfill returns the worker.
func NewSearchBackfill(indexer SearchIndexer, every time.Duration, log *slog.Logger) *SearchBackfill {
	return &SearchBackfill{indexer: indexer, every: every, tick: time.After, log: log}
}

// Run backfills until ctx ends. Failures are logged and retried at the next interval.
func (b *SearchBackfill) Run(ctx context.Context) error {
	for {
		b.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-b.tick(b.every):
		}
	}
}

// RunOnce runs one pass and returns the articles it indexed.
func (b *SearchBackfill) RunOnce(ctx context.Context) int {
	n, err := b.indexer.BackfillSearch(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		b.log.WarnContext(ctx, "search backfill failed; retrying at the next interval", "indexed", n, "err", err)
	case n > 0:
		b.log.InfoContext(ctx, "search backfill indexed articles", "indexed", n)
	}
	return n
}
