package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

// rankNow is the clock of every ranking test.
var rankNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var errRankStorage = errors.New("pq: connection reset")

// The authors of the ranked articles, and a reader.
var (
	hotAuthorA = domain.User{ID: 21, Username: "alice", Bio: "writes a lot", Image: "https://example.com/a.png"}
	hotAuthorB = domain.User{ID: 22, Username: "bob"}
	hotReader  = domain.User{ID: 23, Username: "carol"}
)

type rankDeps struct {
	src     *mocks.MockRankSource
	store   *mocks.MockHotListStore
	archive *mocks.MockHotListArchive
	users   *mocks.MockUserRepository
	inter   *mocks.MockInteractiveRepository
	follows *mocks.MockFollowRepository
	blocks  *fakeBlocks
}

// rankOpts sizes the service under test; zero fields get small defaults.
type rankOpts struct {
	TopN      int           // default 3
	BatchSize int           // default 3
	Cutoff    time.Duration // default 7 days
}

func newRankService(t *testing.T, o rankOpts) (*service.RankService, rankDeps) {
	t.Helper()
	if o.TopN == 0 {
		o.TopN = 3
	}
	if o.BatchSize == 0 {
		o.BatchSize = 3
	}
	if o.Cutoff == 0 {
		o.Cutoff = 7 * 24 * time.Hour
	}
	ctrl := gomock.NewController(t)
	d := rankDeps{
		src:     mocks.NewMockRankSource(ctrl),
		store:   mocks.NewMockHotListStore(ctrl),
		archive: mocks.NewMockHotListArchive(ctrl),
		users:   mocks.NewMockUserRepository(ctrl),
		inter:   mocks.NewMockInteractiveRepository(ctrl),
		follows: mocks.NewMockFollowRepository(ctrl),
		blocks:  &fakeBlocks{},
	}
	cfg := service.RankConfig{TopN: o.TopN, BatchSize: o.BatchSize, Cutoff: o.Cutoff}
	return service.NewRankService(d.src, d.store, d.archive, d.users, d.inter, d.follows, d.blocks, cfg, func() time.Time { return rankNow }), d
}

// candidate is article id, published age before rankNow, with likes (what LikeCounts reports) and
// an author.
type candidate struct {
	id     int64
	age    time.Duration
	likes  int64
	author domain.User
}

func (c candidate) scan() domain.Candidate {
	return domain.Candidate{ID: c.id, PublishedAt: rankNow.Add(-c.age)}
}

func (c candidate) score() float64 { return domain.HotScore(c.likes, c.age.Hours()) }

func (c candidate) summary() domain.Article {
	p := rankNow.Add(-c.age)
	return domain.Article{ID: c.id, Slug: fmt.Sprintf("hot-%d", c.id), AuthorID: c.author.ID, Title: fmt.Sprintf("Hot %d", c.id),
		Description: "about it", Tags: []string{"go"}, Status: domain.StatusPublished, Version: 1, CreatedAt: p, UpdatedAt: p, PublishedAt: &p}
}

// counters are what the counter lookup reports for c: reads and collects of its own, and a like
// count that disagrees with LikeCounts (the entry must carry the count it was scored with).
func (c candidate) counters() domain.Counters {
	return domain.Counters{Reads: 100 + c.id, Likes: c.likes + 1000, Collects: c.id}
}

func (c candidate) entry() domain.HotEntry {
	ctr := c.counters()
	ctr.Likes = c.likes
	return domain.HotEntry{Article: c.summary(), Author: domain.ProfileOf(c.author, false), Counters: ctr, Score: c.score()}
}

// The corpus of the batching tests, newest first as the scan returns it. Hand-ordered by score:
// c3 (50 likes, 2h) > c1 (20 likes, 10m) > c5 (40 likes, 5h) > c2 > c6 > c4.
var (
	c1 = candidate{id: 106, age: 10 * time.Minute, likes: 20, author: hotAuthorA} // 19/2.1667^1.5 ≈ 5.96
	c2 = candidate{id: 105, age: time.Hour, likes: 5, author: hotAuthorB}         // 4/5.196 ≈ 0.77
	c3 = candidate{id: 104, age: 2 * time.Hour, likes: 50, author: hotAuthorB}    // 49/8 ≈ 6.13
	c4 = candidate{id: 103, age: 3 * time.Hour, likes: 0, author: hotAuthorA}     // -1/11.18 ≈ -0.09
	c5 = candidate{id: 102, age: 5 * time.Hour, likes: 40, author: hotAuthorA}    // 39/18.52 ≈ 2.11
	c6 = candidate{id: 101, age: 30 * time.Hour, likes: 100, author: hotAuthorB}  // 99/181.02 ≈ 0.55
)

