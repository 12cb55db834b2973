package service_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

// colDeps are the collection service's mocks: its repository and those of the article service
// it builds views with.
type colDeps struct {
	articleDeps
	cols *mocks.MockCollectionRepository
}

func newCollectionService(t *testing.T) (*service.CollectionService, colDeps) {
	t.Helper()
	articles, d := newArticleService(t)
	cols := mocks.NewMockCollectionRepository(gomock.NewController(t))
	return service.NewCollectionService(cols, articles), colDeps{articleDeps: d, cols: cols}
}

var colEpoch = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// The folders in these tests: reader owns readerFolder, critic owns criticFolder.
var (
	readerFolder = domain.Collection{ID: 31, OwnerID: reader.ID, Name: "Later", Description: "to read", ArticleCount: 2, CreatedAt: colEpoch, UpdatedAt: colEpoch}
	criticFolder = domain.Collection{ID: 32, OwnerID: critic.ID, Name: "Mine", CreatedAt: colEpoch, UpdatedAt: colEpoch}
)

var errFolderNotFound = fmt.Errorf("get collection 99: %w", domain.ErrNotFound)

// noFolderWrites proves the collection repository was never asked to change anything.
func noFolderWrites(d colDeps) {
	d.cols.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.cols.EXPECT().Update(gomock.Any(), gomock.Any()).Times(0)
	d.cols.EXPECT().Delete(gomock.Any(), gomock.Any()).Times(0)
	d.cols.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.cols.EXPECT().Remove(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

// nothingLookedUp proves the request was refused before any storage was asked anything.
func nothingLookedUp(d colDeps) {
	noFolderWrites(d)
	d.cols.EXPECT().Get(gomock.Any(), gomock.Any()).Times(0)
	d.cols.EXPECT().Items(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.articles.EXPECT().GetBySlug(gomock.Any(), gomock.Any()).Times(0)
	d.articles.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
	noView(d.articleDeps)
}

func wantCollection(want domain.Collection) func(t *testing.T, c domain.Collection, err error) {
	return func(t *testing.T, c domain.Collection, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("collection = %+v, want %+v", c, want)
		}
	}
}

func wantCollectionErr(target error) func(t *testing.T, c domain.Collection, err error) {
	return func(t *testing.T, c domain.Collection, err error) {
		t.Helper()
		requireErrorIs(t, err, target)
		if !reflect.DeepEqual(c, domain.Collection{}) {
			t.Errorf("collection = %+v alongside an error, want the zero value", c)
		}
	}
}

func wantCollectionValidation(fields map[string][]string) func(t *testing.T, c domain.Collection, err error) {
	return func(t *testing.T, c domain.Collection, err error) {
		t.Helper()
		requireValidation(t, err, fields)
	}
}

var (
	blankName   = map[string][]string{"name": {"can't be blank"}}
	longName    = map[string][]string{"name": {"is too long (maximum is 100 characters)"}}
	takenName   = map[string][]string{"name": {"has already been taken"}}
	errNameUsed = fmt.Errorf("insert collection: %w", domain.ErrCollectionNameTaken)
)

func TestCollectionService_Create(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         service.CollectionInput
		buildStubs func(d colDeps)
		check      func(t *testing.T, c domain.Collection, err error)
	}{
		{
			name: "created for the viewer with a trimmed name",
			in:   service.CollectionInput{Name: ptr("  Later  "), Description: ptr("to read")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), domain.Collection{OwnerID: reader.ID, Name: "Later", Description: "to read"}, service.MaxCollections).
					Return(readerFolder, nil)
			},
			check: wantCollection(readerFolder),
		},
		{
			name: "a description is optional",
			in:   service.CollectionInput{Name: ptr("Later")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), domain.Collection{OwnerID: reader.ID, Name: "Later"}, service.MaxCollections).Return(readerFolder, nil)
			},
			check: wantCollection(readerFolder),
		},
		{
			name: "a name of exactly 100 characters, multi-byte, is fine",
			in:   service.CollectionInput{Name: ptr(strings.Repeat("é", 100))},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), domain.Collection{OwnerID: reader.ID, Name: strings.Repeat("é", 100)}, service.MaxCollections).Return(readerFolder, nil)
			},
			check: wantCollection(readerFolder),
		},
		{
			name:       "a missing name is blank",
			in:         service.CollectionInput{Description: ptr("d")},
			buildStubs: noFolderWrites,
			check:      wantCollectionValidation(blankName),
		},
		{
			name:       "a whitespace name is blank",
			in:         service.CollectionInput{Name: ptr(" \t ")},
			buildStubs: noFolderWrites,
			check:      wantCollectionValidation(blankName),
		},
		{
			name:       "a name over 100 characters",
			in:         service.CollectionInput{Name: ptr(strings.Repeat("n", 101))},
			buildStubs: noFolderWrites,
			check:      wantCollectionValidation(longName),
		},
		{
			name:       "every bad field is reported at once",
			in:         service.CollectionInput{Name: ptr(""), Description: ptr(strings.Repeat("d", 1001))},
			buildStubs: noFolderWrites,
			check: wantCollectionValidation(map[string][]string{
				"name": {"can't be blank"}, "description": {"is too long (maximum is 1000 characters)"},
			}),
		},
		{
			name: "a name the viewer already uses",
			in:   service.CollectionInput{Name: ptr("Later")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.Collection{}, errNameUsed)
			},
			check: wantCollectionValidation(takenName),
		},
		{
			name: "an account at the cap is told how many it may have",
			in:   service.CollectionInput{Name: ptr("Later")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), gomock.Any(), service.MaxCollections).Return(domain.Collection{}, domain.ErrCollectionLimit)
			},
			check: wantCollectionValidation(map[string][]string{
				"collection": {"you have 200 collections already, the most one account may have; delete one first"},
			}),
		},
		{
			name: "a storage failure is not the client's fault",
			in:   service.CollectionInput{Name: ptr("Later")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.Collection{}, errStorage)
			},
			check: func(t *testing.T, _ domain.Collection, err error) {
				requireNoValidation(t, err)
				requireErrorIs(t, err, errStorage)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCollectionService(t)
			tc.buildStubs(d)
			c, err := s.Create(context.Background(), reader.ID, tc.in)
			tc.check(t, c, err)
		})
	}
}

