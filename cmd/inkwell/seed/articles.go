package seed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// seedMoveBatch is how many staged articles one INSERT ... SELECT moves into articles.
const seedMoveBatch = 25_000

// seedArticles loads o.Articles published articles the way a real platform's table fills:
//
//   - in publication order (the publication times are drawn first and sorted), so the newest
//     articles sit together at the end of the table, as appended rows do, and each takes its
//     place in publication order (search_seq) from a block reserved in articles_search_seq;
//   - generated text goes into an unlogged staging table with COPY, then into articles with
//     INSERT ... SELECT, the search document computed on the way in by the same function every
//     write uses, a few statements side by side (the work is PostgreSQL's CPU): each row is
//     written once, where filling the documents after the COPY rewrote every row;
//   - the "did you mean" lexicon gets the words the seed wrote, counted here while writing them
//     (seedLexicon), instead of parsing a million texts a second time.
//
// With o.NoSearch the articles get no document or place, and their words reach the lexicon through
// the lexicon pass, as a published article's do.
func (s *Seeder) seedArticles(ctx context.Context, o Options, tag string, userIDs []int64, rng *rand.Rand, progress func(string, int, int)) (err error) {
	lang := o.SearchLanguage
	if lang == "" {
		lang = "english"
	}
	staging := pgx.Identifier{"inkwell_seed_" + tag}.Sanitize()
	if _, err := s.pool.Exec(ctx, `CREATE UNLOGGED TABLE `+staging+` (
		k bigint PRIMARY KEY, slug text, author_id bigint, title text, description text, body text,
		tag_list text[], published_at timestamptz, search_seq bigint)`); err != nil {
		return fmt.Errorf("seed staging table: %w", err)
	}
	defer func() {
		if _, derr := s.pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+staging); derr != nil && err == nil {
			err = fmt.Errorf("drop the seed staging table: %w", derr)
		}
	}()
	span := time.Duration(o.Days) * 24 * time.Hour
	published := make([]time.Time, o.Articles)
	for i := range published {
		published[i] = o.Now.Add(-time.Duration(rng.Int64N(int64(span))))
	}
	slices.SortFunc(published, func(a, b time.Time) int { return a.Compare(b) })
	var firstSeq int64 // 0: no places (NoSearch)
	if !o.NoSearch && o.Articles > 0 {
		// setval returns the block's last place; a concurrent publish may share one place with the
		// block, which only ties them in the candidates' order.
		if err := s.pool.QueryRow(ctx, `SELECT setval('articles_search_seq', coalesce(pg_sequence_last_value('articles_search_seq'), 0) + $1)`,
			o.Articles).Scan(&firstSeq); err != nil {
			return fmt.Errorf("reserve search places: %w", err)
		}
		firstSeq -= int64(o.Articles) - 1
	}
	text := newSeedText(rng)
	lex := newSeedLexicon()
	for done := 0; done < o.Articles; done += o.Chunk {
		n := min(o.Chunk, o.Articles-done)
		rows := make([][]any, n)
		for i := range n {
			k := done + i
			title, description, body, cjk := text.article()
			if !o.NoSearch && !cjk {
				lex.add(title, description, body)
			}
			var seq *int64
			if firstSeq > 0 {
				v := firstSeq + int64(k)
				seq = &v
			}
			rows[i] = []any{int64(k), fmt.Sprintf("seed-%s-%d", tag, k), userIDs[rng.IntN(len(userIDs))],
				title, description, body, []string{fmt.Sprintf("tag%d", rng.IntN(20))}, published[k], seq}
		}
		if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"inkwell_seed_" + tag},
			[]string{"k", "slug", "author_id", "title", "description", "body", "tag_list", "published_at", "search_seq"},
			pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy articles: %w", err)
		}
		progress("articles", done+n, o.Articles)
	}
	if err := s.moveStaged(ctx, staging, lang, o, progress); err != nil {
		return err
	}
	if o.NoSearch {
		return nil
	}
	return s.seedLexicon(ctx, lex, progress)
}

// moveStaged inserts the staged articles into articles in publication order, a batch per
// statement and a few statements at once, computing each search document in the statement.
func (s *Seeder) moveStaged(ctx context.Context, staging, lang string, o Options, progress func(string, int, int)) error {
	document, search := `inkwell_search_document($3::text::regconfig, title, description, body)`, []any{lang}
	if o.NoSearch {
		document, search = `NULL::tsvector`, nil
	}
	insert := `INSERT INTO articles (slug, author_id, title, description, body, tag_list, status,
			created_at, updated_at, published_at, search_vector, search_seq)
		SELECT slug, author_id, title, description, body, tag_list, 'published',
			published_at, published_at, published_at, ` + document + `, search_seq
		FROM ` + staging + ` WHERE k >= $1 AND k < $2 ORDER BY k`
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		done int
	)
	slots := make(chan struct{}, min(runtime.NumCPU(), 4))
	for from := 0; from < o.Articles; from += seedMoveBatch {
		to := min(from+seedMoveBatch, o.Articles)
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				if !o.NoSearch { // the seed counts these articles' words itself (seedLexicon)
					if _, err := tx.Exec(ctx, `SELECT set_config('inkwell.lexicon_insert_counted', 'on', true)`); err != nil {
						return err
					}
				}
				_, err := tx.Exec(ctx, insert, append([]any{from, to}, search...)...)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("insert seeded articles %d..%d: %w", from, to-1, err))
				return
			}
			done += to - from
			progress("insert", done, o.Articles)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
