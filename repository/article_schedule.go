package repository

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// ScheduleIn makes the article scheduled to publish at at (a draft, a withdrawn or a scheduled
// article; a published one is domain.ErrIllegalTransition), in the caller's unit of work, which
// enqueues the job that publishes it. The caches follow at commit: nobody but the author sees it
// before it publishes, and the author's pages list it.
func (r *ArticleRepository) ScheduleIn(ctx context.Context, stx service.Tx, id int64, at time.Time) (domain.Article, error) {
	tx := pg.TxOf(stx)
	row, err := r.q.ArticleSchedule(ctx, tx, dao.ArticleScheduleParams{ID: id, PublishAt: at})
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Article{}, fmt.Errorf("%w: article %d is neither a draft, withdrawn nor scheduled", domain.ErrIllegalTransition, id)
	}
	if err != nil {
		return domain.Article{}, pg.Wrapf(err, "schedule article %d", id)
	}
	a := articleFromRow(dao.ArticleGetBySlugRow(row))
	r.afterWrite(tx, a, a.Slug)
	return a, nil
}

// Unschedule makes a scheduled article a draft again (domain.ErrIllegalTransition when it is not
// scheduled). Its pending job finds the row changed and does nothing.
func (r *ArticleRepository) Unschedule(ctx context.Context, id int64) (domain.Article, error) {
	var a domain.Article
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		row, err := r.q.ArticleUnschedule(ctx, tx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: article %d is not scheduled", domain.ErrIllegalTransition, id)
		}
		if err != nil {
			return pg.Wrapf(err, "unschedule article %d", id)
		}
		a = articleFromRow(dao.ArticleGetBySlugRow(row))
		r.afterWrite(tx, a, a.Slug)
		return nil
	})
	return a, err
}

// PublishScheduled publishes the article if it is still scheduled at exactly at (the
// compare-and-set in ArticlePublishScheduled), like a manual publish: the same caches at commit
// and the same outbox event (search, hot list, notifications follow from those). published is
// false when the row had moved on (a new time, a cancel, a manual publish, a run of the same job
// before this one, a deleted article): nothing was written.
func (r *ArticleRepository) PublishScheduled(ctx context.Context, id int64, at time.Time) (a domain.Article, published bool, err error) {
	err = pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		row, err := r.q.ArticlePublishScheduled(ctx, tx, dao.ArticlePublishScheduledParams{
			ID: id, PublishAt: at, SearchConfig: string(r.lang),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			published = false
			return nil
		}
		if err != nil {
			return pg.Wrapf(err, "publish scheduled article %d", id)
		}
		a, published = articleFromRow(dao.ArticleGetBySlugRow(row)), true
		return r.moved(ctx, tx, a, domain.TopicArticlePublished)
	})
	if err != nil {
		return domain.Article{}, false, err
	}
	return a, published, nil
}
