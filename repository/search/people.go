package search

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// People finds users for search boxes (GET /api/search/users). Each group of the query reads
// at most its limit of rows off an index (migrations/00022_search_lexicon_people_tags.sql).
type People struct {
	reads *pg.ReadRouter // nil: every search on pool
	pool  *pgxpool.Pool
	q     dao.Querier
}

// NewPeople returns the searcher.
func NewPeople(pool *pgxpool.Pool, q dao.Querier, reads *pg.ReadRouter) *People {
	return &People{reads: reads, pool: pool, q: q}
}

// likeEscaper escapes LIKE's metacharacters (PostgreSQL's default escape is the backslash), so a
// query's %, _ and \ match themselves.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// likePrefix is the LIKE pattern of the strings starting with s.
func likePrefix(s string) string { return likeEscaper.Replace(s) + "%" }

// SearchUsers returns the ids of at most limit users matching q, best first (exact username,
// username prefix, username similarity, bio words); usernames compare case-insensitively.
func (p *People) SearchUsers(ctx context.Context, q string, limit int) ([]int64, error) {
	q = strings.ToLower(q)
	rows, err := p.q.UserSearch(ctx, pg.ReadsOn(ctx, p.reads, p.pool), dao.UserSearchParams{Q: q, Prefix: likePrefix(q), Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "search users")
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, nil
}
