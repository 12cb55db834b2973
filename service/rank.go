package service

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=rank.go -destination=mocks/rank_mock.go -package=mocks

// RankSource feeds the ranking pass.
type RankSource interface {
	// ScanPublished returns up to limit published candidates, newest-published first, published
	// at or after since, strictly after the keyset position after (published_at, id) when set.
	ScanPublished(ctx context.Context, since time.Time, after *domain.Cursor, limit int) ([]domain.Candidate, error)
	// Summaries returns the summaries of ids that exist, in any order, in one query.
	Summaries(ctx context.Context, ids []int64) ([]domain.Article, error)
	// LikeCounts returns like counts for ids from the system of record, in one query; missing ids
	// have none.
	LikeCounts(ctx context.Context, ids []int64) (map[int64]int64, error)
	// PublishedAmong returns which of ids are published now, from the system of record, in one
	// query.
	PublishedAmong(ctx context.Context, ids []int64) (map[int64]bool, error)
}

// HotListStore keeps the latest computed hot list where every instance reads it fast (Redis,
// with a copy in the process).
type HotListStore interface {
	Save(ctx context.Context, l domain.HotList) error
	// Load returns the latest list; domain.ErrNotFound when it holds none.
	Load(ctx context.Context) (domain.HotList, error)
	// Keep makes l this process's copy of the latest list and stores it nowhere else: a list
	// rebuilt from the archive then serves the next reads without being rebuilt for each.
	Keep(l domain.HotList)
}

// HotListArchive keeps the latest ranking in the system of record, for when the HotListStore
// cannot give one: a process that starts while Redis is down, or a Redis that restarted empty.
type HotListArchive interface {
	// Replace makes ranked (best first) the kept ranking, as a whole.
	Replace(ctx context.Context, rankedAt time.Time, ranked []domain.Scored) error
	// Latest returns the kept ranking, best first; domain.ErrNotFound when none is kept.
	Latest(ctx context.Context) (domain.Ranking, error)
}

// RankConfig tunes a ranking pass.
type RankConfig struct {
	TopN      int           // size of the hot list
	BatchSize int           // articles scanned per query
	Cutoff    time.Duration // articles published longer ago are not considered
}

// RankService computes and serves the hot list.
type RankService struct {
	src     RankSource
	store   HotListStore
	archive HotListArchive
	users   UserRepository
	inter   InteractiveRepository
	follows FollowRepository
	blocks  BlockedSets
	cfg     RankConfig
	now     func() time.Time
}

// NewRankService returns a RankService on the given clock.
func NewRankService(src RankSource, store HotListStore, archive HotListArchive, users UserRepository, inter InteractiveRepository, follows FollowRepository, blocks BlockedSets, cfg RankConfig, now func() time.Time) *RankService {
	return &RankService{src: src, store: store, archive: archive, users: users, inter: inter, follows: follows, blocks: blocks, cfg: cfg, now: now}
}

// HotView is one hot-list article as a viewer sees it, with its score.
type HotView struct {
	domain.ArticleView
	Score float64
}

// Rank runs one ranking pass: it scans published articles newest first in batches, down to the
// cutoff, keeps the best TopN in a min-heap, and stores the resulting list: first in the archive,
// then in the store. Memory stays O(TopN + BatchSize) however many articles there are. A run that
// fails before the archive took its list stores nothing, so the previous list stays in place; the
// archive is never older than the store's list.
func (s *RankService) Rank(ctx context.Context) (domain.HotList, error) {
	now := s.now()
	since := now.Add(-s.cfg.Cutoff)
	top := domain.NewTopN(s.cfg.TopN)
	var after *domain.Cursor
	for {
		batch, err := s.src.ScanPublished(ctx, since, after, s.cfg.BatchSize)
		if err != nil {
			return domain.HotList{}, err
		}
		if len(batch) == 0 {
			break
		}
		ids := make([]int64, len(batch))
		for i, a := range batch {
			ids[i] = a.ID
		}
		likes, err := s.src.LikeCounts(ctx, ids)
		if err != nil {
			return domain.HotList{}, err
		}
		for _, c := range batch {
			top.Offer(domain.Scored{ID: c.ID, Likes: likes[c.ID], Score: domain.HotScore(likes[c.ID], domain.HoursSince(c.PublishedAt, now))})
		}
		if len(batch) < s.cfg.BatchSize {
			break
		}
		last := batch[len(batch)-1]
		after = &domain.Cursor{CreatedAt: last.PublishedAt, ID: last.ID}
	}
	list, err := s.describe(ctx, top.Sorted(), now)
	if err != nil {
		return domain.HotList{}, err
	}
	if err := s.archive.Replace(ctx, now, rankingOf(list)); err != nil {
		return domain.HotList{}, err
	}
	if err := s.store.Save(ctx, list); err != nil {
		return domain.HotList{}, err
	}
	return list, nil
}

// rankingOf is what the archive keeps of a list: enough to describe it again.
func rankingOf(l domain.HotList) []domain.Scored {
	out := make([]domain.Scored, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = domain.Scored{ID: e.Article.ID, Likes: e.Counters.Likes, Score: e.Score}
	}
	return out
}

