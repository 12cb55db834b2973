package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=reads.go -destination=mocks/reads_mock.go -package=mocks

// ReadRecorder takes read events off the request path. Record must not block and must not fail:
// counting a read is never worth failing or slowing the read. An anonymous read (UserID 0) needs
// neither ID nor At: it only counts, and the recorder may aggregate such reads into batches that
// get ids of their own.
type ReadRecorder interface {
	Record(ev domain.ReadEvent)
}

// ReadRepository applies batches of read events and serves reading history.
type ReadRepository interface {
	// ApplyReads counts each event of the batch at most once per consumer (even when the batch is
	// delivered again) and returns how many reads were new (an event counts ev.Reads()).
	ApplyReads(ctx context.Context, consumer string, evs []domain.ReadEvent) (int64, error)
	// ApplyHistory records the signed-in readers' last read of each article; replaying is harmless.
	ApplyHistory(ctx context.Context, evs []domain.ReadEvent) error
	History(ctx context.Context, userID int64, after *domain.Cursor, limit int) ([]domain.HistoryEntry, error)
}

// ReadService applies read events delivered by the stream consumers and lists reading history.
type ReadService struct {
	reads    ReadRepository
	articles *ArticleService
}

// NewReadService returns a ReadService.
func NewReadService(reads ReadRepository, articles *ArticleService) *ReadService {
	return &ReadService{reads: reads, articles: articles}
}

// CountReads applies a batch to the read counters, deduplicated under consumer.
func (s *ReadService) CountReads(ctx context.Context, consumer string, evs []domain.ReadEvent) (int64, error) {
	return s.reads.ApplyReads(ctx, consumer, evs)
}

// RecordHistory applies a batch to the readers' histories.
func (s *ReadService) RecordHistory(ctx context.Context, evs []domain.ReadEvent) error {
	return s.reads.ApplyHistory(ctx, evs)
}

// History lists the articles viewerID read, most recent first, paged by cursor.
func (s *ReadService) History(ctx context.Context, viewerID int64, p domain.Page) (ArticleList, error) {
	entries, err := s.reads.History(ctx, viewerID, p.Cursor, p.Limit+1)
	if err != nil {
		return ArticleList{}, err
	}
	entries, more := domain.CutPage(entries, p.Limit)
	return articlesByIDs(ctx, s.articles, viewerID, entries, more, func(e domain.HistoryEntry) (int64, domain.Cursor) {
		return e.ArticleID, domain.Cursor{CreatedAt: e.ReadAt, ID: e.ArticleID}
	})
}
