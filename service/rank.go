package service

import (
	"context"
	"errors"
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

// HotListStore keeps the latest computed hot list.
type HotListStore interface {
	Save(ctx context.Context, l domain.HotList) error
	// Load returns the latest list; domain.ErrNotFound when none was ever computed.
	Load(ctx context.Context) (domain.HotList, error)
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
	users   UserRepository
	inter   InteractiveRepository
	follows FollowRepository
	cfg     RankConfig
	now     func() time.Time
}

// NewRankService returns a RankService on the given clock.
func NewRankService(src RankSource, store HotListStore, users UserRepository, inter InteractiveRepository, follows FollowRepository, cfg RankConfig, now func() time.Time) *RankService {
	return &RankService{src: src, store: store, users: users, inter: inter, follows: follows, cfg: cfg, now: now}
}

// HotView is one hot-list article as a viewer sees it, with its score.
type HotView struct {
	domain.ArticleView
	Score float64
}

// Rank runs one ranking pass: it scans published articles newest first in batches, down to the
// cutoff, keeps the best TopN in a min-heap, and stores the resulting list. Memory stays O(TopN +
// BatchSize) however many articles there are. On error nothing is stored, so the previous list
// stays in place.
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
	if err := s.store.Save(ctx, list); err != nil {
		return domain.HotList{}, err
	}
	return list, nil
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
	l, err := s.store.Load(ctx)
	if errors.Is(err, domain.ErrNotFound) {
		return []HotView{}, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := s.stillPublished(ctx, l.Entries)
	if err != nil {
		return nil, err
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
