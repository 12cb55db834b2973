package cache

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed lua/authorpage_fill.lua
var authorPageFillSrc string

var authorPageFill = redis.NewScript(authorPageFillSrc)

// AuthorPageCache holds the first page of each author's own article list (summaries, no bodies),
// one Redis hash per author with a field per status filter. Any write to the author's articles
// replaces the whole hash with a fresh invalidation token, so no filter can be served stale, and a
// page loaded before the write cannot be stored after it (see Fill). An invalidation Redis did not
// take is written again until it lands (Policy.Repair, and the next Get); until then Get reads the
// author's pages as a miss and Fill stores nothing.
type AuthorPageCache struct {
	rdb      redis.UniversalClient
	ks       Keyspace
	ttl      time.Duration
	repairer *Repairer
	repair   repairSet // hashes whose invalidation could not be written
}

// NewAuthorPageCache returns the cache; entries live for the policy TTL, at most five minutes.
func NewAuthorPageCache(rdb redis.UniversalClient, ks Keyspace, policy Policy) *AuthorPageCache {
	c := &AuthorPageCache{rdb: rdb, ks: ks, ttl: min(policy.TTL, 5*time.Minute), repairer: policy.Repair}
	policy.Repair.register(c.repairNow)
	return c
}

type cachedPage struct {
	Articles []cachedArticle `json:"articles"`
	Total    int64           `json:"total"`
	More     *bool           `json:"more,omitempty"` // nil in entries of versions that did not store it
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

// AuthorPage is what Get found: the page when Found, else the state a Fill of it must still find.
type AuthorPage struct {
	Articles []domain.Article
	Total    int64
	More     bool // a second page exists
	Found    bool
	guard    string // the hash's invalidation token when Get looked ("" for none)
}

// Get returns the cached first page for the status filter (Found false on a miss).
func (c *AuthorPageCache) Get(ctx context.Context, authorID int64, status domain.ArticleStatus) (AuthorPage, error) {
	if c.repair.size() > 0 && time.Since(time.Unix(0, c.repair.failedAt.Load())) >= repairReadPause {
		c.repairNow(ctx)
	}
	key := c.Key(authorID)
	pending := c.repair.has(key) // before the read, as pendingAmong explains
	vals, err := c.rdb.HMGet(ctx, key, field(status), "_t").Result()
	if err != nil {
		return AuthorPage{}, fmt.Errorf("author page: read: %w", err)
	}
	if pending || c.repair.has(key) {
		return AuthorPage{guard: unrepaired}, nil // stale: a miss no fill can store over
	}
	var miss AuthorPage
	if tok, ok := vals[1].(string); ok {
		miss.guard = tok
	}
	raw, ok := vals[0].(string)
	if !ok {
		return miss, nil
	}
	var p cachedPage
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return miss, nil // unreadable entry: a miss, overwritten by the next Fill
	}
	arts := make([]domain.Article, len(p.Articles))
	for i, a := range p.Articles {
		arts[i] = a.domain()
	}
	return AuthorPage{Articles: arts, Total: p.Total, More: moreOf(p.More, len(arts)), Found: true}, nil
}

// Fill stores the first page for the status filter, loaded after the lookup that returned seen,
// unless the author's pages were invalidated since (it reports whether it stored the page). Pass
// the AuthorPage Get returned, and only when Get did not fail.
func (c *AuthorPageCache) Fill(ctx context.Context, authorID int64, status domain.ArticleStatus, seen AuthorPage, arts []domain.Article, total int64, more bool) (bool, error) {
	p := cachedPage{Articles: make([]cachedArticle, len(arts)), Total: total, More: &more}
	for i, a := range arts {
		a.Body = ""
		p.Articles[i] = toCachedArticle(a)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return false, fmt.Errorf("author page: encode: %w", err)
	}
	stored, err := authorPageFill.Run(ctx, c.rdb, []string{c.Key(authorID)}, seen.guard, field(status), raw, c.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("author page: write: %w", err)
	}
	return stored == 1, nil
}

// Invalidate drops every cached page of the author, leaving a token of this invalidation that
// fills which looked before it cannot match. When Redis does not take it, it is remembered and
// written once Redis answers (see Repairer); the error is returned for the caller to log.
func (c *AuthorPageCache) Invalidate(ctx context.Context, authorID int64) error {
	key := c.Key(authorID)
	if err := c.invalidate(ctx, key); err != nil {
		c.repair.add(key)
		c.repair.failedAt.Store(time.Now().UnixNano())
		c.repairer.kick()
		return err
	}
	return nil
}

// repairNow writes the remembered invalidations and returns how many are still waiting.
func (c *AuthorPageCache) repairNow(ctx context.Context) int {
	ctx = context.WithoutCancel(ctx)
	keys := c.repair.take()
	for i, key := range keys {
		if err := c.invalidate(ctx, key); err != nil {
			for _, k := range keys[i:] { // Redis is failing: the rest waits for the next round
				c.repair.add(k)
			}
			c.repair.failedAt.Store(time.Now().UnixNano())
			break
		}
	}
	c.repair.settle(keys)
	return c.repair.size()
}

func (c *AuthorPageCache) invalidate(ctx context.Context, key string) error {
	_, err := c.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, key)
		pipe.HSet(ctx, key, "_t", newToken())
		pipe.PExpire(ctx, key, tombstoneTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("author page: invalidate: %w", err)
	}
	return nil
}