func scans(cs ...candidate) []domain.Candidate {
	out := make([]domain.Candidate, len(cs))
	for i, c := range cs {
		out[i] = c.scan()
	}
	return out
}

func ids(cs ...candidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// allPublished answers PublishedAmong with every id still published.
func allPublished(_ context.Context, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// published is PublishedAmong's answer when only cs are still published.
func published(cs ...candidate) map[int64]bool {
	out := make(map[int64]bool, len(cs))
	for _, c := range cs {
		out[c.id] = true
	}
	return out
}

// likesOf is LikeCounts' answer for cs: candidates without likes are missing, as in the database.
func likesOf(cs ...candidate) map[int64]int64 {
	m := map[int64]int64{}
	for _, c := range cs {
		if c.likes > 0 {
			m[c.id] = c.likes
		}
	}
	return m
}

func cursorAfter(c candidate) *domain.Cursor {
	return &domain.Cursor{CreatedAt: rankNow.Add(-c.age), ID: c.id}
}

// sameIDs matches an []int64 holding exactly want, in any order.
type sameIDs []int64

func (m sameIDs) Matches(x any) bool {
	got, ok := x.([]int64)
	if !ok {
		return false
	}
	a, b := slices.Clone(got), slices.Clone([]int64(m))
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func (m sameIDs) String() string { return fmt.Sprintf("the ids %v in any order", []int64(m)) }

// expectDescribe stubs the description of the winners, best first: one Summaries call with their
// ids in that order (answered in another order), one author and one counter lookup.
func expectDescribe(d rankDeps, winners ...candidate) {
	arts := make([]domain.Article, 0, len(winners))
	for i := len(winners) - 1; i >= 0; i-- { // the repository answers in any order
		arts = append(arts, winners[i].summary())
	}
	authors := map[int64]domain.User{}
	var authorIDs []int64
	counters := map[int64]domain.Counters{}
	for _, w := range winners {
		if _, ok := authors[w.author.ID]; !ok {
			authorIDs = append(authorIDs, w.author.ID)
		}
		authors[w.author.ID] = w.author
		counters[w.id] = w.counters()
	}
	d.src.EXPECT().Summaries(gomock.Any(), ids(winners...)).Return(arts, nil).Times(1)
	d.users.EXPECT().GetByIDs(gomock.Any(), sameIDs(authorIDs)).Return(authors, nil).Times(1)
	d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, sameIDs(ids(winners...))).Return(counters, nil).Times(1)
}

// noDescribe proves no winner was described.
func noDescribe(d rankDeps) {
	d.src.EXPECT().Summaries(gomock.Any(), gomock.Any()).Times(0)
	d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
	d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func listOf(winners ...candidate) domain.HotList {
	l := domain.HotList{Entries: make([]domain.HotEntry, len(winners)), ComputedAt: rankNow}
	for i, w := range winners {
		l.Entries[i] = w.entry()
	}
	return l
}

// rankingOf is what the archive keeps of l: each entry's id, the likes it was scored with, its
// score, best first.
func rankingOf(l domain.HotList) []domain.Scored {
	out := make([]domain.Scored, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = domain.Scored{ID: e.Article.ID, Likes: e.Counters.Likes, Score: e.Score}
	}
	return out
}

// expectStored expects l to be archived, then saved to the store, once each.
func expectStored(d rankDeps, l domain.HotList) {
	gomock.InOrder(
		d.archive.EXPECT().Replace(gomock.Any(), rankNow, rankingOf(l)).Return(nil).Times(1),
		d.store.EXPECT().Save(gomock.Any(), l).Return(nil).Times(1),
	)
}

func wantSaved(want domain.HotList) func(t *testing.T, got domain.HotList, err error) {
	return func(t *testing.T, got domain.HotList, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("Rank: unexpected error %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Rank returned\n  %+v\nwant\n  %+v", got, want)
		}
	}
}

func wantRankErr(target error) func(t *testing.T, got domain.HotList, err error) {
	return func(t *testing.T, got domain.HotList, err error) {
		t.Helper()
		requireErrorIs(t, err, target)
		if !reflect.DeepEqual(got, domain.HotList{}) {
			t.Fatalf("Rank returned %+v alongside an error, want the zero list", got)
		}
	}
}

func TestRankService_Rank(t *testing.T) {
	t.Parallel()
	const week = 7 * 24 * time.Hour
	since := rankNow.Add(-week)

	tests := []struct {
		name       string
		opts       rankOpts
		buildStubs func(d rankDeps)
		check      func(t *testing.T, got domain.HotList, err error)
	}{
		{
			name: "two full batches then an empty one: keyset cursors, one like query per batch, the best three saved",
			buildStubs: func(d rankDeps) {
				gomock.InOrder(
					d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1, c2, c3), nil),
					d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2, c3)).Return(likesOf(c1, c2, c3), nil),
					d.src.EXPECT().ScanPublished(gomock.Any(), since, cursorAfter(c3), 3).Return(scans(c4, c5, c6), nil),
					d.src.EXPECT().LikeCounts(gomock.Any(), ids(c4, c5, c6)).Return(likesOf(c4, c5, c6), nil),
					d.src.EXPECT().ScanPublished(gomock.Any(), since, cursorAfter(c6), 3).Return([]domain.Candidate{}, nil),
				)
				expectDescribe(d, c3, c1, c5)
				expectStored(d, listOf(c3, c1, c5))
			},
			check: wantSaved(listOf(c3, c1, c5)),
		},
		{
			name: "a short batch ends the scan without another query",
			opts: rankOpts{BatchSize: 4},
			buildStubs: func(d rankDeps) {
				gomock.InOrder(
					d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 4).Return(scans(c1, c2, c3, c4), nil),
					d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2, c3, c4)).Return(likesOf(c1, c2, c3, c4), nil),
					d.src.EXPECT().ScanPublished(gomock.Any(), since, cursorAfter(c4), 4).Return(scans(c5, c6), nil),
					d.src.EXPECT().LikeCounts(gomock.Any(), ids(c5, c6)).Return(likesOf(c5, c6), nil),
				)
				expectDescribe(d, c3, c1, c5)
				expectStored(d, listOf(c3, c1, c5))
			},
			check: wantSaved(listOf(c3, c1, c5)),
		},
		{
			name: "the cutoff comes from the injected clock",
			opts: rankOpts{Cutoff: 90 * time.Minute, TopN: 5},
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), rankNow.Add(-90*time.Minute), nil, 3).Return(scans(c1, c2), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2)).Return(likesOf(c1, c2), nil)
				expectDescribe(d, c1, c2)
				expectStored(d, listOf(c1, c2))
			},
			check: wantSaved(listOf(c1, c2)),
		},
		{
			name: "the whole list when there are fewer candidates than TopN; no likes scores below zero",
			opts: rankOpts{TopN: 10, BatchSize: 10},
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 10).Return(scans(c1, c2, c3, c4, c5, c6), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2, c3, c4, c5, c6)).Return(likesOf(c1, c2, c3, c4, c5, c6), nil)
				expectDescribe(d, c3, c1, c5, c2, c6, c4)
				expectStored(d, listOf(c3, c1, c5, c2, c6, c4))
			},
			check: wantSaved(listOf(c3, c1, c5, c2, c6, c4)),
		},
		{
			name: "no candidates: an empty list is saved without describing anything",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return([]domain.Candidate{}, nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), gomock.Any()).Times(0)
				noDescribe(d)
				expectStored(d, domain.HotList{Entries: []domain.HotEntry{}, ComputedAt: rankNow})
			},
			check: wantSaved(domain.HotList{Entries: []domain.HotEntry{}, ComputedAt: rankNow}),
		},
		{
			name: "a winner deleted since the scan, or whose author is gone, is left out",
			opts: rankOpts{BatchSize: 10},
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 10).Return(scans(c1, c3, c5), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c3, c5)).Return(likesOf(c1, c3, c5), nil)
				// c3 was deleted (no summary); c5's author, user 99, was deleted (no user).
				orphan := c5
				orphan.author = domain.User{ID: 99, Username: "gone"}
				d.src.EXPECT().Summaries(gomock.Any(), ids(c3, c1, c5)).Return([]domain.Article{orphan.summary(), c1.summary()}, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), sameIDs{99, hotAuthorA.ID}).Return(map[int64]domain.User{hotAuthorA.ID: hotAuthorA}, nil)
				d.inter.EXPECT().Counters(gomock.Any(), domain.BizArticle, sameIDs{c1.id, c5.id}).
					Return(map[int64]domain.Counters{c1.id: c1.counters(), c5.id: c5.counters()}, nil)
				expectStored(d, listOf(c1))
			},
			check: wantSaved(listOf(c1)),
		},
		// A run that fails keeps the previous list: nothing is saved.
		{
			name: "the first scan fails",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errRankStorage).Times(1)
				d.src.EXPECT().LikeCounts(gomock.Any(), gomock.Any()).Times(0)
				noDescribe(d)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "a later scan fails after a good batch",
			buildStubs: func(d rankDeps) {
				gomock.InOrder(
					d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1, c2, c3), nil),
					d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2, c3)).Return(likesOf(c1, c2, c3), nil),
					d.src.EXPECT().ScanPublished(gomock.Any(), since, cursorAfter(c3), 3).Return(nil, errRankStorage),
				)
				noDescribe(d)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "the like counts fail",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1, c2, c3), nil).Times(1)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2, c3)).Return(nil, errRankStorage).Times(1)
				noDescribe(d)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "the summaries fail",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1, c2), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2)).Return(likesOf(c1, c2), nil)
				d.src.EXPECT().Summaries(gomock.Any(), ids(c1, c2)).Return(nil, errRankStorage).Times(1)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Times(0)
				d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "the authors fail",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1)).Return(likesOf(c1), nil)
				d.src.EXPECT().Summaries(gomock.Any(), ids(c1)).Return([]domain.Article{c1.summary()}, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(nil, errRankStorage)
				d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "the counters fail",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1)).Return(likesOf(c1), nil)
				d.src.EXPECT().Summaries(gomock.Any(), ids(c1)).Return([]domain.Article{c1.summary()}, nil)
				d.users.EXPECT().GetByIDs(gomock.Any(), gomock.Any()).Return(map[int64]domain.User{hotAuthorA.ID: hotAuthorA}, nil)
				d.inter.EXPECT().Counters(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errRankStorage)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "saving fails",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1)).Return(likesOf(c1), nil)
				expectDescribe(d, c1)
				gomock.InOrder(
					d.archive.EXPECT().Replace(gomock.Any(), rankNow, rankingOf(listOf(c1))).Return(nil).Times(1),
					d.store.EXPECT().Save(gomock.Any(), listOf(c1)).Return(errRankStorage).Times(1),
				)
			},
			check: wantRankErr(errRankStorage),
		},
		{
			name: "archiving fails: the store is left alone, so both keep the previous list",
			buildStubs: func(d rankDeps) {
				d.src.EXPECT().ScanPublished(gomock.Any(), since, nil, 3).Return(scans(c1), nil)
				d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1)).Return(likesOf(c1), nil)
				expectDescribe(d, c1)
				d.archive.EXPECT().Replace(gomock.Any(), rankNow, rankingOf(listOf(c1))).Return(errRankStorage).Times(1)
				d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantRankErr(errRankStorage),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newRankService(t, tc.opts)
			tc.buildStubs(d)
			got, err := svc.Rank(t.Context())
			tc.check(t, got, err)
		})
	}
}