func TestCollectionService_ListIsTheViewers(t *testing.T) {
	t.Parallel()
	s, d := newCollectionService(t)
	d.cols.EXPECT().ListByOwner(gomock.Any(), reader.ID).Return([]domain.Collection{readerFolder}, nil)
	got, err := s.List(context.Background(), reader.ID)
	if err != nil || len(got) != 1 || got[0].ID != readerFolder.ID {
		t.Fatalf("List = %+v, %v", got, err)
	}
}

func TestCollectionService_Update(t *testing.T) {
	t.Parallel()
	renamed := readerFolder
	renamed.Name = "Soon"
	tests := []struct {
		name       string
		viewerID   int64
		id         int64
		in         service.CollectionInput
		buildStubs func(d colDeps)
		check      func(t *testing.T, c domain.Collection, err error)
	}{
		{
			name:     "the owner renames; the description stays",
			viewerID: reader.ID, id: readerFolder.ID,
			in: service.CollectionInput{Name: ptr(" Soon ")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Update(gomock.Any(), renamed).Return(renamed, nil)
			},
			check: wantCollection(renamed),
		},
		{
			name:     "the owner re-describes; the name stays",
			viewerID: reader.ID, id: readerFolder.ID,
			in: service.CollectionInput{Description: ptr("")},
			buildStubs: func(d colDeps) {
				want := readerFolder
				want.Description = ""
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Update(gomock.Any(), want).Return(want, nil)
			},
			check: func(t *testing.T, c domain.Collection, err error) {
				if err != nil || c.Name != readerFolder.Name || c.Description != "" {
					t.Fatalf("update = %+v, %v", c, err)
				}
			},
		},
		{
			name:     "someone else's folder is forbidden",
			viewerID: reader.ID, id: criticFolder.ID,
			in: service.CollectionInput{Name: ptr("Mine now")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), criticFolder.ID).Return(criticFolder, nil)
				noFolderWrites(d)
			},
			check: wantCollectionErr(domain.ErrForbidden),
		},
		{
			name:     "an unknown folder is not found",
			viewerID: reader.ID, id: 99,
			in: service.CollectionInput{Name: ptr("x")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), int64(99)).Return(domain.Collection{}, errFolderNotFound)
				noFolderWrites(d)
			},
			check: wantCollectionErr(domain.ErrNotFound),
		},
		{
			name:     "a blank name is refused before anything is looked up",
			viewerID: reader.ID, id: readerFolder.ID,
			in:         service.CollectionInput{Name: ptr("  ")},
			buildStubs: nothingLookedUp,
			check:      wantCollectionValidation(blankName),
		},
		{
			name:     "an overlong name is refused before anything is looked up",
			viewerID: reader.ID, id: readerFolder.ID,
			in:         service.CollectionInput{Name: ptr(strings.Repeat("x", 101))},
			buildStubs: nothingLookedUp,
			check:      wantCollectionValidation(longName),
		},
		{
			name:     "renaming onto another of the owner's names",
			viewerID: reader.ID, id: readerFolder.ID,
			in: service.CollectionInput{Name: ptr("Taken")},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Update(gomock.Any(), gomock.Any()).Return(domain.Collection{}, errNameUsed)
			},
			check: wantCollectionValidation(takenName),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCollectionService(t)
			tc.buildStubs(d)
			c, err := s.Update(context.Background(), tc.viewerID, tc.id, tc.in)
			tc.check(t, c, err)
		})
	}
}

