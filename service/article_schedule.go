package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=article_schedule.go -destination=mocks/article_schedule_mock.go -package=mocks

// ArticleScheduleStore is the storage of scheduled publishing (#32; repository.ArticleRepository).
type ArticleScheduleStore interface {
	// ScheduleIn makes a draft, withdrawn or scheduled article scheduled at at, in the caller's
	// unit of work; domain.ErrIllegalTransition for any other status.
	ScheduleIn(ctx context.Context, tx Tx, id int64, at time.Time) (domain.Article, error)
	// Unschedule makes a scheduled article a draft again; domain.ErrIllegalTransition otherwise.
	Unschedule(ctx context.Context, id int64) (domain.Article, error)
	// PublishScheduled publishes the article as a manual publish does (caches, outbox) if it is
	// still scheduled at exactly at; published is false, and nothing written, otherwise.
	PublishScheduled(ctx context.Context, id int64, at time.Time) (a domain.Article, published bool, err error)
}

// JobKindArticlePublish is the job that publishes a scheduled article at its time.
const JobKindArticlePublish = "article_publish"

// articlePublishMaxAttempts: a publication that fails (the database away) retries with the
// queue's backoff, up to a few minutes late, rather than stay unpublished.
const articlePublishMaxAttempts = 10

// ArticlePublishPayload is the payload of an article_publish job: the article and the time it was
// scheduled for, which the publication compares with the row's (a job made stale by a new time or
// a cancel does nothing).
type ArticlePublishPayload struct {
	ArticleID int64     `json:"articleId"`
	PublishAt time.Time `json:"publishAt"`
}

// ArticleScheduleService schedules articles and publishes them when their time comes. Scheduling
// writes the status and enqueues the durable job in one unit of work; the job publishes through
// the storage path a manual publish takes.
type ArticleScheduleService struct {
	articles *ArticleService
	store    ArticleScheduleStore
	jobs     JobScheduler
	uow      UnitOfWork
	now      func() time.Time
}

// NewArticleScheduleService returns the service; now is the clock publishAt is checked against.
func NewArticleScheduleService(articles *ArticleService, store ArticleScheduleStore, jobs JobScheduler, uow UnitOfWork, now func() time.Time) *ArticleScheduleService {
	return &ArticleScheduleService{articles: articles, store: store, jobs: jobs, uow: uow, now: now}
}

// Schedule makes viewerID's draft or withdrawn article publish itself at publishAt (RFC 3339, in
// the future, at most a year ahead: else a ValidationError on publishAt); a scheduled article gets
// the new time. A published article is domain.ErrIllegalTransition (409). Only the author may.
func (s *ArticleScheduleService) Schedule(ctx context.Context, viewerID int64, slug, publishAt string) (domain.ArticleView, error) {
	at, err := domain.ParsePublishAt(publishAt, s.now())
	if err != nil {
		return domain.ArticleView{}, err
	}
	a, err := s.articles.owned(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	if a.Status == domain.StatusPublished {
		return domain.ArticleView{}, fmt.Errorf("%w: article %q is published already; withdraw it first", domain.ErrIllegalTransition, slug)
	}
	payload, err := json.Marshal(ArticlePublishPayload{ArticleID: a.ID, PublishAt: at})
	if err != nil {
		return domain.ArticleView{}, err
	}
	var moved domain.Article
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if moved, err = s.store.ScheduleIn(ctx, tx, a.ID, at); err != nil {
			return err
		}
		// One job per article and time: scheduling the same time again adds nothing, a new time
		// adds a job and leaves the old one to find the row changed.
		_, err = s.jobs.EnqueueIn(ctx, tx, domain.NewJob{Queue: QueueDefault, Kind: JobKindArticlePublish, Payload: payload, RunAt: at,
			MaxAttempts: articlePublishMaxAttempts, DeleteWhenDone: true,
			UniqueKey: JobKindArticlePublish + ":" + strconv.FormatInt(a.ID, 10) + ":" + strconv.FormatInt(at.UnixMicro(), 10)})
		return err
	})
	if err != nil {
		return domain.ArticleView{}, err
	}
	moved.BodyHTML = s.articles.bodyHTML(moved, a)
	return s.articles.view(ctx, viewerID, moved)
}

// Unschedule cancels the schedule of viewerID's scheduled article: it is a draft again
// (domain.ErrIllegalTransition when it is not scheduled).
func (s *ArticleScheduleService) Unschedule(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error) {
	a, err := s.articles.owned(ctx, viewerID, slug)
	if err != nil {
		return domain.ArticleView{}, err
	}
	moved, err := s.store.Unschedule(ctx, a.ID)
	if err != nil {
		return domain.ArticleView{}, err
	}
	moved.BodyHTML = s.articles.bodyHTML(moved, a)
	return s.articles.view(ctx, viewerID, moved)
}

// PublishDue publishes the article of an article_publish job if it is still scheduled at
// publishAt; a stale job, a job run twice and a deleted article do nothing.
func (s *ArticleScheduleService) PublishDue(ctx context.Context, articleID int64, publishAt time.Time) (published bool, err error) {
	_, published, err = s.store.PublishScheduled(ctx, articleID, publishAt)
	return published, err
}
