package repository

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// seedLexicon folds the seeded articles into the "did you mean" lexicon, several ranges of ids
// side by side (SearchLexicon.FoldRange). Every article up to the seed's start is settled:
// seeded rows are created in the past, and their COPYs have committed.
func (s *Seeder) seedLexicon(ctx context.Context, o SeedOptions, tag string, progress func(string, int, int)) error {
	var lo, hi *int64
	// The slug key's range of this run's prefix ('.' follows '-'): an index range, not a scan.
	if err := s.pool.QueryRow(ctx, `SELECT min(id), max(id) FROM articles WHERE slug >= $1 AND slug < $2`,
		fmt.Sprintf("seed-%s-", tag), fmt.Sprintf("seed-%s.", tag)).Scan(&lo, &hi); err != nil {
		return fmt.Errorf("seed lexicon range: %w", err)
	}
	if lo == nil {
		return nil
	}
	p, err := NewSearchLexicon(s.pool, queries).FoldRange(ctx, *lo, *hi, o.Now.Add(time.Second), min(runtime.NumCPU(), 8))
	if err != nil {
		return fmt.Errorf("seed lexicon: %w", err)
	}
	progress("lexicon", p.Articles, p.Articles)
	return nil
}
