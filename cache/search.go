package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// SearchTTL is how long a page of search hits is kept for anonymous readers: short, because
// nothing invalidates it. The hits are hydrated through the article cache on every read, which
// is invalidated by every write, so a withdrawn or deleted article leaves a cached page at its
// commit; only a newly published article can take up to this long to appear in one.
const SearchTTL = 5 * time.Second

// SearchCache keeps pages of article search hits (ids, slugs, scores and snippets: nothing
// per viewer) under a hash of the normalized query, for SearchTTL.
type SearchCache struct {
	rdb redis.UniversalClient
	ks  Keyspace
}

// NewSearchCache returns the cache.
func NewSearchCache(rdb redis.UniversalClient, ks Keyspace) *SearchCache {
	return &SearchCache{rdb: rdb, ks: ks}
}

// SearchEntry is one cached page.
type SearchEntry struct {
	Hits  []SearchEntryHit     `json:"hits"`
	Total int64                `json:"total"`
	Next  *domain.SearchCursor `json:"next,omitempty"`
}

// SearchEntryHit is one cached hit: enough to find the article in the article cache.
type SearchEntryHit struct {
	ID      int64   `json:"id"`
	Slug    string  `json:"slug"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
}

// Get returns the page under key; false on a miss.
func (c *SearchCache) Get(ctx context.Context, key string) (SearchEntry, bool, error) {
	raw, err := c.rdb.Get(ctx, c.key(key)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return SearchEntry{}, false, nil
	case err != nil:
		return SearchEntry{}, false, fmt.Errorf("search cache get: %w", err)
	}
	var e SearchEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return SearchEntry{}, false, nil // unreadable (another version's format): a miss
	}
	return e, true, nil
}

// Set stores the page under key for SearchTTL.
func (c *SearchCache) Set(ctx context.Context, key string, e SearchEntry) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("search cache encode: %w", err)
	}
	if err := c.rdb.Set(ctx, c.key(key), raw, SearchTTL).Err(); err != nil {
		return fmt.Errorf("search cache set: %w", err)
	}
	return nil
}

func (c *SearchCache) key(k string) string { return c.ks.Key("search", "articles", k) }
