package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type blockDeps struct {
	users   *mocks.MockUserRepository
	blocks  *mocks.MockBlockRepository
	follows *mocks.MockFollowEnder
}

func newBlockService(t *testing.T) (*service.BlockService, blockDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := blockDeps{users: mocks.NewMockUserRepository(ctrl), blocks: mocks.NewMockBlockRepository(ctrl), follows: mocks.NewMockFollowEnder(ctrl)}
	return service.NewBlockService(d.users, d.blocks, d.follows, txUnitOfWork{noHooksTx{}}), d
}

// noBlockWrites proves the request never reached block or follow storage.
func noBlockWrites(d blockDeps) {
	d.blocks.EXPECT().LockPairIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.blocks.EXPECT().BlockIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.blocks.EXPECT().Unblock(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.follows.EXPECT().UnfollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func blockingJake() domain.Profile {
	p := jakeProfile
	p.Blocking = true
	return p
}

func TestBlockService_Block(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		username   string
		buildStubs func(d blockDeps)
		check      func(t *testing.T, p domain.Profile, err error)
	}{
		{
			name:     "blocks and ends the follows both ways in one unit of work, under the pair's lock",
			username: "jake",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				gomock.InOrder(
					d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil),
					d.blocks.EXPECT().BlockIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(true, nil),
					d.follows.EXPECT().UnfollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil),
					d.follows.EXPECT().UnfollowIn(gomock.Any(), noHooksTx{}, jake.ID, viewer).Return(nil),
				)
			},
			check: wantProfile(blockingJake()),
		},
		{
			name:     "blocking twice answers the same",
			username: "jake",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
				d.blocks.EXPECT().BlockIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(false, nil)
				d.follows.EXPECT().UnfollowIn(gomock.Any(), noHooksTx{}, gomock.Any(), gomock.Any()).Return(nil).Times(2)
			},
			check: wantProfile(blockingJake()),
		},
		{
			name:     "yourself is refused before any storage",
			username: "me",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "me").Return(domain.User{ID: viewer, Username: "me"}, nil)
				noBlockWrites(d)
			},
			check: func(t *testing.T, _ domain.Profile, err error) {
				requireValidation(t, err, map[string][]string{"username": {"you cannot block yourself"}})
			},
		},
		{
			name:     "an unknown user is not found and nothing is written",
			username: "nobody",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "nobody").Return(domain.User{}, fmt.Errorf("get: %w", domain.ErrNotFound))
				noBlockWrites(d)
			},
			check: wantErr(domain.ErrNotFound),
		},
		{
			name:     "a blocker deleted mid-request is unauthorized",
			username: "jake",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
				d.blocks.EXPECT().BlockIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(false, fmt.Errorf("block: %w", domain.ErrNotFound))
				d.follows.EXPECT().UnfollowIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantErr(domain.ErrUnauthorized),
		},
		{
			name:     "a storage failure passes through",
			username: "jake",
			buildStubs: func(d blockDeps) {
				d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
				d.blocks.EXPECT().LockPairIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(nil)
				d.blocks.EXPECT().BlockIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(true, nil)
				d.follows.EXPECT().UnfollowIn(gomock.Any(), noHooksTx{}, viewer, jake.ID).Return(domain.ErrUnavailable)
			},
			check: wantErr(domain.ErrUnavailable),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newBlockService(t)
			tc.buildStubs(d)
			p, err := svc.Block(context.Background(), viewer, tc.username)
			tc.check(t, p, err)
		})
	}
}

