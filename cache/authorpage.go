package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// AuthorPageCache holds the first page of each author's own article list (summaries, no bodies),
// one Redis hash per author with a field per status filter. Any write to the author's articles
// deletes the whole hash, so no filter can be served stale.
type AuthorPageCache struct {
	rdb redis.UniversalClient
	ks  Keyspace
	ttl time.Duration
}

// NewAuthorPageCache returns the cache; entries live for the policy TTL, at most five minutes.
func NewAuthorPageCache(rdb redis.UniversalClient, ks Keyspace, policy Policy) *AuthorPageCache {
	// Short-lived on purpose: a read racing a write can re-store a page from just before the write.
	return &AuthorPageCache{rdb: rdb, ks: ks, ttl: min(policy.TTL, 5*time.Minute)}
}

type cachedPage struct {
	Articles []cachedArticle `json:"articles"`
	Total    int64           `json:"total"`
}

// Key is the hash of one author (tests inspect it).
func (c *AuthorPageCache) Key(authorID int64) string {
	return c.ks.Key("authorpage", strconv.FormatInt(authorID, 10))
}

func field(status domain.ArticleStatus) string {
	if status == "" {
		return "all"
	}
	return string(status)
}

// Get returns the cached first page for the status filter; ok is false on a miss.
func (c *AuthorPageCache) Get(ctx context.Context, authorID int64, status domain.ArticleStatus) (arts []domain.Article, total int64, ok bool, err error) {
	raw, err := c.rdb.HGet(ctx, c.Key(authorID), field(status)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("author page: read: %w", err)
	}
	var p cachedPage
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, 0, false, nil // unreadable entry: a miss, overwritten by the next Set
	}
	arts = make([]domain.Article, len(p.Articles))
	for i, a := range p.Articles {
		arts[i] = a.domain()
	}
	return arts, p.Total, true, nil
}

// Set stores the first page for the status filter. The hash's TTL is set only when it has none,
// so a busy author's entries still expire on schedule.
func (c *AuthorPageCache) Set(ctx context.Context, authorID int64, status domain.ArticleStatus, arts []domain.Article, total int64) error {
	p := cachedPage{Articles: make([]cachedArticle, len(arts)), Total: total}
	for i, a := range arts {
		a.Body = ""
		p.Articles[i] = toCachedArticle(a)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("author page: encode: %w", err)
	}
	key := c.Key(authorID)
	_, err = c.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HSet(ctx, key, field(status), raw)
		pipe.ExpireNX(ctx, key, c.ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("author page: write: %w", err)
	}
	return nil
}

// Invalidate drops every cached page of the author.
func (c *AuthorPageCache) Invalidate(ctx context.Context, authorID int64) error {
	if err := c.rdb.Del(ctx, c.Key(authorID)).Err(); err != nil {
		return fmt.Errorf("author page: invalidate: %w", err)
	}
	return nil
}
