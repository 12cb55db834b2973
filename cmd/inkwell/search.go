package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// searchCommand runs `inkwell search reindex`: every published article's search document again, in the
// configured INKWELL_SEARCH_LANGUAGE, a batch of ids per statement (so the server keeps serving
// and editing meanwhile; an article edited during the run is indexed as edited).
func searchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	subs := []subcommand{{"reindex", "", "Rebuild every published article's search document, in INKWELL_SEARCH_LANGUAGE, a batch at a time."}}
	sub, args, err := pickSubcommand("search", subs, args, stdout)
	if err != nil {
		return err
	}
	cfg, log, _, err := parseConfig(specOf("search", subs, sub, []string{"database-url", "search-language", "log-level", "log-format"}), args, stdout, stderr)
	if err != nil {
		return err
	}
	// One batch can take longer than a request's statement timeout on a slow disk.
	pool, cleanup, err := ioc.OpenPgPool(cfg, "postgres pool", 2, ioc.WithoutStatementTimeout, log)
	if err != nil {
		return err
	}
	defer cleanup()
	lang, err := search.CheckLanguage(ctx, pool, repository.NewQuerier(), cfg.Search.Language)
	if err != nil {
		return err
	}
	repo := search.NewReindexer(pool, repository.NewQuerier(), lang, log)
	start := time.Now()
	last := time.Now()
	var scanned, reindexed int64
	err = repo.Reindex(ctx, func(s, r int64) {
		scanned, reindexed = s, r
		if time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(stdout, "search reindex: %d articles scanned, %d reindexed (%v)\n", s, r, time.Since(start).Round(time.Millisecond))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "search reindex: done, %d articles scanned, %d published articles reindexed in %s, in %v\n",
		scanned, reindexed, lang, time.Since(start).Round(time.Millisecond))
	return nil
}