func TestBlockService_Unblock(t *testing.T) {
	t.Parallel()
	t.Run("unblocks", func(t *testing.T) {
		t.Parallel()
		svc, d := newBlockService(t)
		d.users.EXPECT().GetByUsername(gomock.Any(), "jake").Return(jake, nil)
		d.blocks.EXPECT().Unblock(gomock.Any(), viewer, jake.ID).Return(true, nil)
		p, err := svc.Unblock(context.Background(), viewer, "jake")
		wantProfile(jakeProfile)(t, p, err)
	})
	t.Run("yourself is refused before any storage", func(t *testing.T) {
		t.Parallel()
		svc, d := newBlockService(t)
		d.users.EXPECT().GetByUsername(gomock.Any(), "me").Return(domain.User{ID: viewer, Username: "me"}, nil)
		noBlockWrites(d)
		_, err := svc.Unblock(context.Background(), viewer, "me")
		requireValidation(t, err, map[string][]string{"username": {"you cannot unblock yourself"}})
	})
	t.Run("an unknown user is not found", func(t *testing.T) {
		t.Parallel()
		svc, d := newBlockService(t)
		d.users.EXPECT().GetByUsername(gomock.Any(), "nobody").Return(domain.User{}, domain.ErrNotFound)
		noBlockWrites(d)
		_, err := svc.Unblock(context.Background(), viewer, "nobody")
		requireErrorIs(t, err, domain.ErrNotFound)
	})
}

