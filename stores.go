package inkwell

import (
	"log/slog"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
)

// NewQueuePgPool opens the job queue's own pool: one connection held in LISTEN, one for the
// runner's cycle, one for the reaper, and one for every four job slots' lease renewals and
// failures (each slot renews every third of a lease and fails rarely; a busy pool only makes
// them wait a moment).
func NewQueuePgPool(cfg *ioc.Config, log *slog.Logger) (repository.QueuePool, func(), error) {
	maxConns := int32(3 + (cfg.QueueConcurrency+3)/4)
	pool, cleanup, err := ioc.OpenPgPool(cfg, "job queue pool", maxConns, repository.ConfigureQueuePool, log)
	return repository.QueuePool{Pool: pool}, cleanup, err
}
