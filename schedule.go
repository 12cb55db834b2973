package inkwell

import (
	"log/slog"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
)

// NewScheduler returns the cron runner with every scheduled job registered on it: the ranking
// pass, the retention pass (unless INKWELL_RETENTION_SCHEDULE is off) and the search lexicon pass.
// A run still going when its next turn comes is not started twice. The App starts the runner and,
// on shutdown, stops the retention run under way, stops the runner and waits for running jobs.
func NewScheduler(cfg *ioc.Config, rank *job.RankJob, retention *job.RetentionJob, lexicon *job.LexiconJob, log *slog.Logger) (*cron.Cron, error) {
	c := ioc.NewCron(log)
	once := cron.NewChain(cron.SkipIfStillRunning(ioc.CronLogger(log)))
	if _, err := c.AddJob(cfg.Jobs.RankSchedule, once.Then(rank)); err != nil {
		return nil, err
	}
	if cfg.Retention.Schedule != ioc.RetentionOff {
		if _, err := c.AddJob(cfg.Retention.Schedule, once.Then(retention)); err != nil {
			return nil, err
		}
	}
	// Changes of published articles reach the "did you mean" lexicon within about a minute.
	if _, err := c.AddJob("@every 1m", once.Then(lexicon)); err != nil {
		return nil, err
	}
	return c, nil
}
