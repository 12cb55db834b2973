package service_test

import (
	"context"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
)

// TestArticleService_GetRecordsReads: reading a published article hands one read to the
// recorder (and nothing to storage); reading a draft, or failing to read, records nothing.
func TestArticleService_GetRecordsReads(t *testing.T) {
	t.Parallel()
	t.Run("published article, anonymous and signed-in readers", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		a := articleBy(1, writer.ID, domain.StatusPublished)
		d.articles.EXPECT().GetBySlug(gomock.Any(), a.Slug).Return(a, nil).Times(2)
		expectView(d, 0, a, writer, flags{})
		expectView(d, reader.ID, a, writer, flags{})
		for _, viewer := range []int64{0, reader.ID} {
			if _, err := svc.Get(context.Background(), viewer, a.Slug); err != nil {
				t.Fatal(err)
			}
		}
		evs := d.reads.events()
		if len(evs) != 2 {
			t.Fatalf("%d events recorded, want 2", len(evs))
		}
		if evs[0].ArticleID != a.ID || evs[0].UserID != 0 || evs[1].UserID != reader.ID {
			t.Fatalf("events %+v", evs)
		}
		// The signed-in read is an event of its own (history needs its id and time); the anonymous
		// one only counts, and the recorder names the batch it lands in.
		if evs[1].ID == "" || evs[1].At.IsZero() {
			t.Fatalf("a signed-in read needs an id and a time: %+v", evs[1])
		}
		if evs[0].Reads() != 1 {
			t.Fatalf("an anonymous read counts %d", evs[0].Reads())
		}
	})
	t.Run("the author reading a draft records nothing", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		a := articleBy(2, writer.ID, domain.StatusDraft)
		d.articles.EXPECT().GetBySlug(gomock.Any(), a.Slug).Return(a, nil)
		expectView(d, writer.ID, a, writer, flags{})
		if _, err := svc.Get(context.Background(), writer.ID, a.Slug); err != nil {
			t.Fatal(err)
		}
		if n := len(d.reads.events()); n != 0 {
			t.Fatalf("%d events recorded for a draft", n)
		}
	})
	t.Run("a hidden article records nothing", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		a := articleBy(3, writer.ID, domain.StatusWithdrawn)
		d.articles.EXPECT().GetBySlug(gomock.Any(), a.Slug).Return(a, nil)
		noView(d)
		if _, err := svc.Get(context.Background(), reader.ID, a.Slug); err == nil {
			t.Fatal("withdrawn article served to a reader")
		}
		if n := len(d.reads.events()); n != 0 {
			t.Fatalf("%d events recorded", n)
		}
	})
}
