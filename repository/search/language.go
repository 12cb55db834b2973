package search

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
)

// Language is the PostgreSQL text search configuration articles are indexed and searched in
// (INKWELL_SEARCH_LANGUAGE), as PostgreSQL names it. The core article repository writes the
// search document in an article's unit of work in this language, so it imports this type from
// the search room (the one arrow between them; the room reads articles through ArticleReader).
type Language string

// CheckLanguage returns name as a text search configuration of the database, or an error naming
// the setting when there is none by that name (the server refuses to start with it).
func CheckLanguage(ctx context.Context, pool *pgxpool.Pool, q dao.Querier, name string) (Language, error) {
	got, err := q.ArticleSearchLanguage(ctx, pool, name)
	if err != nil {
		return "", fmt.Errorf("INKWELL_SEARCH_LANGUAGE %q is not a text search configuration of this database (SELECT cfgname FROM pg_ts_config lists them): %w", name, err)
	}
	return Language(got), nil
}
