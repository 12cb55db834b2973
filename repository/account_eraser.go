package repository

import (
	"context"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// AccountEraser deletes accounts: the user, everything that is theirs, and the counts their
// likes and folders held up, in one unit of work; then every cache entry that showed them.
type AccountEraser struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	users    *cache.UserCache
	articles *cache.ArticleCache
	pages    *cache.AuthorPageCache
	lists    *cache.ListPageCache
	tags     *cache.TagsCache
	counters *cache.Counters
	viewers  *cache.ViewerState
	log      *slog.Logger
}

// NewAccountEraser returns the eraser.
func NewAccountEraser(pool *pgxpool.Pool, q dao.Querier, users *cache.UserCache, articles *cache.ArticleCache, pages *cache.AuthorPageCache,
	lists *cache.ListPageCache, tags *cache.TagsCache, counters *cache.Counters, viewers *cache.ViewerState, log *slog.Logger) *AccountEraser {
	return &AccountEraser{pool: pool, q: q, users: users, articles: articles, pages: pages, lists: lists, tags: tags,
		counters: counters, viewers: viewers, log: log}
}

// erased is what one deletion removed that caches showed.
type erased struct {
	user                 dao.AccountLockByUsernameRow
	articles             []dao.AccountArticlesRow
	liked, collected     []int64 // the user's flags
	followers, following []int64
}

// HoldIn locks the row of the account named username in tx, until tx ends, and returns it
// (domain.ErrNotFound if there is none): what must happen before the account goes (ending its
// sessions) runs while it is held.
func (r *AccountEraser) HoldIn(ctx context.Context, tx service.Tx, username string) (domain.User, error) {
	row, err := r.q.AccountLockByUsername(ctx, pg.TxOf(tx), username)
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "lock user %q", username)
	}
	return domain.User{ID: row.ID, Username: row.Username, Email: row.Email}, nil
}

// EraseIn deletes the account u (held by HoldIn) in tx. Cache entries are dropped once tx has
// committed.
func (r *AccountEraser) EraseIn(ctx context.Context, stx service.Tx, u domain.User) (domain.ErasedAccount, error) {
	tx := pg.TxOf(stx)
	e, summary, err := r.erase(ctx, tx, u.Username)
	if err != nil {
		return domain.ErasedAccount{}, err
	}
	tx.AfterCommit(func(ctx context.Context) { r.dropCaches(ctx, e) })
	return summary, nil
}

