package service

import (
	"context"
	"fmt"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=sitemaps.go -destination=mocks/sitemaps_mock.go -package=mocks

// SitemapStore reads the published articles in publication order (their search_seq).
type SitemapStore interface {
	// LastSitemapSeq returns the last place in publication order a published article holds (0:
	// none), in one index probe.
	LastSitemapSeq(ctx context.Context) (int64, error)
	// SitemapSlice returns the published articles whose place is in [from, until), in that
	// order: their slug and last change.
	SitemapSlice(ctx context.Context, from, until int64) ([]SitemapArticle, error)
}

// SitemapArticle is what a sitemap shows of an article.
type SitemapArticle struct {
	Slug      string
	UpdatedAt time.Time
}

// SitemapService builds the sitemap index and its pages from the system of record: each read is a
// bounded range of one index. The web layer may keep an encoding while nothing changed
// (web.ContentChanges), which every withdrawal, on any instance, ends.
type SitemapService struct {
	store SitemapStore
	links domain.PublicLinks
}

// NewSitemapService returns the service.
func NewSitemapService(store SitemapStore, links domain.PublicLinks) *SitemapService {
	return &SitemapService{store: store, links: links}
}

// Links returns the public links the sitemaps are written with.
func (s *SitemapService) Links() domain.PublicLinks { return s.links }

// Pages returns how many article pages the sitemap index lists (numbered from 1). A page may be
// empty when every article of its range was withdrawn, hidden or deleted.
func (s *SitemapService) Pages(ctx context.Context) (int, error) {
	last, err := s.store.LastSitemapSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("sitemap pages: %w", err)
	}
	return domain.SitemapPages(last), nil
}

// Page returns article page n (1-based); domain.ErrNotFound when there is no such page.
func (s *SitemapService) Page(ctx context.Context, n int) (domain.SitemapPage, error) {
	if n < 1 {
		return domain.SitemapPage{}, domain.ErrNotFound
	}
	pages, err := s.Pages(ctx)
	if err != nil {
		return domain.SitemapPage{}, err
	}
	if n > pages {
		return domain.SitemapPage{}, domain.ErrNotFound
	}
	from, until := domain.SitemapPageRange(n)
	articles, err := s.store.SitemapSlice(ctx, from, until)
	if err != nil {
		return domain.SitemapPage{}, fmt.Errorf("sitemap page %d: %w", n, err)
	}
	page := domain.SitemapPage{Entries: make([]domain.SitemapEntry, len(articles))}
	for i, a := range articles {
		page.Entries[i] = domain.SitemapEntry{Loc: s.links.Article(a.Slug), LastMod: a.UpdatedAt}
		if a.UpdatedAt.After(page.LastMod) {
			page.LastMod = a.UpdatedAt
		}
	}
	return page, nil
}
