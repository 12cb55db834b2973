package job_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

type fakePublisher struct {
	id  int64
	at  time.Time
	err error
}

func (f *fakePublisher) PublishDue(_ context.Context, id int64, at time.Time) (bool, error) {
	f.id, f.at = id, at
	return f.err == nil, f.err
}

func TestArticlePublishHandler(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 15, 4, 5, 123000, time.UTC)
	t.Run("publishes the payload's article at the payload's time", func(t *testing.T) {
		t.Parallel()
		p := &fakePublisher{}
		err := job.ArticlePublishHandler(p)(t.Context(), domain.Job{Kind: service.JobKindArticlePublish,
			Payload: []byte(`{"articleId":7,"publishAt":"2030-01-02T15:04:05.000123Z"}`)})
		if err != nil || p.id != 7 || !p.at.Equal(at) {
			t.Fatalf("err %v, published %d at %v", err, p.id, p.at)
		}
	})
	t.Run("a storage failure retries", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		err := job.ArticlePublishHandler(&fakePublisher{err: boom})(t.Context(), domain.Job{Kind: service.JobKindArticlePublish,
			Payload: []byte(`{"articleId":7,"publishAt":"2030-01-02T15:04:05Z"}`)})
		if !errors.Is(err, boom) || errors.Is(err, domain.ErrPermanent) {
			t.Fatalf("err %v, want the storage's, not permanent", err)
		}
	})
	for _, payload := range []string{`{}`, `{"articleId":7}`, `{"articleId":-1,"publishAt":"2030-01-02T15:04:05Z"}`, `[`} {
		t.Run("malformed "+payload+" is permanent", func(t *testing.T) {
			t.Parallel()
			p := &fakePublisher{}
			err := job.ArticlePublishHandler(p)(t.Context(), domain.Job{Kind: service.JobKindArticlePublish, Payload: []byte(payload)})
			if !errors.Is(err, domain.ErrPermanent) || p.id != 0 {
				t.Fatalf("err %v, published %d", err, p.id)
			}
		})
	}
}
