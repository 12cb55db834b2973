// Package seed bulk-loads demo data (users, published articles with their search documents and
// lexicon words, like counters, a signed-in reader) with COPY: `inkwell seed`, the benchmarks and
// the plan tests use it. It lives with the command, not in repository/, because no request path
// ever runs it.
package seed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
)

// Options sizes a bulk load of demo data.
type Options struct {
	Users        int
	Articles     int
	Days         int    // articles are published across this many past days
	PasswordHash string // every seeded user gets this hash (one known password)
	Chunk        int    // rows per COPY
	Now          time.Time
	Reader       Reader // one signed-in reader over the seeded data (none when Username is "")
	// SearchLanguage is the text search configuration the articles are indexed in (INKWELL_SEARCH_LANGUAGE).
	SearchLanguage string
	// NoSearch leaves the articles without search documents, places and lexicon words: a server's
	// backfill and lexicon pass add them later. For measuring what indexing costs a seed.
	NoSearch bool
}

// Seeder bulk-loads users, published articles and like counters with COPY, for benchmarks and
// demos. It writes PostgreSQL only; caches fill as usual when the data is read.
type Seeder struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// New returns a Seeder.
func New(pool *pgxpool.Pool, q dao.Querier) *Seeder { return &Seeder{pool: pool, q: q} }

// Seed loads the data, calling progress after each chunk with the rows done so far. Usernames
// carry a run tag so seeding twice adds more data instead of failing on uniqueness.
func (s *Seeder) Seed(ctx context.Context, o Options, progress func(what string, done, total int)) error {
	if o.Chunk <= 0 {
		o.Chunk = 50_000
	}
	tag := seedTag(o)
	userIDs, err := s.seedUsers(ctx, o, tag, progress)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(o.Now.UnixNano()), 42))
	if err := s.seedArticles(ctx, o, tag, userIDs, rng, progress); err != nil {
		return err
	}
	// Like counters for every seeded article in one statement: a heavy-tailed spread, as real
	// popularity is.
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO interactives (biz, biz_id, like_cnt, read_cnt)
		SELECT 'article', a.id, floor(power(random(), 3) * 1000)::bigint, floor(random() * 5000)::bigint
		FROM articles a WHERE a.slug LIKE $1`, fmt.Sprintf("seed-%s-%%", tag)); err != nil {
		return fmt.Errorf("seed counters: %w", err)
	}
	progress("counters", o.Articles, o.Articles)
	if err := s.seedReader(ctx, o, tag, progress); err != nil {
		return err
	}
	// Fresh statistics and visibility map, as autovacuum would leave them in time (and never does
	// when it is off): without statistics the planner guesses a handful of rows and answers every
	// ranking batch with a bitmap scan and a sort over the whole window, and without the visibility
	// map the ranking scan and the lists' projections cannot be index-only. It also spares the
	// first minutes after a seed autovacuum's own pass over the new rows. VACUUM cannot run in a
	// transaction; Exec runs it on its own.
	if _, err := s.pool.Exec(ctx, `VACUUM (ANALYZE) users, articles, interactives, article_tags, favorite_articles, search_words,
		author_article_counts, tag_article_counts, site_article_counts, user_favorite_counts, follows, likes`); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	progress("analyze", o.Articles, o.Articles)
	return nil
}

// seedTag is the run tag of one seed: seeding twice adds more data instead of failing on
// uniqueness.
func seedTag(o Options) string { return fmt.Sprintf("%x", o.Now.UnixNano()&0xffffff) }

// Username is the username of the i-th user (from 0) a seed with these options creates; its
// email is the username at example.com.
func Username(o Options, i int) string { return fmt.Sprintf("seed%s_%d", seedTag(o), i) }

func (s *Seeder) seedUsers(ctx context.Context, o Options, tag string, progress func(string, int, int)) ([]int64, error) {
	rows := make([][]any, o.Users)
	for i := range rows {
		name := Username(o, i)
		rows[i] = []any{name + "@example.com", name, o.PasswordHash}
	}
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"users"}, []string{"email", "username", "password_hash"}, pgx.CopyFromRows(rows)); err != nil {
		return nil, fmt.Errorf("copy users: %w", err)
	}
	progress("users", o.Users, o.Users)
	ids := make([]int64, 0, o.Users)
	r, err := s.pool.Query(ctx, "SELECT id FROM users WHERE username LIKE $1", "seed"+tag+"\\_%")
	if err != nil {
		return nil, err
	}
	for r.Next() {
		var id int64
		if err := r.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, r.Err()
}