// A failed run leaves the stored list alone, so readers keep getting the previous one.
func TestRankService_FailedRunKeepsThePreviousList(t *testing.T) {
	t.Parallel()
	svc, d := newRankService(t, rankOpts{})
	var stored *domain.HotList
	d.archive.EXPECT().Replace(gomock.Any(), rankNow, rankingOf(listOf(c1, c2))).Return(nil).Times(1)
	d.store.EXPECT().Save(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, l domain.HotList) error {
		stored = &l
		return nil
	}).Times(1)
	d.store.EXPECT().Load(gomock.Any()).DoAndReturn(func(context.Context) (domain.HotList, error) {
		if stored == nil {
			return domain.HotList{}, domain.ErrNotFound
		}
		return *stored, nil
	}).AnyTimes()
	d.src.EXPECT().PublishedAmong(gomock.Any(), gomock.Any()).DoAndReturn(allPublished).AnyTimes()

	// The first run succeeds.
	gomock.InOrder(
		d.src.EXPECT().ScanPublished(gomock.Any(), gomock.Any(), nil, 3).Return(scans(c1, c2), nil),
		d.src.EXPECT().LikeCounts(gomock.Any(), ids(c1, c2)).Return(likesOf(c1, c2), nil),
		// The second fails half-way.
		d.src.EXPECT().ScanPublished(gomock.Any(), gomock.Any(), nil, 3).Return(scans(c5, c6), nil),
		d.src.EXPECT().LikeCounts(gomock.Any(), ids(c5, c6)).Return(nil, errRankStorage),
	)
	expectDescribe(d, c1, c2)

	if _, err := svc.Rank(t.Context()); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if _, err := svc.Rank(t.Context()); !errors.Is(err, errRankStorage) {
		t.Fatalf("second run: error %v, want %v", err, errRankStorage)
	}
	views, err := svc.Hot(t.Context(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := viewIDs(views); !slices.Equal(got, ids(c1, c2)) {
		t.Fatalf("after a failed run the hot list is %v, want the previous %v", got, ids(c1, c2))
	}
}

func viewIDs(vs []service.HotView) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

// hotView is w as viewer sees it.
func hotView(w candidate, liked, collected, following bool) service.HotView {
	e := w.entry()
	author := e.Author
	author.Following = following
	return service.HotView{
		ArticleView: domain.ArticleView{Article: e.Article, Author: author, Counters: e.Counters, Favorited: liked, Collected: collected},
		Score:       e.Score,
	}
}

func TestRankService_Hot(t *testing.T) {
	t.Parallel()
	stored := listOf(c3, c1, c5, c2) // authors: bob, alice, alice, bob

	// noViewerLookups proves the read cost no query beyond the store.
	noViewerLookups := func(d rankDeps) {
		d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	// noRanking proves reading never scans, stores or archives (what a case does not expect fails
	// it anyway: these say so).
	noRanking := func(d rankDeps) {
		d.src.EXPECT().ScanPublished(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		d.src.EXPECT().LikeCounts(gomock.Any(), gomock.Any()).Times(0)
		d.users.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
		d.store.EXPECT().Save(gomock.Any(), gomock.Any()).Times(0)
		d.archive.EXPECT().Replace(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	// fromStore is a store that answers: the archive is never read, nothing is described again.
	fromStore := func(d rankDeps, l domain.HotList) {
		d.store.EXPECT().Load(gomock.Any()).Return(l, nil).Times(1)
		d.archive.EXPECT().Latest(gomock.Any()).Times(0)
		noDescribe(d)
		d.store.EXPECT().Keep(gomock.Any()).Times(0)
	}
	// The archive's copy of the stored list, ranked a minute before the read; and the list it
	// describes again.
	rankedAt := rankNow.Add(-time.Minute)
	archived := domain.Ranking{Entries: rankingOf(stored), RankedAt: rankedAt}
	rebuilt := listOf(c3, c1, c5, c2)
	rebuilt.ComputedAt = rankedAt
	// fromArchive is a store that fails with storeErr, then the archive's ranking described again
	// and kept in the process.
	fromArchive := func(d rankDeps, storeErr error) {
		gomock.InOrder(
			d.store.EXPECT().Load(gomock.Any()).Return(domain.HotList{}, storeErr).Times(1),
			d.archive.EXPECT().Latest(gomock.Any()).Return(archived, nil).Times(1),
		)
		expectDescribe(d, c3, c1, c5, c2)
		d.store.EXPECT().Keep(rebuilt).Times(1)
	}
	// neither is the store and the archive both failing or empty: nothing described, nothing kept.
	neither := func(d rankDeps, storeErr, archiveErr error) {
		gomock.InOrder(
			d.store.EXPECT().Load(gomock.Any()).Return(domain.HotList{}, storeErr).Times(1),
			d.archive.EXPECT().Latest(gomock.Any()).Return(domain.Ranking{}, archiveErr).Times(1),
		)
		noDescribe(d)
		d.store.EXPECT().Keep(gomock.Any()).Times(0)
	}
	redisDown := fmt.Errorf("%w: hot list: read: dial tcp: connection refused", domain.ErrUnavailable)
	pgDown := fmt.Errorf("load the kept ranking: %w", domain.ErrUnavailable)
	redisEmpty := fmt.Errorf("hot list: %w", domain.ErrNotFound)

	tests := []struct {
		name       string
		viewer     int64
		limit      int
		buildStubs func(d rankDeps)
		want       []service.HotView
		wantErr    error
		wantIs     []error // more errors wantErr's error must also be
		wantNot    error   // an error it must not be
	}{
		{
			name:  "anonymous: the stored list best first, with scores, after one check that its articles are still published",
			limit: 10,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.src.EXPECT().PublishedAmong(gomock.Any(), ids(c3, c1, c5, c2)).Return(published(c3, c1, c5, c2), nil).Times(1)
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c1, false, false, false), hotView(c5, false, false, false), hotView(c2, false, false, false)},
		},
		{
			name:  "the limit cuts the list",
			limit: 2,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c1, false, false, false)},
		},
		{
			name:   "signed in: one like, one collect and one follow lookup for the shown articles",
			viewer: hotReader.ID,
			limit:  3,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.inter.EXPECT().Liked(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c3, c1, c5)).Return(map[int64]bool{c1.id: true}, nil).Times(1)
				d.inter.EXPECT().Collected(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c3, c1, c5)).Return(map[int64]bool{c5.id: true}, nil).Times(1)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), hotReader.ID, []int64{hotAuthorB.ID, hotAuthorA.ID}).
					Return(map[int64]bool{hotAuthorA.ID: true}, nil).Times(1)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c1, true, false, true), hotView(c5, false, true, true)},
		},
		{
			name:   "signed in: the articles of an author the viewer blocks leave the list, the rest fill it",
			viewer: hotReader.ID,
			limit:  3,
			buildStubs: func(d rankDeps) {
				d.blocks.block(hotReader.ID, hotAuthorB.ID)
				fromStore(d, stored)
				d.inter.EXPECT().Liked(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c1, c5)).Return(map[int64]bool{}, nil).Times(1)
				d.inter.EXPECT().Collected(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c1, c5)).Return(map[int64]bool{}, nil).Times(1)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), hotReader.ID, []int64{hotAuthorA.ID}).Return(map[int64]bool{}, nil).Times(1)
			},
			want: []service.HotView{hotView(c1, false, false, false), hotView(c5, false, false, false)},
		},
		{
			name:   "signed in as the only author shown: no follow lookup",
			viewer: hotAuthorB.ID,
			limit:  1,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.inter.EXPECT().Liked(gomock.Any(), hotAuthorB.ID, domain.BizArticle, ids(c3)).Return(map[int64]bool{}, nil).Times(1)
				d.inter.EXPECT().Collected(gomock.Any(), hotAuthorB.ID, domain.BizArticle, ids(c3)).Return(map[int64]bool{}, nil).Times(1)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			want: []service.HotView{hotView(c3, false, false, false)},
		},
		{
			name:  "withdrawn, drafted or deleted articles are dropped on the next read, before the limit",
			limit: 2,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.src.EXPECT().PublishedAmong(gomock.Any(), ids(c3, c1, c5, c2)).Return(published(c1, c2), nil).Times(1)
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c1, false, false, false), hotView(c2, false, false, false)},
		},
		{
			name:  "PostgreSQL unavailable: the list is served as ranked",
			limit: 10,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.src.EXPECT().PublishedAmong(gomock.Any(), gomock.Any()).Return(nil, fmt.Errorf("published among: %w", domain.ErrUnavailable))
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c1, false, false, false), hotView(c5, false, false, false), hotView(c2, false, false, false)},
		},
		{
			name:  "any other failure of the published check is an error",
			limit: 10,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.src.EXPECT().PublishedAmong(gomock.Any(), gomock.Any()).Return(nil, errRankStorage)
				noViewerLookups(d)
			},
			wantErr: errRankStorage,
		},
		{
			name:   "no list computed yet, in the store or the archive: an empty list, not an error",
			viewer: hotReader.ID,
			limit:  10,
			buildStubs: func(d rankDeps) {
				neither(d, redisEmpty, domain.ErrNotFound)
				noViewerLookups(d)
			},
			want: []service.HotView{},
		},
		{
			name:   "an empty list costs a signed-in viewer no lookup",
			viewer: hotReader.ID,
			limit:  10,
			buildStubs: func(d rankDeps) {
				fromStore(d, domain.HotList{Entries: []domain.HotEntry{}, ComputedAt: rankNow})
				noViewerLookups(d)
			},
			want: []service.HotView{},
		},
		{
			name:  "the store fails (Redis down, no copy in the process): the archive's ranking, described again, kept, then checked",
			limit: 10,
			buildStubs: func(d rankDeps) {
				fromArchive(d, redisDown)
				d.src.EXPECT().PublishedAmong(gomock.Any(), ids(c3, c1, c5, c2)).Return(published(c3, c5, c2), nil).Times(1)
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c5, false, false, false), hotView(c2, false, false, false)},
		},
		{
			name:  "the store fails for another reason: the archive all the same",
			limit: 2,
			buildStubs: func(d rankDeps) {
				fromArchive(d, errRankStorage)
				noViewerLookups(d)
			},
			want: []service.HotView{hotView(c3, false, false, false), hotView(c1, false, false, false)},
		},
		{
			name:   "the store holds no list (Redis restarted empty): the archive's ranking, with the viewer's flags",
			viewer: hotReader.ID,
			limit:  1,
			buildStubs: func(d rankDeps) {
				fromArchive(d, redisEmpty)
				d.inter.EXPECT().Liked(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c3)).Return(map[int64]bool{c3.id: true}, nil).Times(1)
				d.inter.EXPECT().Collected(gomock.Any(), hotReader.ID, domain.BizArticle, ids(c3)).Return(map[int64]bool{}, nil).Times(1)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), hotReader.ID, []int64{hotAuthorB.ID}).Return(map[int64]bool{}, nil).Times(1)
			},
			want: []service.HotView{hotView(c3, true, false, false)},
		},
		{
			name:  "the store fails and the archive holds none: an empty list",
			limit: 10,
			buildStubs: func(d rankDeps) {
				neither(d, redisDown, domain.ErrNotFound)
				noViewerLookups(d)
			},
			want: []service.HotView{},
		},
		{
			name:  "the store and the archive both unavailable: unavailable (503)",
			limit: 10,
			buildStubs: func(d rankDeps) {
				neither(d, redisDown, pgDown)
				noViewerLookups(d)
			},
			wantErr: domain.ErrUnavailable,
		},
		{
			name:  "the store unavailable, the archive failing otherwise: still unavailable, with both causes",
			limit: 10,
			buildStubs: func(d rankDeps) {
				neither(d, redisDown, errRankStorage)
				noViewerLookups(d)
			},
			wantErr: errRankStorage,
			wantIs:  []error{domain.ErrUnavailable},
		},
		{
			name:  "the store holds none and the archive is unavailable: unavailable, never not-found",
			limit: 10,
			buildStubs: func(d rankDeps) {
				neither(d, redisEmpty, pgDown)
				noViewerLookups(d)
			},
			wantErr: domain.ErrUnavailable,
			wantNot: domain.ErrNotFound,
		},
		{
			name:  "the store fails and describing the archive's ranking fails: unavailable, nothing kept",
			limit: 10,
			buildStubs: func(d rankDeps) {
				gomock.InOrder(
					d.store.EXPECT().Load(gomock.Any()).Return(domain.HotList{}, redisDown),
					d.archive.EXPECT().Latest(gomock.Any()).Return(archived, nil),
				)
				d.src.EXPECT().Summaries(gomock.Any(), ids(c3, c1, c5, c2)).Return(nil, errRankStorage).Times(1)
				d.store.EXPECT().Keep(gomock.Any()).Times(0)
				noViewerLookups(d)
			},
			wantErr: errRankStorage,
			wantIs:  []error{domain.ErrUnavailable},
		},
		{
			name:   "a failing viewer lookup is an error",
			viewer: hotReader.ID,
			limit:  10,
			buildStubs: func(d rankDeps) {
				fromStore(d, stored)
				d.inter.EXPECT().Liked(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errRankStorage)
				d.inter.EXPECT().Collected(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.follows.EXPECT().FollowingAmong(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: errRankStorage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newRankService(t, rankOpts{})
			noRanking(d)
			tc.buildStubs(d)
			// Unless a case says otherwise, every ranked article is still published.
			d.src.EXPECT().PublishedAmong(gomock.Any(), gomock.Any()).DoAndReturn(allPublished).AnyTimes()
			got, err := svc.Hot(t.Context(), tc.viewer, tc.limit)
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
				for _, target := range tc.wantIs {
					requireErrorIs(t, err, target)
				}
				if tc.wantNot != nil && errors.Is(err, tc.wantNot) {
					t.Fatalf("Hot: error %v is %v; it must not be", err, tc.wantNot)
				}
				return
			}
			if err != nil {
				t.Fatalf("Hot: %v", err)
			}
			if got == nil {
				t.Fatal("Hot returned a nil list; want an empty, non-nil one (it is encoded as [])")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Hot =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}