func TestCollectionService_Delete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		id         int64
		buildStubs func(d colDeps)
		want       error
	}{
		{
			name: "the owner deletes",
			id:   readerFolder.ID,
			buildStubs: func(d colDeps) {
				gomock.InOrder(
					d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil),
					d.cols.EXPECT().Delete(gomock.Any(), readerFolder.ID).Return(nil),
				)
			},
		},
		{
			name: "someone else's folder is forbidden",
			id:   criticFolder.ID,
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), criticFolder.ID).Return(criticFolder, nil)
				noFolderWrites(d)
			},
			want: domain.ErrForbidden,
		},
		{
			name: "an unknown folder is not found",
			id:   99,
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), int64(99)).Return(domain.Collection{}, errFolderNotFound)
				noFolderWrites(d)
			},
			want: domain.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCollectionService(t)
			tc.buildStubs(d)
			err := s.Delete(context.Background(), reader.ID, tc.id)
			if tc.want == nil && err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if tc.want != nil {
				requireErrorIs(t, err, tc.want)
			}
		})
	}
}

// expectCollectedView stubs the lookups that assemble one article for reader, who follows
// nobody, likes nothing and has it in a folder when collected.
func expectCollectedView(d colDeps, a domain.Article, author domain.User, counters domain.Counters, collected bool) {
	d.users.EXPECT().GetByID(gomock.Any(), a.AuthorID).Return(author, nil)
	d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, []int64{a.ID}).Return(map[int64]domain.Counters{a.ID: counters}, nil)
	d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, []int64{a.ID}).Return(map[int64]bool{}, nil)
	d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, []int64{a.ID}).Return(map[int64]bool{a.ID: collected}, nil)
	if a.AuthorID != reader.ID {
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, []int64{a.AuthorID}).Return(map[int64]bool{}, nil)
	}
}

