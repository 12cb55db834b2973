package job

import (
	"context"
	"log/slog"
	"time"
)

// LexiconFolder folds the changes of published articles (published, edited, withdrawn, deleted)
// logged since its last pass into the search lexicon. ran is false when another instance's pass
// held the lock.
type LexiconFolder interface {
	FoldNew(ctx context.Context) (changes int, ran bool, err error)
}

// LexiconJob runs the lexicon pass at every tick of its schedule (schedule.go). Every instance
// ticks; the pass's advisory lock lets one run at a time, and the others skip.
type LexiconJob struct {
	folder  LexiconFolder
	log     *slog.Logger
	timeout time.Duration
}

// NewLexiconJob returns the job.
func NewLexiconJob(folder LexiconFolder, log *slog.Logger) *LexiconJob {
	return &LexiconJob{folder: folder, log: log.With("job", "search-lexicon"), timeout: time.Minute}
}

// Run is the cron entry point.
func (j *LexiconJob) Run() {
	ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
	defer cancel()
	_, _, _ = j.RunOnce(ctx)
}

// RunOnce runs one pass now.
func (j *LexiconJob) RunOnce(ctx context.Context) (changes int, ran bool, err error) {
	changes, ran, err = j.folder.FoldNew(ctx)
	switch {
	case err != nil:
		j.log.WarnContext(ctx, "search lexicon pass failed; the next tick goes on with the changes left", "err", err)
	case !ran:
		j.log.DebugContext(ctx, "search lexicon pass skipped: another instance is running it")
	case changes > 0:
		j.log.InfoContext(ctx, "search lexicon pass folded article changes", "changes", changes)
	}
	return changes, ran, err
}
