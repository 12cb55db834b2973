package job

import (
	"context"
	"log/slog"
	"time"
)

// EmailRechecker recomputes the canonical emails written under the rule before migration 00025
// (repository.UserEmails.RecheckEmails).
type EmailRechecker interface {
	RecheckEmails(ctx context.Context) (changed, duplicates int, err error)
}

// EmailRecheck runs the recheck at start and then every interval: after the migration, for the
// accounts that existed before it, and for the accounts an instance of an older version writes
// during a rolling upgrade. A pass with nothing to do is one probe of an empty partial index.
type EmailRecheck struct {
	rechecker EmailRechecker
	every     time.Duration
	tick      func(time.Duration) <-chan time.Time // time.After; tests drive it
	log       *slog.Logger
}

// NewEmailRecheck returns the worker.
func NewEmailRecheck(rechecker EmailRechecker, every time.Duration, tick func(time.Duration) <-chan time.Time, log *slog.Logger) *EmailRecheck {
	return &EmailRecheck{rechecker: rechecker, every: every, tick: tick, log: log}
}

// Run rechecks until ctx ends. Failures are logged and retried at the next interval.
func (w *EmailRecheck) Run(ctx context.Context) error {
	for {
		w.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-w.tick(w.every):
		}
	}
}

// RunOnce runs one pass.
func (w *EmailRecheck) RunOnce(ctx context.Context) {
	changed, duplicates, err := w.rechecker.RecheckEmails(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		w.log.WarnContext(ctx, "email recheck failed; retrying at the next interval", "changed", changed, "err", err)
	case changed > 0:
		w.log.InfoContext(ctx, "email recheck recomputed canonical emails under the mailbox rule", "changed", changed, "duplicates", duplicates)
	}
}