func TestCollectionService_CollectUncollect(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	othersDraft := articleBy(2, writer.ID, domain.StatusDraft)
	ownDraft := articleBy(3, reader.ID, domain.StatusDraft)
	collect := func(s *service.CollectionService, slug string, folder int64) (domain.ArticleView, error) {
		return s.Collect(context.Background(), reader.ID, slug, folder)
	}
	uncollect := func(s *service.CollectionService, slug string, folder int64) (domain.ArticleView, error) {
		return s.Uncollect(context.Background(), reader.ID, slug, folder)
	}
	collectedView := func(a domain.Article, author domain.User, n int64, collected bool) domain.ArticleView {
		v := viewOf(a, author, flags{counters: domain.Counters{Collects: n}})
		v.Collected = collected
		return v
	}

	tests := []struct {
		name       string
		op         func(s *service.CollectionService, slug string, folder int64) (domain.ArticleView, error)
		slug       string
		folder     int64
		buildStubs func(d colDeps)
		check      func(t *testing.T, v domain.ArticleView, err error)
	}{
		{
			name: "collect into the viewer's folder, after checking it is theirs",
			op:   collect, slug: published.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				gomock.InOrder(
					d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil),
					d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil),
					d.cols.EXPECT().Add(gomock.Any(), readerFolder.ID, published.ID).Return(true, nil),
				)
				expectCollectedView(d, published, writer, domain.Counters{Collects: 1}, true)
			},
			check: wantArticleView(collectedView(published, writer, 1, true)),
		},
		{
			name: "collecting again still answers with the article",
			op:   collect, slug: published.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Add(gomock.Any(), readerFolder.ID, published.ID).Return(false, nil)
				expectCollectedView(d, published, writer, domain.Counters{Collects: 1}, true)
			},
			check: wantArticleView(collectedView(published, writer, 1, true)),
		},
		{
			name: "the author may collect their own draft",
			op:   collect, slug: ownDraft.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), ownDraft.Slug).Return(ownDraft, nil)
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Add(gomock.Any(), readerFolder.ID, ownDraft.ID).Return(true, nil)
				expectCollectedView(d, ownDraft, reader, domain.Counters{Collects: 1}, true)
			},
			check: wantArticleView(collectedView(ownDraft, reader, 1, true)),
		},
		{
			name: "uncollect",
			op:   uncollect, slug: published.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				gomock.InOrder(
					d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil),
					d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil),
					d.cols.EXPECT().Remove(gomock.Any(), readerFolder.ID, published.ID).Return(true, nil),
				)
				d.cols.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				expectCollectedView(d, published, writer, domain.Counters{}, false)
			},
			check: wantArticleView(collectedView(published, writer, 0, false)),
		},
		{
			name: "someone else's draft is not found and nothing changes",
			op:   collect, slug: othersDraft.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), othersDraft.Slug).Return(othersDraft, nil)
				noFolderWrites(d)
				noView(d.articleDeps)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "an unknown slug is not found",
			op:   uncollect, slug: "nope", folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), "nope").Return(domain.Article{}, fmt.Errorf("get: %w", domain.ErrNotFound))
				noFolderWrites(d)
				noView(d.articleDeps)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "someone else's folder is forbidden",
			op:   collect, slug: published.Slug, folder: criticFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.cols.EXPECT().Get(gomock.Any(), criticFolder.ID).Return(criticFolder, nil)
				noFolderWrites(d)
				noView(d.articleDeps)
			},
			check: wantArticleErr(domain.ErrForbidden),
		},
		{
			name: "uncollecting from someone else's folder is forbidden",
			op:   uncollect, slug: published.Slug, folder: criticFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.cols.EXPECT().Get(gomock.Any(), criticFolder.ID).Return(criticFolder, nil)
				noFolderWrites(d)
				noView(d.articleDeps)
			},
			check: wantArticleErr(domain.ErrForbidden),
		},
		{
			name: "an unknown folder is not found",
			op:   collect, slug: published.Slug, folder: 99,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.cols.EXPECT().Get(gomock.Any(), int64(99)).Return(domain.Collection{}, errFolderNotFound)
				noFolderWrites(d)
				noView(d.articleDeps)
			},
			check: wantArticleErr(domain.ErrNotFound),
		},
		{
			name: "a missing collectionId is refused before anything is looked up",
			op:   collect, slug: published.Slug, folder: 0,
			buildStubs: nothingLookedUp,
			check:      wantArticleValidation(map[string][]string{"collectionId": {"can't be blank"}}),
		},
		{
			name: "a negative collectionId is refused before anything is looked up",
			op:   uncollect, slug: published.Slug, folder: -4,
			buildStubs: nothingLookedUp,
			check:      wantArticleValidation(map[string][]string{"collectionId": {"can't be blank"}}),
		},
		{
			name: "a failing Add fails the request without a view",
			op:   collect, slug: published.Slug, folder: readerFolder.ID,
			buildStubs: func(d colDeps) {
				d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Add(gomock.Any(), readerFolder.ID, published.ID).Return(false, errStorage)
				noView(d.articleDeps)
			},
			check: wantArticleErr(errStorage),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCollectionService(t)
			tc.buildStubs(d)
			v, err := tc.op(s, tc.slug, tc.folder)
			tc.check(t, v, err)
		})
	}
}