// latest returns the latest hot list: the store's, or, when the store fails or holds none, the
// archive's ranking described again (and kept in the process). The list is empty when neither
// holds one; it is an error only when neither can answer.
func (s *RankService) latest(ctx context.Context) (domain.HotList, error) {
	l, storeErr := s.store.Load(ctx)
	if storeErr == nil {
		return l, nil
	}
	both := func(err error) error {
		if errors.Is(storeErr, domain.ErrNotFound) {
			return err
		}
		return errors.Join(storeErr, err) // the store's ErrUnavailable keeps it a 503
	}
	r, err := s.archive.Latest(ctx)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.HotList{}, nil
	}
	if err != nil {
		return domain.HotList{}, both(err)
	}
	if l, err = s.describe(ctx, r.Entries, r.RankedAt); err != nil {
		return domain.HotList{}, both(err)
	}
	s.store.Keep(l)
	return l, nil
}

// describe completes the winners with their summaries, authors and counters, so serving the list
// needs no further query for an anonymous reader.
func (s *RankService) describe(ctx context.Context, best []domain.Scored, now time.Time) (domain.HotList, error) {
	list := domain.HotList{Entries: make([]domain.HotEntry, 0, len(best)), ComputedAt: now}
	if len(best) == 0 {
		return list, nil
	}
	ids := make([]int64, len(best))
	for i, b := range best {
		ids[i] = b.ID
	}
	arts, err := s.src.Summaries(ctx, ids)
	if err != nil {
		return domain.HotList{}, err
	}
	byID := make(map[int64]domain.Article, len(arts))
	for _, a := range arts {
		byID[a.ID] = a
	}
	authors, err := s.users.GetByIDs(ctx, uniqueIDs(arts, func(a domain.Article) int64 { return a.AuthorID }))
	if err != nil {
		return domain.HotList{}, err
	}
	counters, err := s.inter.Counters(ctx, domain.BizArticle, uniqueIDs(arts, func(a domain.Article) int64 { return a.ID }))
	if err != nil {
		return domain.HotList{}, err
	}
	for _, b := range best {
		a, ok := byID[b.ID]
		if !ok { // deleted since the scan
			continue
		}
		author, ok := authors[a.AuthorID]
		if !ok {
			continue
		}
		c := counters[a.ID]
		c.Likes = b.Likes // the count the score was computed from
		list.Entries = append(list.Entries, domain.HotEntry{Article: a, Author: domain.ProfileOf(author, false), Counters: c, Score: b.Score})
	}
	return list, nil
}

// stillPublished drops the entries whose article is no longer published — withdrawn, drafted
// or deleted since the ranking ran — asking PostgreSQL, so every instance agrees the moment the
// change commits. When PostgreSQL is unavailable the list is served as ranked: the stored list
// is what keeps the hot list up through a database outage.
func (s *RankService) stillPublished(ctx context.Context, entries []domain.HotEntry) ([]domain.HotEntry, error) {
	if len(entries) == 0 {
		return entries, nil
	}
	ids := make([]int64, len(entries))
	for i, e := range entries {
		ids[i] = e.Article.ID
	}
	published, err := s.src.PublishedAmong(ctx, ids)
	if errors.Is(err, domain.ErrUnavailable) {
		return entries, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]domain.HotEntry, 0, len(entries))
	for _, e := range entries {
		if published[e.Article.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// Hot returns the best limit articles of the latest list that are still published (one query
// by primary key, whatever the viewer). For a signed-in viewer it adds the viewer's own flags with
// one batched query per kind. Before any list was ever computed the answer is empty, not an error.
func (s *RankService) Hot(ctx context.Context, viewerID int64, limit int) ([]HotView, error) {
	l, err := s.latest(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := s.stillPublished(ctx, l.Entries)
	if err != nil {
		return nil, err
	}
	// The articles of authors the viewer blocks leave the viewer's hot list: the list is in
	// memory (TopN entries), so this costs a pass over it.
	blocked, err := blockedSet(ctx, s.blocks, viewerID)
	if err != nil {
		return nil, err
	}
	if len(blocked) > 0 {
		entries = slices.DeleteFunc(slices.Clone(entries), func(e domain.HotEntry) bool { return blocked.Has(e.Article.AuthorID) })
	}
	if limit > 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	out := make([]HotView, len(entries))
	for i, e := range entries {
		out[i] = HotView{ArticleView: domain.ArticleView{Article: e.Article, Author: e.Author, Counters: e.Counters}, Score: e.Score}
	}
	if viewerID == 0 || len(out) == 0 {
		return out, nil
	}
	ids := make([]int64, len(out))
	var authorIDs []int64
	for i, v := range out {
		ids[i] = v.ID
		if v.AuthorID != viewerID {
			authorIDs = append(authorIDs, v.AuthorID)
		}
	}
	liked, err := s.inter.Liked(ctx, viewerID, domain.BizArticle, ids)
	if err != nil {
		return nil, err
	}
	collected, err := s.inter.Collected(ctx, viewerID, domain.BizArticle, ids)
	if err != nil {
		return nil, err
	}
	following := map[int64]bool{}
	if len(authorIDs) > 0 {
		if following, err = s.follows.FollowingAmong(ctx, viewerID, uniqueIDs(authorIDs, func(id int64) int64 { return id })); err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].Favorited = liked[out[i].ID]
		out[i].Collected = collected[out[i].ID]
		out[i].Author.Following = following[out[i].AuthorID]
	}
	return out, nil
}