func (r *AccountEraser) erase(ctx context.Context, tx *pg.Tx, username string) (erased, domain.ErasedAccount, error) {
	var e erased
	var err error
	// The row is held already (HoldIn): this reads what the caches showed of it.
	if e.user, err = r.q.AccountLockByUsername(ctx, tx, username); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "lock user %q", username)
	}
	id := e.user.ID
	counted := map[int64]cache.CounterRow{}
	likes, err := r.q.AccountUncountLikes(ctx, tx, id)
	if err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "uncount the likes of user %d", id)
	}
	for _, l := range likes {
		if l.Biz == string(domain.BizArticle) {
			e.liked = append(e.liked, l.BizID)
			counted[l.BizID] = counterRow(l.ReadCnt, l.LikeCnt, l.CollectCnt, l.Version)
		}
	}
	folders, err := r.q.AccountLockCollections(ctx, tx, id)
	if err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "lock the folders of user %d", id)
	}
	collects, err := r.q.AccountUncountCollects(ctx, tx, id)
	if err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "uncount the folders of user %d", id)
	}
	for _, c := range collects { // after the likes: shard 0's newest version
		e.collected = append(e.collected, c.BizID)
		counted[c.BizID] = counterRow(c.ReadCnt, c.LikeCnt, c.CollectCnt, c.Version)
	}
	if e.articles, err = r.q.AccountArticles(ctx, tx, id); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "list the articles of user %d", id)
	}
	ids := make([]int64, len(e.articles))
	for i, a := range e.articles {
		ids[i] = a.ID
		delete(counted, a.ID) // its counters go with it
	}
	if err := r.q.AccountDropArticleInteractions(ctx, tx, ids); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "delete the likes and counters of user %d's articles", id)
	}
	// Comments others answered become placeholders first (threads keep their shape, issue #32);
	// the rest are deleted. Both count as the user's erased comments.
	placeholders, err := r.q.AccountPlaceholderComments(ctx, tx, id)
	if err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "empty the answered comments of user %d", id)
	}
	comments, err := r.q.AccountDeleteComments(ctx, tx, id)
	if err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "delete the comments of user %d", id)
	}
	comments += placeholders
	if e.followers, err = r.q.AccountFollowers(ctx, tx, id); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "list the followers of user %d", id)
	}
	if e.following, err = r.q.AccountFollowees(ctx, tx, id); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "list whom user %d follows", id)
	}
	if err := r.q.AccountDeleteStoredAnswers(ctx, tx, id); err != nil {
		return e, domain.ErasedAccount{}, pg.Wrapf(err, "delete the stored answers of user %d", id)
	}
	for _, a := range e.articles {
		art := domain.Article{ID: a.ID, AuthorID: id, Slug: a.Slug, Title: a.Title}
		if err := durable.WriteArticleEvent(ctx, r.q, tx, domain.TopicArticleDeleted, art); err != nil {
			return e, domain.ErasedAccount{}, err
		}
	}
	if n, err := r.q.AccountDelete(ctx, tx, id); err != nil || n == 0 {
		return e, domain.ErasedAccount{}, pg.Wrapf(notFoundIfNone(n, err), "delete user %d", id)
	}
	r.counters.Changed(tx, domain.BizArticle, counted)
	return e, domain.ErasedAccount{
		UserID: id, Username: e.user.Username, Articles: len(e.articles), Comments: int(comments),
		Likes: len(e.liked), Folders: len(folders), Followers: len(e.followers), Following: len(e.following),
	}, nil
}

// notFoundIfNone is err, or domain.ErrNotFound when a statement that must change a row changed none.
func notFoundIfNone(n int64, err error) error {
	if err == nil && n == 0 {
		return domain.ErrNotFound
	}
	return err
}

// dropCaches drops, after the commit, every cache entry that showed the account: the user by id
// and username, its articles' details, counters and first pages (global, per tag, its own, its
// followers' feeds by its change token), the tag cloud, and the per-viewer flags that named it or
// were its own. The user, its articles, the first pages and the flags are dropped from every
// instance's in-process tier before it returns (acknowledged broadcasts); the counts its likes
// and folders held up follow within the counters' in-process bound (a second). Failures are
// logged; the caches repair them (cache.Repairer).
func (r *AccountEraser) dropCaches(ctx context.Context, e erased) {
	ctx = context.WithoutCancel(ctx)
	id := e.user.ID
	warn := func(what string, err error) {
		if err != nil {
			r.log.WarnContext(ctx, "deleted account: cache invalidation failed; it is retried", "user_id", id, "what", what, "err", err)
		}
	}
	warn("user", r.users.InvalidateEverywhere(ctx, id, e.user.Username))
	var slugs, tags []string
	ids := make([]int64, len(e.articles))
	for i, a := range e.articles {
		slugs, ids[i] = append(slugs, a.Slug), a.ID
		tags = append(tags, a.TagList...)
	}
	slices.Sort(tags)
	warn("articles", r.articles.InvalidateEverywhere(ctx, slugs...))
	if len(ids) > 0 {
		r.counters.Suspect(ctx, domain.BizArticle, ids...) // reloads find no rows: zeros
	}
	warn("author pages", r.pages.Invalidate(ctx, id))
	warn("first pages", r.lists.InvalidateEverywhere(ctx, slices.Compact(tags)...))
	warn("feeds", r.lists.AuthorChanged(ctx, id))
	warn("tags", r.tags.InvalidateEverywhere(ctx))
	r.viewers.InvalidateViewers(ctx, e.followers, cache.ViewerFollows, id)
	r.viewers.Invalidate(ctx, id, cache.LikesOf(domain.BizArticle), e.liked...)
	r.viewers.Invalidate(ctx, id, cache.ViewerCollects, e.collected...)
	r.viewers.Invalidate(ctx, id, cache.ViewerFollows, e.following...)
}
