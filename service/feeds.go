package service

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=feeds.go -destination=mocks/feeds_mock.go -package=mocks

// FeedArticles reads what a feed shows: the first page of a public list (through the caches that
// serve the list endpoints, invalidated at every write's commit on every instance) and the full
// articles of that page (through the article cache, whose entries carry the rendered body).
type FeedArticles interface {
	ListPublished(ctx context.Context, q ArticleQuery) (ArticlePage, error)
	ListByAuthor(ctx context.Context, authorID int64, status domain.ArticleStatus, p domain.Page) (ArticlePage, error)
	GetBySlugs(ctx context.Context, slugs []string) (map[string]domain.Article, error)
}

// FeedUsers finds a feed's author and the names of its entries' authors.
type FeedUsers interface {
	GetByUsername(ctx context.Context, username string) (domain.User, error)
	GetByIDs(ctx context.Context, ids []int64) (map[int64]domain.User, error)
}

// FeedQuery names a feed: the global one (both empty), an author's or a tag's.
type FeedQuery struct {
	Author, Tag string
}

// FeedService builds the Atom and RSS feeds' content. Each read costs what the first page of the
// list behind it costs (cached, FeedSize articles, whatever the table's size) plus cached lookups
// of those articles and their authors.
type FeedService struct {
	articles FeedArticles
	users    FeedUsers
	links    domain.PublicLinks
}

// NewFeedService returns the service.
func NewFeedService(articles FeedArticles, users FeedUsers, links domain.PublicLinks) *FeedService {
	return &FeedService{articles: articles, users: users, links: links}
}

// Links returns the public links feeds are written with.
func (s *FeedService) Links() domain.PublicLinks { return s.links }

// Feed returns the FeedSize newest published, visible articles of the feed q names. An unknown
// author, or a tag no published article carries, is domain.ErrNotFound.
func (s *FeedService) Feed(ctx context.Context, q FeedQuery) (domain.Feed, error) {
	first := domain.Page{Limit: domain.FeedSize}
	feed := domain.Feed{Title: "Articles", Link: s.links.Base() + "/"}
	var (
		page ArticlePage
		err  error
	)
	switch {
	case q.Author != "":
		if !domain.FeedName(q.Author, domain.MaxUsernameLen) {
			return domain.Feed{}, domain.ErrNotFound
		}
		var u domain.User
		if u, err = s.users.GetByUsername(ctx, q.Author); err != nil {
			return domain.Feed{}, err
		}
		feed.Title, feed.Link = "Articles by "+u.Username, s.links.Base()+"/profile/"+u.Username
		page, err = s.articles.ListByAuthor(ctx, u.ID, domain.StatusPublished, first)
	case q.Tag != "":
		if !domain.FeedName(q.Tag, domain.MaxTagLen) {
			return domain.Feed{}, domain.ErrNotFound
		}
		feed.Title = "Articles tagged " + q.Tag
		if page, err = s.articles.ListPublished(ctx, ArticleQuery{Tag: q.Tag, Page: first}); err == nil && len(page.Articles) == 0 {
			return domain.Feed{}, domain.ErrNotFound
		}
	default:
		page, err = s.articles.ListPublished(ctx, ArticleQuery{Page: first})
	}
	if err != nil {
		return domain.Feed{}, fmt.Errorf("feed %+v: %w", q, err)
	}
	if err := s.fill(ctx, &feed, page.Articles); err != nil {
		return domain.Feed{}, fmt.Errorf("feed %+v: %w", q, err)
	}
	feed.Stamp = stampOf(q, feed)
	return feed, nil
}

// fill adds the page's articles in full, with their authors' names and links. An article gone
// or no longer public since the page was read is left out.
func (s *FeedService) fill(ctx context.Context, feed *domain.Feed, summaries []domain.Article) error {
	feed.Entries = make([]domain.FeedEntry, 0, len(summaries))
	if len(summaries) == 0 {
		return nil
	}
	slugs := make([]string, len(summaries))
	authorIDs := make([]int64, 0, len(summaries))
	seen := make(map[int64]bool, len(summaries))
	for i, a := range summaries {
		slugs[i] = a.Slug
		if !seen[a.AuthorID] {
			seen[a.AuthorID] = true
			authorIDs = append(authorIDs, a.AuthorID)
		}
	}
	full, err := s.articles.GetBySlugs(ctx, slugs)
	if err != nil {
		return err
	}
	authors, err := s.users.GetByIDs(ctx, authorIDs)
	if err != nil {
		return err
	}
	for _, sum := range summaries {
		a, ok := full[sum.Slug]
		if !ok || !a.Public() {
			continue
		}
		feed.Entries = append(feed.Entries, domain.FeedEntry{Article: a, Author: authors[a.AuthorID].Username, Link: s.links.Article(a.Slug)})
		if a.UpdatedAt.After(feed.Updated) {
			feed.Updated = a.UpdatedAt
		}
	}
	return nil
}

// stampOf hashes what the feed shows: its name, and each entry's id, version, last change and
// author's name (a version changes with every edit of an article's content).
func stampOf(q FeedQuery, feed domain.Feed) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	word := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		_, _ = h.Write(buf[:])
	}
	text := func(s string) {
		word(uint64(len(s)))
		_, _ = h.Write([]byte(s))
	}
	text(q.Author)
	text(q.Tag)
	text(feed.Title)
	for _, e := range feed.Entries {
		word(uint64(e.Article.ID))
		word(uint64(e.Article.Version))
		word(uint64(e.Article.UpdatedAt.UnixNano()))
		text(e.Author)
		text(e.Link)
	}
	return h.Sum64()
}
