package job

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// ArticlePublisher publishes a scheduled article whose time has come (service.ArticleScheduleService).
type ArticlePublisher interface {
	PublishDue(ctx context.Context, articleID int64, publishAt time.Time) (bool, error)
}

// ArticlePublishHandler returns the handler of article_publish jobs (#32), enqueued with a
// schedule to run at its publishAt: on whichever instance claims it, the article is published
// through the path of a manual publish, only if it is still scheduled at that exact time. A stale
// job (a new time, a cancel, a manual publish or withdrawal, a deleted article) and a second run
// of the same job (claimed again after a lost lease) publish nothing and succeed.
func ArticlePublishHandler(p ArticlePublisher) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var pl service.ArticlePublishPayload
		if err := json.Unmarshal(j.Payload, &pl); err != nil || pl.ArticleID <= 0 || pl.PublishAt.IsZero() {
			return fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, j.Kind)
		}
		_, err := p.PublishDue(ctx, pl.ArticleID, pl.PublishAt)
		return err
	}
}
