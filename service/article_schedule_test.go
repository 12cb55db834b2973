package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

// scheduledJobs records the jobs a use case enqueues, and which unit of work each joined.
type scheduledJobs struct {
	jobs []domain.NewJob
	txs  []service.Tx
	err  error
}

func (s *scheduledJobs) EnqueueIn(_ context.Context, tx service.Tx, j domain.NewJob) (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	s.jobs, s.txs = append(s.jobs, j), append(s.txs, tx)
	return true, nil
}

type scheduleDeps struct {
	articleDeps
	store *mocks.MockArticleScheduleStore
	jobs  *scheduledJobs
	tx    *fakeTx
}

// scheduleNow is the injected clock of the schedule tests.
var scheduleNow = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

func newScheduleService(t *testing.T) (*service.ArticleScheduleService, scheduleDeps) {
	t.Helper()
	articles, ad := newArticleService(t)
	d := scheduleDeps{articleDeps: ad, store: mocks.NewMockArticleScheduleStore(gomock.NewController(t)), jobs: &scheduledJobs{}, tx: &fakeTx{id: 32}}
	return service.NewArticleScheduleService(articles, d.store, d.jobs, txUnitOfWork{d.tx}, func() time.Time { return scheduleNow }), d
}

func TestArticleScheduleService_Schedule(t *testing.T) {
	t.Parallel()
	draft := articleBy(1, writer.ID, domain.StatusDraft)
	published := articleBy(2, writer.ID, domain.StatusPublished)
	othersDraft := articleBy(3, critic.ID, domain.StatusDraft)
	at := scheduleNow.Add(time.Hour)
	scheduled := func(a domain.Article, at time.Time) domain.Article {
		a.Status, a.Version, a.PublishAt = domain.StatusScheduled, a.Version+1, &at
		return a
	}

	tests := []struct {
		name       string
		slug       string
		publishAt  string
		buildStubs func(d scheduleDeps)
		check      func(t *testing.T, d scheduleDeps, v domain.ArticleView, err error)
	}{
		{
			name: "a draft is scheduled and its job enqueued in the same unit of work", slug: draft.Slug, publishAt: at.Format(time.RFC3339),
			buildStubs: func(d scheduleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				d.store.EXPECT().ScheduleIn(gomock.Any(), d.tx, draft.ID, at).Return(scheduled(draft, at), nil)
				expectView(d.articleDeps, writer.ID, scheduled(draft, at), writer, flags{})
			},
			check: func(t *testing.T, d scheduleDeps, v domain.ArticleView, err error) {
				wantArticleView(viewOf(scheduled(draft, at), writer, flags{}))(t, v, err)
				if len(d.jobs.jobs) != 1 || d.jobs.txs[0] != d.tx {
					t.Fatalf("jobs %+v in %v, want one in the schedule's unit of work", d.jobs.jobs, d.jobs.txs)
				}
				j := d.jobs.jobs[0]
				var p service.ArticlePublishPayload
				if err := json.Unmarshal(j.Payload, &p); err != nil || p.ArticleID != draft.ID || !p.PublishAt.Equal(at) {
					t.Fatalf("payload %s (%v)", j.Payload, err)
				}
				if j.Kind != service.JobKindArticlePublish || j.Queue != service.QueueDefault || !j.RunAt.Equal(at) ||
					j.UniqueKey == "" || !j.DeleteWhenDone {
					t.Fatalf("job %+v", j)
				}
			},
		},
		{
			name: "a past time is refused before anything is read", slug: draft.Slug, publishAt: scheduleNow.Add(-time.Second).Format(time.RFC3339),
			buildStubs: func(scheduleDeps) {},
			check:      wantScheduleErr("publishAt"),
		},
		{
			name: "more than a year ahead is refused", slug: draft.Slug, publishAt: scheduleNow.Add(domain.MaxScheduleAhead + time.Minute).Format(time.RFC3339),
			buildStubs: func(scheduleDeps) {},
			check:      wantScheduleErr("publishAt"),
		},
		{
			name: "malformed is refused", slug: draft.Slug, publishAt: "next tuesday",
			buildStubs: func(scheduleDeps) {},
			check:      wantScheduleErr("publishAt"),
		},
		{
			name: "a published article is an illegal transition", slug: published.Slug, publishAt: at.Format(time.RFC3339),
			buildStubs: func(d scheduleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
			},
			check: func(t *testing.T, d scheduleDeps, _ domain.ArticleView, err error) {
				requireErrorIs(t, err, domain.ErrIllegalTransition)
				if len(d.jobs.jobs) != 0 {
					t.Fatalf("jobs enqueued: %+v", d.jobs.jobs)
				}
			},
		},
		{
			name: "someone else's article is forbidden", slug: othersDraft.Slug, publishAt: at.Format(time.RFC3339),
			buildStubs: func(d scheduleDeps) {
				othersDraft := othersDraft
				othersDraft.Status = domain.StatusPublished // visible, not theirs
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
			},
			check: func(t *testing.T, _ scheduleDeps, _ domain.ArticleView, err error) {
				requireErrorIs(t, err, domain.ErrForbidden)
			},
		},
		{
			name: "someone else's draft is not found", slug: othersDraft.Slug, publishAt: at.Format(time.RFC3339),
			buildStubs: func(d scheduleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
			},
			check: func(t *testing.T, _ scheduleDeps, _ domain.ArticleView, err error) {
				requireErrorIs(t, err, domain.ErrNotFound)
			},
		},
		{
			name: "storage refusing the transition enqueues nothing", slug: draft.Slug, publishAt: at.Format(time.RFC3339),
			buildStubs: func(d scheduleDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
				d.store.EXPECT().ScheduleIn(gomock.Any(), d.tx, draft.ID, at).Return(domain.Article{}, domain.ErrIllegalTransition)
			},
			check: func(t *testing.T, d scheduleDeps, _ domain.ArticleView, err error) {
				requireErrorIs(t, err, domain.ErrIllegalTransition)
				if len(d.jobs.jobs) != 0 {
					t.Fatalf("jobs enqueued: %+v", d.jobs.jobs)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newScheduleService(t)
			tc.buildStubs(d)
			v, err := s.Schedule(context.Background(), writer.ID, tc.slug, tc.publishAt)
			tc.check(t, d, v, err)
		})
	}
}

func wantScheduleErr(field string) func(t *testing.T, d scheduleDeps, v domain.ArticleView, err error) {
	return func(t *testing.T, d scheduleDeps, _ domain.ArticleView, err error) {
		t.Helper()
		var v *domain.ValidationError
		if !errors.As(err, &v) || len(v.Fields[field]) == 0 {
			t.Fatalf("err = %v, want a validation error on %s", err, field)
		}
		if len(d.jobs.jobs) != 0 {
			t.Fatalf("jobs enqueued: %+v", d.jobs.jobs)
		}
	}
}

func TestArticleScheduleService_Unschedule(t *testing.T) {
	t.Parallel()
	at := scheduleNow.Add(time.Hour)
	sched := articleBy(1, writer.ID, domain.StatusScheduled)
	sched.PublishAt = &at
	draft := sched
	draft.Status, draft.PublishAt, draft.Version = domain.StatusDraft, nil, sched.Version+1

	t.Run("a scheduled article is a draft again", func(t *testing.T) {
		t.Parallel()
		s, d := newScheduleService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), sched.Slug).Return(sched, nil)
		d.store.EXPECT().Unschedule(gomock.Any(), sched.ID).Return(draft, nil)
		expectView(d.articleDeps, writer.ID, draft, writer, flags{})
		v, err := s.Unschedule(context.Background(), writer.ID, sched.Slug)
		wantArticleView(viewOf(draft, writer, flags{}))(t, v, err)
	})
	t.Run("an article that is not scheduled is an illegal transition", func(t *testing.T) {
		t.Parallel()
		s, d := newScheduleService(t)
		d.articles.EXPECT().GetBySlug(gomock.Any(), draft.Slug).Return(draft, nil)
		d.store.EXPECT().Unschedule(gomock.Any(), draft.ID).Return(domain.Article{}, domain.ErrIllegalTransition)
		_, err := s.Unschedule(context.Background(), writer.ID, draft.Slug)
		requireErrorIs(t, err, domain.ErrIllegalTransition)
	})
}

func TestArticleScheduleService_PublishDue(t *testing.T) {
	t.Parallel()
	at := scheduleNow.Add(time.Hour)
	for _, published := range []bool{true, false} {
		s, d := newScheduleService(t)
		d.store.EXPECT().PublishScheduled(gomock.Any(), int64(7), at).Return(domain.Article{}, published, nil)
		got, err := s.PublishDue(context.Background(), 7, at)
		if err != nil || got != published {
			t.Fatalf("PublishDue = %v, %v; want %v", got, err, published)
		}
	}
}