func TestBlockService_List(t *testing.T) {
	t.Parallel()
	svc, d := newBlockService(t)
	got := []domain.BlockedUser{
		{UserID: 5, Username: "a", BlockedAt: articleEpoch},
		{UserID: 6, Username: "b", BlockedAt: articleEpoch.Add(-1)},
		{UserID: 4, Username: "c", BlockedAt: articleEpoch.Add(-2)},
	}
	cur := &domain.Cursor{CreatedAt: articleEpoch.Add(1), ID: 2}
	d.blocks.EXPECT().List(gomock.Any(), viewer, cur, 3).Return(got, nil)
	l, err := svc.List(context.Background(), viewer, cur, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := service.BlockList{Blocked: got[:2], NextCursor: &domain.Cursor{CreatedAt: got[1].BlockedAt, ID: 6}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("list = %+v, want %+v", l, want)
	}
}

// memoryList is a published list in storage: newest first, read by cursor like the repository.
// It counts the reads and the rows they returned.
type memoryList struct {
	arts  []domain.Article
	reads int
	rows  int
}

func (m *memoryList) read(_ context.Context, p domain.Page) (service.ArticlePage, error) {
	m.reads++
	if p.Offset != 0 {
		return service.ArticlePage{}, errors.New("a filtered list must read by cursor")
	}
	start := 0
	if p.Cursor != nil {
		start = sort.Search(len(m.arts), func(i int) bool {
			a := m.arts[i]
			return a.CreatedAt.Before(p.Cursor.CreatedAt) || (a.CreatedAt.Equal(p.Cursor.CreatedAt) && a.ID < p.Cursor.ID)
		})
	}
	end := min(start+p.Limit, len(m.arts))
	m.rows += end - start
	return service.ArticlePage{Articles: m.arts[start:end], Total: int64(len(m.arts)), More: end < len(m.arts)}, nil
}

// listOfAuthors is a newest-first list whose article i+1 is by authors[i].
func listOfAuthors(authors ...int64) *memoryList {
	m := &memoryList{}
	for i, a := range authors {
		m.arts = append(m.arts, articleBy(int64(i+1), a, domain.StatusPublished))
	}
	return m
}

// anyViews answers every lookup a page's rendering makes.
func anyViews(d articleDeps) {
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(map[int64]domain.User{writer.ID: writer, critic.ID: critic, reader.ID: reader}, nil).AnyTimes()
	d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Return(map[int64]domain.Counters{}, nil).AnyTimes()
	d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(map[int64]bool{}, nil).AnyTimes()
	d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(map[int64]bool{}, nil).AnyTimes()
	d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Return(map[int64]bool{}, nil).AnyTimes()
}

func idsOf(l service.ArticleList) []int64 {
	out := []int64{}
	for _, v := range l.Articles {
		out = append(out, v.ID)
	}
	return out
}

func TestArticleService_ListLeavesOutBlockedAuthorsAndRefills(t *testing.T) {
	t.Parallel()
	w, c := writer.ID, critic.ID
	tests := []struct {
		name      string
		list      *memoryList
		page      domain.Page
		wantIDs   []int64
		wantNext  *domain.Cursor // nil: no next page
		wantReads int
	}{
		{
			name:    "the page is refilled after the blocked author's articles",
			list:    listOfAuthors(w, c, c, w, c, w, w, w),
			page:    domain.Page{Limit: 3},
			wantIDs: []int64{1, 4, 6}, wantNext: &domain.Cursor{CreatedAt: articleBy(6, w, "").CreatedAt, ID: 6}, wantReads: 2,
		},
		{
			name:    "a cursor page goes on after the cursor",
			list:    listOfAuthors(w, c, c, w, c, w, w, w),
			page:    domain.Page{Limit: 3, Cursor: &domain.Cursor{CreatedAt: articleBy(4, w, "").CreatedAt, ID: 4}},
			wantIDs: []int64{6, 7, 8}, wantReads: 2,
		},
		{
			name:    "an offset counts the articles the viewer sees",
			list:    listOfAuthors(w, c, w, c, w, w),
			page:    domain.Page{Limit: 2, Offset: 2},
			wantIDs: []int64{5, 6}, wantReads: 2,
		},
		{
			name: "past the refill bound the page is served short, with a cursor past what was read",
			list: listOfAuthors(c, c, c, c, c, c, c, c, c, w),
			page: domain.Page{Limit: 2},
			// four reads of two articles each, all blocked: an empty page, and the cursor moves on
			wantIDs: []int64{}, wantNext: &domain.Cursor{CreatedAt: articleBy(8, c, "").CreatedAt, ID: 8}, wantReads: service.MaxRefillRounds,
		},
		{
			name:    "the list's end ends the refills",
			list:    listOfAuthors(w, c, c),
			page:    domain.Page{Limit: 3},
			wantIDs: []int64{1}, wantReads: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newArticleService(t)
			d.blocks.block(reader.ID, critic.ID)
			d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).DoAndReturn(func(ctx context.Context, q service.ArticleQuery) (service.ArticlePage, error) {
				return tc.list.read(ctx, q.Page)
			}).AnyTimes()
			anyViews(d)
			l, err := s.List(context.Background(), reader.ID, service.ListInput{Page: tc.page})
			if err != nil {
				t.Fatal(err)
			}
			if got := idsOf(l); !reflect.DeepEqual(got, tc.wantIDs) {
				t.Errorf("ids = %v, want %v", got, tc.wantIDs)
			}
			if !reflect.DeepEqual(l.NextCursor, tc.wantNext) {
				t.Errorf("next cursor = %+v, want %+v", l.NextCursor, tc.wantNext)
			}
			if tc.list.reads != tc.wantReads {
				t.Errorf("%d reads, want %d", tc.list.reads, tc.wantReads)
			}
			if max := service.MaxRefillRounds * (tc.page.Limit + tc.page.Offset); tc.list.rows > max {
				t.Errorf("%d rows read, more than the bound %d", tc.list.rows, max)
			}
			if l.Total != int64(len(tc.list.arts)) {
				t.Errorf("total = %d, want the filter's %d", l.Total, len(tc.list.arts))
			}
		})
	}
}

