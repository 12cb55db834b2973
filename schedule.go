package inkwell

import (
	"log/slog"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
)

// NewScheduler returns the cron runner with every scheduled job registered on it: the ranking
// pass. A run still going when its next turn comes is not started twice. The App starts the
// runner and, on shutdown, stops it and waits for running jobs.
func NewScheduler(cfg *ioc.Config, rank *job.RankJob, log *slog.Logger) (*cron.Cron, error) {
	c := ioc.NewCron(log)
	once := cron.NewChain(cron.SkipIfStillRunning(ioc.CronLogger(log)))
	if _, err := c.AddJob(cfg.RankSchedule, once.Then(rank)); err != nil {
		return nil, err
	}
	return c, nil
}
