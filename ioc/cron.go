package ioc

import (
	"log/slog"

	"github.com/robfig/cron/v3"
)

// NewCron returns the scheduler for in-binary jobs. Jobs register themselves on it; App starts it
// and, on shutdown, stops it and waits for running jobs.
func NewCron(log *slog.Logger) *cron.Cron {
	return cron.New(cron.WithChain(cron.Recover(cronLogger{log})), cron.WithLogger(cronLogger{log}))
}

// cronLogger adapts slog to cron's logger interface; cron's chatty info lines go to debug.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "err", err)...)
}
