package cache

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/feed_tokens.lua
var feedTokensSrc string

var feedTokens = redis.NewScript(feedTokensSrc)

// FeedStamps makes the stamp a reader's cached first feed page is filed under (ListPageCache.Feed)
// without asking PostgreSQL: who the reader follows (a cached list), and for each of them a change
// token, a random value replaced after every committed write that can change what that author's
// followers' feeds show (publish, withdraw, delete, an edit). The stamp hashes the pairs, so any
// such write, and any follow or unfollow, gives the reader's feed a new key. Per request it costs
// one GET (the follow list, Redis only, no in-process tier: a follow answered by one instance must
// show in the feed read from the next) and one script reading the tokens: O(followed authors)
// inside Redis, no SQL.
//
// Why a page under a stamp is never older than the stamp: a reader reads the tokens before its
// page query, and a writer replaces its token after its commit, so whatever was filed under a
// stamp was read from a state at least as new as the last token change in it. A token missing
// from Redis (evicted, lost in a restart) is replaced by a new random one, never rebuilt, so it
// cannot bring back a stamp some old page is filed under. If replacing a token fails, the
// followers' pages cached before the write keep being served until FeedPageTTL ends them.
type FeedStamps struct {
	rdb     redis.UniversalClient
	ks      Keyspace
	follows *ReadThrough[[]int64]
	log     *slog.Logger
}

// maxTokensPerCall bounds one script call's arguments (Lua's unpack has a limit); longer follow
// lists take several calls, pipelined.
const maxTokensPerCall = 1000

// NewFeedStamps returns the feed stamp maker.
func NewFeedStamps(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *FeedStamps {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy.LocalTTL, policy.Broadcast = 0, nil // see FeedStamps: Redis is where a follow shows at once
	// A follow whose invalidation failed (Redis unreachable) shows in the feed once this expires,
	// as a page whose author's token could not be replaced does.
	policy.TTL, policy.Jitter = FeedPageTTL, FeedPageTTL/5
	return &FeedStamps{rdb: rdb, ks: ks, follows: NewReadThrough[[]int64](rdb, "feedfollows", policy, log), log: log}
}

// Stamp returns the stamp of readerID's feed and how many authors they follow, loading the
// follow list with load on a miss. An error means Redis could not say: serve the feed from
// PostgreSQL.
func (c *FeedStamps) Stamp(ctx context.Context, readerID int64, load func(context.Context) ([]int64, error)) (stamp int64, followed int, err error) {
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
	tokens, err := c.tokens(ctx, ids)
	if err != nil {
		return 0, 0, err
	}
	var x uint64
	for i, id := range ids {
		x ^= pairHash(id, tokens[i])
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
	h = (h ^ 0) * prime // separates the id from the token
	for i := 0; i < len(token); i++ {
		h = (h ^ uint64(token[i])) * prime
	}
	return h
}

// tokens reads the authors' tokens, one script call per maxTokensPerCall of them (one for
// nearly every reader).
func (c *FeedStamps) tokens(ctx context.Context, ids []int64) ([]string, error) {
	fresh := newToken()
	out := make([]string, 0, len(ids))
	for lo := 0; lo < len(ids); lo += maxTokensPerCall {
		chunk := ids[lo:min(lo+maxTokensPerCall, len(ids))]
		args := make([]any, 1, len(chunk)+1)
		args[0] = fresh
		for _, id := range chunk {
			args = append(args, id)
		}
		vals, err := feedTokens.Run(ctx, c.rdb, []string{c.authorsKey()}, args...).StringSlice()
		if err != nil {
			return nil, fmt.Errorf("feed stamps: read tokens: %w", err)
		}
		if len(vals) != len(chunk) {
			return nil, fmt.Errorf("feed stamps: %d tokens for %d authors", len(vals), len(chunk))
		}
		out = append(out, vals...)
	}
	return out, nil
}

// AuthorChanged gives authorID a new token: every feed holding the author gets a new stamp. Call
// it after the write's commit.
func (c *FeedStamps) AuthorChanged(ctx context.Context, authorID int64) error {
	if err := c.rdb.HSet(ctx, c.authorsKey(), strconv.FormatInt(authorID, 10), newToken()).Err(); err != nil {
		return fmt.Errorf("feed stamps: author %d changed: %w", authorID, err)
	}
	return nil
}

// FollowsChanged invalidates readerID's cached follow list. Call it after the follow's or
// unfollow's statement, whatever it returned.
func (c *FeedStamps) FollowsChanged(ctx context.Context, readerID int64) error {
	return c.follows.Delete(ctx, c.followsKey(readerID))
}

func (c *FeedStamps) followsKey(readerID int64) string {
	return c.ks.Key("feed", "follows", strconv.FormatInt(readerID, 10))
}

// authorsKey is the one hash of every author's token: one field per author who has ever been
// followed or written, bounded by the number of users.
func (c *FeedStamps) authorsKey() string { return c.ks.Key("feed", "authors") }
