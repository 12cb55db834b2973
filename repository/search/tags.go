package search

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// Tags completes tag prefixes (GET /api/search/tags) off tag_article_counts_prefix_idx.
type Tags struct {
	reads *pg.ReadRouter // nil: every search on pool
	pool  *pgxpool.Pool
	q     dao.Querier
}

// NewTags returns the searcher.
func NewTags(pool *pgxpool.Pool, q dao.Querier, reads *pg.ReadRouter) *Tags {
	return &Tags{reads: reads, pool: pool, q: q}
}

// SearchTags returns at most limit tags in use starting with prefix, case-insensitively, the most
// used first.
func (p *Tags) SearchTags(ctx context.Context, prefix string, limit int) ([]string, error) {
	rows, err := p.q.TagSearchPrefix(ctx, pg.ReadsOn(ctx, p.reads, p.pool), dao.TagSearchPrefixParams{Prefix: likePrefix(strings.ToLower(prefix)), Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "search tags")
	}
	tags := make([]string, len(rows))
	for i, r := range rows {
		tags[i] = r.Tag
	}
	return tags, nil
}