// item is article id's entry in a folder, added n minutes before colEpoch.
func item(id int64, n int) domain.CollectionItem {
	return domain.CollectionItem{ArticleID: id, AddedAt: colEpoch.Add(-time.Duration(n) * time.Minute)}
}

// expectPageViews stubs the batched lookups that assemble arts (in this order) for reader, who
// follows nobody, likes nothing and has every one of them collected.
func expectPageViews(d colDeps, arts []domain.Article, authors ...domain.User) {
	ids := make([]int64, len(arts))
	counters := map[int64]domain.Counters{}
	collected := map[int64]bool{}
	for i, a := range arts {
		ids[i] = a.ID
		counters[a.ID] = domain.Counters{Reads: a.ID, Collects: 1}
		collected[a.ID] = true
	}
	found := map[int64]domain.User{}
	var authorIDs, others []int64
	for _, u := range authors {
		found[u.ID] = u
		authorIDs = append(authorIDs, u.ID)
		if u.ID != reader.ID {
			others = append(others, u.ID)
		}
	}
	d.users.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.InAnyOrder(authorIDs)).Return(found, nil).Times(1)
	d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, gomock.InAnyOrder(ids)).Return(counters, nil).Times(1)
	d.inter.EXPECT().Liked(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder(ids)).Return(map[int64]bool{}, nil).Times(1)
	d.inter.EXPECT().Collected(gomock.Any(), reader.ID, domain.BizArticle, gomock.InAnyOrder(ids)).Return(collected, nil).Times(1)
	if len(others) > 0 {
		d.follows.EXPECT().FollowingAmong(gomock.Any(), reader.ID, gomock.InAnyOrder(others)).Return(map[int64]bool{}, nil).Times(1)
	} else {
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
}

// wantPage checks a page's articles (by id, in order), its count and its cursor (nil: none).
func wantPage(t *testing.T, l service.ArticleList, err error, ids []int64, cursor *domain.Cursor) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	got := make([]int64, len(l.Articles))
	for i, v := range l.Articles {
		got[i] = v.ID
		if !v.Collected || v.Counters.Reads != v.ID || v.Author.Username == "" {
			t.Errorf("article %d not assembled: %+v", v.ID, v)
		}
	}
	if l.Articles == nil || !slices.Equal(got, ids) {
		t.Errorf("articles %v, want %v", got, ids)
	}
	if l.Total != int64(len(ids)) {
		t.Errorf("Total = %d, want %d", l.Total, len(ids))
	}
	if !reflect.DeepEqual(l.NextCursor, cursor) {
		t.Errorf("NextCursor = %+v, want %+v", l.NextCursor, cursor)
	}
}

