package service_test

import (
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// FlagsOf is the viewer's part of Get's view: the like and the collection of the article, and the
// follow of its author, never of oneself.
func TestArticleService_FlagsOf(t *testing.T) {
	t.Parallel()
	const article = 5
	t.Run("another's article", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, []int64{article}).Return(map[int64]bool{article: true}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, []int64{article}).Return(map[int64]bool{}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, []int64{writer.ID}).Return(map[int64]bool{writer.ID: true}, nil)
		f, err := svc.FlagsOf(t.Context(), reader.ID, article, writer.ID)
		if want := (service.ViewerFlags{Favorited: true, Following: true}); err != nil || f != want {
			t.Fatalf("FlagsOf = %+v, %v; want %+v", f, err, want)
		}
	})
	t.Run("one's own article", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		d.inter.EXPECT().Liked(gomock.Any(), writer.ID, domain.BizArticle, []int64{article}).Return(map[int64]bool{}, nil)
		d.inter.EXPECT().Collected(gomock.Any(), writer.ID, domain.BizArticle, []int64{article}).Return(map[int64]bool{article: true}, nil)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		f, err := svc.FlagsOf(t.Context(), writer.ID, article, writer.ID)
		if want := (service.ViewerFlags{Collected: true}); err != nil || f != want {
			t.Fatalf("FlagsOf = %+v, %v; want %+v", f, err, want)
		}
	})
	t.Run("a failed lookup is the error", func(t *testing.T) {
		t.Parallel()
		svc, d := newArticleService(t)
		d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errDB)
		if _, err := svc.FlagsOf(t.Context(), reader.ID, article, writer.ID); err == nil {
			t.Fatal("FlagsOf: nil error")
		}
	})
}

// RecordRead records as Get does: a signed-in read as an event of its own (id and time), an
// anonymous one as a bare count.
func TestArticleService_RecordRead(t *testing.T) {
	t.Parallel()
	svc, d := newArticleService(t)
	svc.RecordRead(0, 5)
	svc.RecordRead(reader.ID, 5)
	evs := d.reads.events()
	if len(evs) != 2 || evs[0] != (domain.ReadEvent{ArticleID: 5}) {
		t.Fatalf("events %+v; want the anonymous read bare first", evs)
	}
	if s := evs[1]; s.UserID != reader.ID || s.ArticleID != 5 || s.ID == "" || s.At.IsZero() {
		t.Fatalf("signed-in read %+v; want its reader, an id and a time", s)
	}
}
