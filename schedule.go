package inkwell

import (
	"log/slog"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
)

// NewScheduler returns the cron runner with every scheduled job registered on it: the ranking
// pass and the retention pass (unless INKWELL_RETENTION_SCHEDULE is off). A run still going when
// its next turn comes is not started twice. The App starts the runner and, on shutdown, stops
// the retention run under way, stops the runner and waits for running jobs.
func NewScheduler(cfg *ioc.Config, rank *job.RankJob, retention *job.RetentionJob, log *slog.Logger) (*cron.Cron, error) {
	c := ioc.NewCron(log)
	once := cron.NewChain(cron.SkipIfStillRunning(ioc.CronLogger(log)))
	if _, err := c.AddJob(cfg.RankSchedule, once.Then(rank)); err != nil {
		return nil, err
	}
	if cfg.RetentionSchedule != ioc.RetentionOff {
		if _, err := c.AddJob(cfg.RetentionSchedule, once.Then(retention)); err != nil {
			return nil, err
		}
	}
	return c, nil
}
