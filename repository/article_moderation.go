package repository

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// HideIn hides article id in the caller's unit of work (queries/article_moderation.sql). Once tx
// has committed, every instance has dropped the article and the first pages, author pages, feeds
// and tag cloud it was on before the call returns (moderatedEverywhere).
func (r *ArticleRepository) HideIn(ctx context.Context, stx service.Tx, id int64, reason string) (domain.Article, error) {
	tx := pg.TxOf(stx)
	row, err := r.q.ArticleHide(ctx, tx, dao.ArticleHideParams{ID: id, Reason: reason})
	if err != nil {
		return domain.Article{}, pg.Wrapf(err, "hide article %d", id)
	}
	a := articleFromRow(dao.ArticleGetBySlugRow(row))
	r.moderatedEverywhere(tx, a.AuthorID, []string{a.Slug}, a.Tags)
	return a, nil
}

// UnhideIn restores hidden article id to its author's status in the caller's unit of work
// (still hidden while its author is suspended). changed is false when it was not hidden.
func (r *ArticleRepository) UnhideIn(ctx context.Context, stx service.Tx, id int64) (a domain.Article, changed bool, err error) {
	tx := pg.TxOf(stx)
	row, err := r.q.ArticleUnhide(ctx, tx, dao.ArticleUnhideParams{ID: id, SearchConfig: string(r.lang)})
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Article{}, false, nil
	}
	if err != nil {
		return domain.Article{}, false, pg.Wrapf(err, "unhide article %d", id)
	}
	a = articleFromRow(dao.ArticleGetBySlugRow(row))
	r.moderatedEverywhere(tx, a.AuthorID, []string{a.Slug}, a.Tags)
	return a, true, nil
}

// HideByAuthorIn hides every published article of authorID (a suspension) in the caller's unit of
// work. The statement takes at most 256 advisory locks however many articles it moves (see
// article_lock_key), and costs the author's published articles.
func (r *ArticleRepository) HideByAuthorIn(ctx context.Context, stx service.Tx, authorID int64) (int, error) {
	tx := pg.TxOf(stx)
	rows, err := r.q.ArticleHideByAuthor(ctx, tx, authorID)
	if err != nil {
		return 0, pg.Wrapf(err, "hide the articles of user %d", authorID)
	}
	moderatedRows(r, tx, authorID, rows, func(row dao.ArticleHideByAuthorRow) (string, []string) { return row.Slug, row.TagList })
	return len(rows), nil
}

// RestoreByAuthorIn restores the articles a suspension of authorID hid (not those a moderator
// hid) in the caller's unit of work.
func (r *ArticleRepository) RestoreByAuthorIn(ctx context.Context, stx service.Tx, authorID int64) (int, error) {
	tx := pg.TxOf(stx)
	rows, err := r.q.ArticleRestoreByAuthor(ctx, tx, dao.ArticleRestoreByAuthorParams{AuthorID: authorID, SearchConfig: string(r.lang)})
	if err != nil {
		return 0, pg.Wrapf(err, "restore the articles of user %d", authorID)
	}
	moderatedRows(r, tx, authorID, rows, func(row dao.ArticleRestoreByAuthorRow) (string, []string) { return row.Slug, row.TagList })
	return len(rows), nil
}

// moderatedRows registers the cache changes of a bulk hide or restore of authorID's articles.
func moderatedRows[R any](r *ArticleRepository, tx *pg.Tx, authorID int64, rows []R, of func(R) (slug string, tags []string)) {
	slugs, tags := make([]string, 0, len(rows)), []string{}
	for _, row := range rows {
		slug, t := of(row)
		slugs, tags = append(slugs, slug), append(tags, t...)
	}
	r.moderatedEverywhere(tx, authorID, slugs, tags)
}

// moderatedEverywhere registers, for after tx's commit, the cache changes of a moderation write:
// the same entries a withdrawal drops (syncCaches), but with acknowledged broadcasts, so the call
// returns only once every instance has dropped its in-process copies: a hidden article is gone
// from the next request on any instance, not within the broadcast's delay.
func (r *ArticleRepository) moderatedEverywhere(tx *pg.Tx, authorID int64, slugs, tags []string) {
	tx.AfterCommit(func(ctx context.Context) {
		ctx = context.WithoutCancel(ctx)
		warn := func(what string, err error) {
			if err != nil {
				r.log.WarnContext(ctx, "moderation: cache invalidation failed; it is retried", "author_id", authorID, "what", what, "err", err)
			}
		}
		if len(slugs) > 0 {
			warn("articles", r.cache.InvalidateEverywhere(ctx, slugs...))
		}
		warn("author pages", r.pages.Invalidate(ctx, authorID))
		tags = slices.Compact(slices.Sorted(slices.Values(tags)))
		warn("first pages", r.lists.InvalidateEverywhere(ctx, tags...))
		warn("feeds", r.lists.AuthorChanged(ctx, authorID))
		warn("tags", r.tags.InvalidateEverywhere(ctx))
	})
}
