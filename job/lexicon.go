package job

import (
	"context"
	"log/slog"
	"time"
)

// LexiconFolder folds the articles published since its last pass into the search lexicon.
// ran is false when another instance's pass held the lock.
type LexiconFolder interface {
	FoldNew(ctx context.Context, settledBefore time.Time) (articles int, ran bool, err error)
}

// LexiconLag is how old an article must be before the lexicon pass folds it (and passes its id):
// a transaction still open could commit an article with a lower id, and none lives this long
// (statement and idle-in-transaction timeouts are 30 s and 60 s). Suggestions learn a new word
// this much later, which is fine for "did you mean".
const LexiconLag = 5 * time.Minute

// LexiconJob runs the lexicon pass at every tick of its schedule (schedule.go). Every instance
// ticks; the pass's advisory lock lets one run at a time, and the others skip.
type LexiconJob struct {
	folder  LexiconFolder
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration
}

// NewLexiconJob returns the job.
func NewLexiconJob(folder LexiconFolder, log *slog.Logger, now func() time.Time) *LexiconJob {
	return &LexiconJob{folder: folder, log: log.With("job", "search-lexicon"), now: now, timeout: time.Minute}
}

// Run is the cron entry point.
func (j *LexiconJob) Run() {
	ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
	defer cancel()
	_, _, _ = j.RunOnce(ctx)
}

// RunOnce runs one pass now.
func (j *LexiconJob) RunOnce(ctx context.Context) (articles int, ran bool, err error) {
	articles, ran, err = j.folder.FoldNew(ctx, j.now().Add(-LexiconLag))
	switch {
	case err != nil:
		j.log.WarnContext(ctx, "search lexicon pass failed; the next tick goes on from the watermark", "err", err)
	case !ran:
		j.log.DebugContext(ctx, "search lexicon pass skipped: another instance is running it")
	case articles > 0:
		j.log.InfoContext(ctx, "search lexicon pass folded articles", "articles", articles)
	}
	return articles, ran, err
}
