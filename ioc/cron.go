package ioc

import (
	"log/slog"

	"github.com/robfig/cron/v3"
)

// NewCron returns the scheduler for in-binary jobs, which logs through log. Jobs are registered
// on it before it starts; the App starts it and, on shutdown, stops it and waits for running jobs.
func NewCron(log *slog.Logger) *cron.Cron {
	return cron.New(cron.WithChain(cron.Recover(cronLogger{log})), cron.WithLogger(cronLogger{log}))
}

// CronLogger is log as cron's logger, for the job wrappers of cron's chains.
func CronLogger(log *slog.Logger) cron.Logger { return cronLogger{log} }

// cronLogger adapts slog to cron's logger interface; cron's chatty info lines go to debug.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "err", err)...)
}
