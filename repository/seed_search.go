package repository

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// seedSearchBatch is how many ids one statement of the seed's indexing covers.
const seedSearchBatch = 10_000

// seedSearch gives this run's articles (slugs seed-<tag>-…, a contiguous range of ids, as one
// COPY inserts them) their search documents, in o.SearchLanguage (english when empty): COPY
// cannot compute them, so batched UPDATEs by id range follow it, a few at once (the work is
// PostgreSQL's CPU, the statements are independent). Only published rows without a document
// are touched, so a row another writer put in the range keeps its own.
func (s *Seeder) seedSearch(ctx context.Context, o SeedOptions, tag string, progress func(string, int, int)) error {
	lang := o.SearchLanguage
	if lang == "" {
		lang = "english"
	}
	prefix := fmt.Sprintf("seed-%s-", tag)
	var lo, hi *int64
	// The slug key's range of this run's prefix ('.' follows '-'): an index range, not a scan.
	if err := s.pool.QueryRow(ctx, `SELECT min(id), max(id) FROM articles WHERE slug >= $1 AND slug < $2`,
		prefix, fmt.Sprintf("seed-%s.", tag)).Scan(&lo, &hi); err != nil {
		return fmt.Errorf("seed search range: %w", err)
	}
	if lo == nil {
		return nil
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		done int
	)
	total := int(*hi - *lo + 1)
	slots := make(chan struct{}, min(runtime.NumCPU(), 8))
	for from := *lo; from <= *hi; from += seedSearchBatch {
		to := min(from+seedSearchBatch-1, *hi)
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			_, err := s.pool.Exec(ctx, `
				UPDATE articles
				SET search_vector = inkwell_search_document($1::text::regconfig, title, description, body)
				WHERE id BETWEEN $2 AND $3 AND status = 'published' AND search_vector IS NULL`, lang, from, to)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("seed search documents %d..%d: %w", from, to, err))
				return
			}
			done += int(to - from + 1)
			progress("search", done, total)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