func TestCollectionService_Articles(t *testing.T) {
	t.Parallel()
	a1 := articleBy(1, writer.ID, domain.StatusPublished)
	a2 := articleBy(2, critic.ID, domain.StatusPublished)
	a3 := articleBy(3, writer.ID, domain.StatusPublished)
	withdrawn := articleBy(4, critic.ID, domain.StatusWithdrawn)
	othersDraft := articleBy(5, writer.ID, domain.StatusDraft)
	ownDraft := articleBy(6, reader.ID, domain.StatusDraft)
	after := &domain.Cursor{CreatedAt: colEpoch, ID: 77}

	tests := []struct {
		name       string
		id         int64
		page       domain.Page
		buildStubs func(d colDeps)
		check      func(t *testing.T, l service.ArticleList, err error)
	}{
		{
			name: "a page with more after it, in the folder's order, has a cursor at its last item",
			id:   readerFolder.ID, page: domain.Page{Limit: 3, Cursor: after},
			buildStubs: func(d colDeps) {
				// One more than the page is read; the fourth only says a next page exists.
				items := []domain.CollectionItem{item(a3.ID, 1), item(a1.ID, 2), item(a2.ID, 3), item(ownDraft.ID, 4)}
				gomock.InOrder(
					d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil),
					d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, after, 4).Return(items, nil),
					// The lookup answers in any order; the page keeps the folder's.
					d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a3.ID, a1.ID, a2.ID}).Return([]domain.Article{a1, a2, a3}, nil),
				)
				expectPageViews(d, []domain.Article{a3, a1, a2}, writer, critic)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				last := item(a2.ID, 3)
				wantPage(t, l, err, []int64{a3.ID, a1.ID, a2.ID}, &domain.Cursor{CreatedAt: last.AddedAt, ID: a2.ID})
			},
		},
		{
			name: "a short page has no cursor",
			id:   readerFolder.ID, page: domain.Page{Limit: 3},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 4).Return([]domain.CollectionItem{item(a1.ID, 1), item(a2.ID, 2)}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a1.ID, a2.ID}).Return([]domain.Article{a2, a1}, nil)
				expectPageViews(d, []domain.Article{a1, a2}, writer, critic)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				wantPage(t, l, err, []int64{a1.ID, a2.ID}, nil)
			},
		},
		{
			name: "a full last page has no cursor: nothing came beyond it",
			id:   readerFolder.ID, page: domain.Page{Limit: 2},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 3).Return([]domain.CollectionItem{item(a1.ID, 1), item(a2.ID, 2)}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a1.ID, a2.ID}).Return([]domain.Article{a2, a1}, nil)
				expectPageViews(d, []domain.Article{a1, a2}, writer, critic)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				wantPage(t, l, err, []int64{a1.ID, a2.ID}, nil)
			},
		},
		{
			name: "unreadable articles are skipped; the cursor still follows the full page",
			id:   readerFolder.ID, page: domain.Page{Limit: 4},
			buildStubs: func(d colDeps) {
				const deleted = 40
				items := []domain.CollectionItem{item(withdrawn.ID, 1), item(a1.ID, 2), item(othersDraft.ID, 3), item(deleted, 4), item(a2.ID, 5)}
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 5).Return(items, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{withdrawn.ID, a1.ID, othersDraft.ID, deleted}).
					Return([]domain.Article{othersDraft, a1, withdrawn}, nil)
				expectPageViews(d, []domain.Article{a1}, writer)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				last := item(40, 4)
				wantPage(t, l, err, []int64{a1.ID}, &domain.Cursor{CreatedAt: last.AddedAt, ID: 40})
			},
		},
		{
			name: "a full page of nothing readable is empty but has a cursor to go on",
			id:   readerFolder.ID, page: domain.Page{Limit: 2},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 3).Return([]domain.CollectionItem{item(withdrawn.ID, 1), item(othersDraft.ID, 2), item(a1.ID, 3)}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return([]domain.Article{withdrawn, othersDraft}, nil)
				noView(d.articleDeps)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				last := item(othersDraft.ID, 2)
				wantPage(t, l, err, []int64{}, &domain.Cursor{CreatedAt: last.AddedAt, ID: othersDraft.ID})
			},
		},
		{
			name: "the viewer's own draft stays listed",
			id:   readerFolder.ID, page: domain.Page{Limit: 5},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 6).Return([]domain.CollectionItem{item(ownDraft.ID, 1)}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{ownDraft.ID}).Return([]domain.Article{ownDraft}, nil)
				expectPageViews(d, []domain.Article{ownDraft}, reader)
			},
			check: func(t *testing.T, l service.ArticleList, err error) {
				wantPage(t, l, err, []int64{ownDraft.ID}, nil)
			},
		},
		{
			name: "an empty folder looks nothing up",
			id:   readerFolder.ID, page: domain.Page{Limit: 20},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 21).Return([]domain.CollectionItem{}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
				noView(d.articleDeps)
			},
			check: wantEmptyList,
		},
		{
			name: "someone else's folder is forbidden",
			id:   criticFolder.ID, page: domain.Page{Limit: 20},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), criticFolder.ID).Return(criticFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				noView(d.articleDeps)
			},
			check: func(t *testing.T, _ service.ArticleList, err error) { requireErrorIs(t, err, domain.ErrForbidden) },
		},
		{
			name: "an unknown folder is not found",
			id:   99, page: domain.Page{Limit: 20},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), int64(99)).Return(domain.Collection{}, errFolderNotFound)
				d.cols.EXPECT().Items(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.ArticleList, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a failing article lookup fails the page",
			id:   readerFolder.ID, page: domain.Page{Limit: 20},
			buildStubs: func(d colDeps) {
				d.cols.EXPECT().Get(gomock.Any(), readerFolder.ID).Return(readerFolder, nil)
				d.cols.EXPECT().Items(gomock.Any(), readerFolder.ID, nil, 21).Return([]domain.CollectionItem{item(a1.ID, 1)}, nil)
				d.articles.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(nil, errStorage)
				noView(d.articleDeps)
			},
			check: func(t *testing.T, _ service.ArticleList, err error) { requireErrorIs(t, err, errStorage) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newCollectionService(t)
			tc.buildStubs(d)
			l, err := s.Articles(context.Background(), reader.ID, tc.id, tc.page)
			tc.check(t, l, err)
		})
	}
}

