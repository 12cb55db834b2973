package cache

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// FeedStamps makes the stamp a reader's cached first feed page is filed under (ListPageCache.Feed)
// without asking PostgreSQL: who the reader follows (a cached list), and for each of them a change
// token, a random value replaced after every committed write that can change what that author's
// followers' feeds show (publish, withdraw, delete, an edit). The stamp hashes the pairs, so any
// such write, and any follow or unfollow, gives the reader's feed a new key.
//
// Both are read through a ReadThrough with its in-process tier, so a warm stamp costs no round
// trip: a hash over the followed authors' tokens, O(followed authors) in process. A change drops
// the entry everywhere before the write answers (DeleteAcked), so the writer's next request, on
// any instance, sees it.
//
// Why a page under a stamp is never older than the stamp: a reader reads the tokens before its
// page query, and a writer replaces its token after its commit, so whatever was filed under a
// stamp was read from a state at least as new as the last token change in it. A token missing
// (never made, expired, lost with Redis) is replaced by a new random one, never rebuilt, so it
// cannot bring back a stamp some old page is filed under. If dropping a token fails, the
// followers' pages cached before the write keep being served until FeedPageTTL ends them.
type FeedStamps struct {
	ks      Keyspace
	follows *ReadThrough[[]int64]
	tokens  *ReadThrough[string]
	memo    *feedMemo // nil without an in-process tier
	log     *slog.Logger
}

// NewFeedStamps returns the feed stamp maker.
func NewFeedStamps(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *FeedStamps {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A follow whose invalidation failed (Redis unreachable) shows in the feed once this expires,
	// as a page whose author's token could not be dropped does.
	followPolicy := policy
	followPolicy.TTL, followPolicy.Jitter = FeedPageTTL, FeedPageTTL/5
	c := &FeedStamps{
		ks:      ks,
		follows: NewReadThrough[[]int64](rdb, "feedfollows", followPolicy, log),
		tokens:  NewReadThrough[string](rdb, "feedtoken", policy, log),
		log:     log,
	}
	if policy.LocalTTL > 0 {
		c.memo = newFeedMemo(policy.LocalTTL, policy.LocalMax, policy.Broadcast.Subscribed, ks.Key("feed", "token", ""), ks.Key("feed", "follows", ""))
		policy.Broadcast.register(c.memo)
	}
	return c
}

// Stamp returns the stamp of readerID's feed and how many authors they follow, loading the
// follow list with load on a miss. An error means neither Redis nor PostgreSQL could say.
func (c *FeedStamps) Stamp(ctx context.Context, readerID int64, load func(context.Context) ([]int64, error)) (stamp int64, followed int, err error) {
	var gen uint64
	if c.memo != nil {
		var ok bool
		if stamp, followed, ok, gen = c.memo.get(readerID); ok {
			return stamp, followed, nil
		}
	}
	ids, err := c.follows.Get(ctx, c.followsKey(readerID), func(ctx context.Context) ([]int64, error) {
		ids, err := load(ctx)
		if ids == nil && err == nil {
			ids = []int64{}
		}
		return ids, err
	})
	if err != nil {
		return 0, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.tokenKey(id)
	}
	tokens, err := c.tokens.GetMany(ctx, keys, func(_ context.Context, missing []string) (map[string]string, error) {
		fresh := make(map[string]string, len(missing))
		for _, k := range missing {
			fresh[k] = newToken()
		}
		return fresh, nil
	})
	if err != nil {
		return 0, 0, err
	}
	var x uint64
	for i, id := range ids {
		x ^= pairHash(id, tokens[keys[i]])
	}
	if c.memo != nil {
		c.memo.put(readerID, gen, int64(x), ids)
	}
	return int64(x), len(ids), nil
}

// pairHash is FNV-1a over an author's id and token: the same on every instance, so they share
// cached pages.
func pairHash(id int64, token string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	var buf [20]byte
	for _, b := range strconv.AppendInt(buf[:0], id, 10) {
		h = (h ^ uint64(b)) * prime
	}
	h *= prime // a zero byte (h ^ 0 is h): separates the id from the token
	for i := 0; i < len(token); i++ {
		h = (h ^ uint64(token[i])) * prime
	}
	return h
}

// AuthorChanged drops authorID's token, so every feed holding the author gets a new stamp. Call
// it after the write's commit.
func (c *FeedStamps) AuthorChanged(ctx context.Context, authorID int64) error {
	if c.memo != nil {
		defer c.memo.authorChanged(authorID) // after the drop too: a stamp computed meanwhile is not kept
		c.memo.authorChanged(authorID)
	}
	return c.tokens.DeleteAcked(ctx, c.tokenKey(authorID))
}

// FollowsChanged drops readerID's cached follow list. Call it after the follow's or unfollow's
// statement, whatever it returned.
func (c *FeedStamps) FollowsChanged(ctx context.Context, readerID int64) error {
	if c.memo != nil {
		defer c.memo.followsChanged(readerID)
		c.memo.followsChanged(readerID)
	}
	return c.follows.DeleteAcked(ctx, c.followsKey(readerID))
}

func (c *FeedStamps) followsKey(readerID int64) string {
	return c.ks.Key("feed", "follows", strconv.FormatInt(readerID, 10))
}

// tokenKey is an author's token: one key per author followed or written within its TTL.
func (c *FeedStamps) tokenKey(authorID int64) string {
	return c.ks.Key("feed", "token", strconv.FormatInt(authorID, 10))
}