func TestArticleService_BlocksFilterOnlyTheBlockersLists(t *testing.T) {
	t.Parallel()
	t.Run("a blocked author's own list is empty for the blocker, without a query", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		d.blocks.block(reader.ID, critic.ID)
		d.users.EXPECT().GetByUsername(gomock.Any(), critic.Username).Return(critic, nil)
		d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).Times(0)
		noView(d)
		l, err := s.List(context.Background(), reader.ID, service.ListInput{Author: critic.Username, Page: domain.Page{Limit: 20}})
		if err != nil || len(l.Articles) != 0 || l.Total != 0 || l.NextCursor != nil {
			t.Errorf("List = (%+v, %v), want an empty list", l, err)
		}
	})
	t.Run("others (and anonymous readers) see everything, in one read", func(t *testing.T) {
		t.Parallel()
		for _, viewerID := range []int64{writer.ID, 0} {
			s, d := newArticleService(t)
			d.blocks.block(reader.ID, critic.ID)
			list := listOfAuthors(writer.ID, critic.ID, critic.ID)
			d.articles.EXPECT().ListPublished(gomock.Any(), gomock.Any()).DoAndReturn(func(ctx context.Context, q service.ArticleQuery) (service.ArticlePage, error) {
				return list.read(ctx, q.Page)
			}).Times(1)
			anyViews(d)
			l, err := s.List(context.Background(), viewerID, service.ListInput{Page: domain.Page{Limit: 20}})
			if err != nil || !reflect.DeepEqual(idsOf(l), []int64{1, 2, 3}) {
				t.Errorf("viewer %d: List = (%v, %v), want all three", viewerID, idsOf(l), err)
			}
		}
	})
	t.Run("the feed is filtered too", func(t *testing.T) {
		t.Parallel()
		s, d := newArticleService(t)
		d.blocks.block(reader.ID, critic.ID)
		list := listOfAuthors(critic.ID, writer.ID, critic.ID, writer.ID)
		d.articles.EXPECT().Feed(gomock.Any(), reader.ID, gomock.Any()).DoAndReturn(func(ctx context.Context, _ int64, p domain.Page) (service.ArticlePage, error) {
			return list.read(ctx, p)
		}).AnyTimes()
		anyViews(d)
		l, err := s.Feed(context.Background(), reader.ID, domain.Page{Limit: 20})
		if err != nil || !reflect.DeepEqual(idsOf(l), []int64{2, 4}) || l.NextCursor != nil {
			t.Errorf("Feed = (%v, %+v, %v), want [2 4] and no next page", idsOf(l), l.NextCursor, err)
		}
	})
}

func TestCommentService_Blocks(t *testing.T) {
	t.Parallel()
	published := articleBy(1, writer.ID, domain.StatusPublished)
	t.Run("a user the article's author blocks cannot comment, and nothing is stored", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.blocks.block(writer.ID, reader.ID)
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().Create(gomock.Any(), gomock.Any()).Times(0)
		_, err := s.Add(context.Background(), reader.ID, published.Slug, "hello", 0)
		requireErrorIs(t, err, domain.ErrForbidden)
		if !errors.Is(err, domain.ErrBlockedByTarget) {
			t.Errorf("error = %v, want the block's refusal", err)
		}
	})
	t.Run("the blocker's comment pages leave the blocked user's comments out and refill", func(t *testing.T) {
		t.Parallel()
		s, d := newCommentService(t)
		d.blocks.block(reader.ID, critic.ID)
		all := []domain.Comment{
			commentOn(10, 1, 1, critic.ID), commentOn(11, 1, 2, writer.ID), commentOn(12, 1, 3, critic.ID),
			commentOn(13, 1, 4, critic.ID), commentOn(14, 1, 5, writer.ID), commentOn(15, 1, 6, writer.ID),
		}
		d.articles.EXPECT().GetBySlug(gomock.Any(), published.Slug).Return(published, nil)
		d.comments.EXPECT().List(gomock.Any(), int64(1), gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, _ int64, after int64, n int) ([]domain.Comment, error) {
			var out []domain.Comment
			for _, c := range all {
				if c.Seq > after && len(out) < n {
					out = append(out, c)
				}
			}
			return out, nil
		}).AnyTimes()
		d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(map[int64]domain.User{writer.ID: writer, critic.ID: critic}, nil).AnyTimes()
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Return(map[int64]bool{}, nil).AnyTimes()
		l, err := s.List(context.Background(), reader.ID, published.Slug, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, c := range l.Comments {
			seqs = append(seqs, c.Seq)
		}
		if !reflect.DeepEqual(seqs, []int64{2, 5}) || l.NextAfter != 5 {
			t.Errorf("seqs = %v, next after %d; want [2 5], next after 5", seqs, l.NextAfter)
		}
	})
}
