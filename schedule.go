package inkwell

import (
	"context"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
)

// NewScheduler returns the cron runner with every scheduled job registered on it: the ranking
// pass, the idempotency-key sweep and the search lexicon pass. A run still going when its next turn comes is not started
// twice. The App starts the runner and, on shutdown, stops it and waits for running jobs.
func NewScheduler(cfg *ioc.Config, rank *job.RankJob, idem *repository.IdempotencyStore, lexicon *job.LexiconJob, log *slog.Logger) (*cron.Cron, error) {
	c := ioc.NewCron(log)
	once := cron.NewChain(cron.SkipIfStillRunning(ioc.CronLogger(log)))
	if _, err := c.AddJob(cfg.RankSchedule, once.Then(rank)); err != nil {
		return nil, err
	}
	// Idempotency keys are kept 24 hours; an hourly sweep deletes the older ones.
	if _, err := c.AddJob("@every 1h", once.Then(cron.FuncJob(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n, err := idem.Prune(ctx); err != nil {
			log.Warn("idempotency key cleanup failed", "err", err)
		} else if n > 0 {
			log.Info("expired idempotency keys deleted", "keys", n)
		}
	}))); err != nil {
		return nil, err
	}
	// Newly published articles reach the "did you mean" lexicon within about LexiconLag plus a minute.
	if _, err := c.AddJob("@every 1m", once.Then(lexicon)); err != nil {
		return nil, err
	}
	return c, nil
}