// The reading history pages like a folder: by read time, skipping what can no longer be read.
func TestReadService_History(t *testing.T) {
	t.Parallel()
	a1 := articleBy(1, writer.ID, domain.StatusPublished)
	withdrawn := articleBy(2, critic.ID, domain.StatusWithdrawn)
	read := func(id int64, n int) domain.HistoryEntry {
		return domain.HistoryEntry{ArticleID: id, ReadAt: colEpoch.Add(-time.Duration(n) * time.Second)}
	}
	after := &domain.Cursor{CreatedAt: colEpoch, ID: 9}

	t.Run("a page with more after it skips the withdrawn article and has a cursor at the last read", func(t *testing.T) {
		t.Parallel()
		articles, d := newArticleService(t)
		reads := mocks.NewMockReadRepository(gomock.NewController(t))
		s := service.NewReadService(reads, articles)
		reads.EXPECT().History(gomock.Any(), reader.ID, after, 3).Return([]domain.HistoryEntry{read(a1.ID, 1), read(withdrawn.ID, 2), read(a1.ID, 3)}, nil)
		d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a1.ID, withdrawn.ID}).Return([]domain.Article{withdrawn, a1}, nil)
		expectPageViews(colDeps{articleDeps: d}, []domain.Article{a1}, writer)
		l, err := s.History(context.Background(), reader.ID, domain.Page{Limit: 2, Cursor: after})
		wantPage(t, l, err, []int64{a1.ID}, &domain.Cursor{CreatedAt: read(withdrawn.ID, 2).ReadAt, ID: withdrawn.ID})
	})
	t.Run("a short page has no cursor", func(t *testing.T) {
		t.Parallel()
		articles, d := newArticleService(t)
		reads := mocks.NewMockReadRepository(gomock.NewController(t))
		s := service.NewReadService(reads, articles)
		reads.EXPECT().History(gomock.Any(), reader.ID, nil, 6).Return([]domain.HistoryEntry{read(a1.ID, 1)}, nil)
		d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a1.ID}).Return([]domain.Article{a1}, nil)
		expectPageViews(colDeps{articleDeps: d}, []domain.Article{a1}, writer)
		l, err := s.History(context.Background(), reader.ID, domain.Page{Limit: 5})
		wantPage(t, l, err, []int64{a1.ID}, nil)
	})
	t.Run("a full last page has no cursor", func(t *testing.T) {
		t.Parallel()
		articles, d := newArticleService(t)
		reads := mocks.NewMockReadRepository(gomock.NewController(t))
		s := service.NewReadService(reads, articles)
		reads.EXPECT().History(gomock.Any(), reader.ID, nil, 2).Return([]domain.HistoryEntry{read(a1.ID, 1)}, nil)
		d.articles.EXPECT().GetByIDs(gomock.Any(), []int64{a1.ID}).Return([]domain.Article{a1}, nil)
		expectPageViews(colDeps{articleDeps: d}, []domain.Article{a1}, writer)
		l, err := s.History(context.Background(), reader.ID, domain.Page{Limit: 1})
		wantPage(t, l, err, []int64{a1.ID}, nil)
	})
	t.Run("an empty history looks nothing up", func(t *testing.T) {
		t.Parallel()
		articles, d := newArticleService(t)
		reads := mocks.NewMockReadRepository(gomock.NewController(t))
		s := service.NewReadService(reads, articles)
		reads.EXPECT().History(gomock.Any(), reader.ID, nil, 21).Return(nil, nil)
		d.articles.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
		noView(d)
		l, err := s.History(context.Background(), reader.ID, domain.Page{Limit: 20})
		wantEmptyList(t, l, err)
	})
}
