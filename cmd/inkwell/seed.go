package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cmd/inkwell/seed"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
)

// seedPassword is every seeded user's password.
const seedPassword = "password123"

// localPort is ":PORT" of a listen address, for a URL on localhost.
func localPort(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "" {
		return ":" + port
	}
	return ":8080"
}

// seedCommand is `inkwell seed`: the seeder (package seed) behind flags.
func seedCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts := seed.Options{}
	sp := spec{name: "seed", summary: "Bulk-load demo users, published articles and like counts (COPY; seeding again adds more).",
		settings: []string{"database-url", "argon2-*", "search-language", "log-level", "log-format"}}
	cfg, log, _, err := parseConfig(sp, args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&opts.Articles, "articles", 10_000, "published articles to load")
		fs.IntVar(&opts.Users, "users", 100, "users to load (authors of the articles); their password is \"password123\"")
		fs.IntVar(&opts.Days, "days", 14, "articles are published at random times over this many past days")
		fs.StringVar(&opts.Reader.Username, "reader", "", "also add a reader with this username (email USERNAME@example.com, password \"password123\") who follows and favorites seeded data")
		fs.IntVar(&opts.Reader.Follows, "reader-follows", 0, "seeded authors the --reader follows, at random (≤ --users)")
		fs.IntVar(&opts.Reader.Favorites, "reader-favorites", 0, "seeded articles the --reader favorites, at random (≤ --articles)")
		fs.BoolVar(&opts.NoSearch, "no-search", false, "load the articles without search documents and lexicon words (a server's backfill and lexicon pass add them later); for measuring what indexing costs a seed")
	})
	if err != nil {
		return err
	}
	if opts.Articles < 0 || opts.Users < 1 || opts.Days < 1 {
		return usagef(sp.name, "--articles must be ≥ 0, --users and --days ≥ 1")
	}
	if r := opts.Reader; r.Follows < 0 || r.Follows > opts.Users || r.Favorites < 0 || r.Favorites > opts.Articles {
		return usagef(sp.name, "--reader-follows must be 0..--users and --reader-favorites 0..--articles")
	}
	if r := opts.Reader; r.Username == "" && (r.Follows > 0 || r.Favorites > 0) {
		return usagef(sp.name, "--reader-follows and --reader-favorites need --reader USERNAME")
	}
	hasher, err := auth.NewHasher(inkwell.NewHasherConfig(cfg.Auth))
	if err != nil {
		return err
	}
	if opts.PasswordHash, err = hasher.Hash(seedPassword); err != nil {
		return err
	}
	// Bulk inserts of a large seed run longer than a request's statement timeout.
	pool, cleanup, err := ioc.OpenPgPool(cfg, "postgres pool", 20, ioc.WithoutStatementTimeout, log)
	if err != nil {
		return err
	}
	defer cleanup()
	opts.Now, opts.SearchLanguage = time.Now(), cfg.Search.Language
	start := time.Now()
	err = seed.New(pool, repository.NewQuerier()).Seed(ctx, opts, func(what string, done, total int) {
		fmt.Fprintf(stdout, "seed: %-8s %9d / %d  (%v)\n", what, done, total, time.Since(start).Round(time.Millisecond))
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seed: done in %v\n", time.Since(start).Round(time.Millisecond))
	first, last := seed.Username(opts, 0), seed.Username(opts, opts.Users-1)
	fmt.Fprintf(stdout, "\nCreated %d users, %s … %s, each with the email USERNAME@example.com and the password %s.\n", opts.Users, first, last, seedPassword)
	signIn := first
	if r := opts.Reader; r.Username != "" {
		signIn = r.Username
		fmt.Fprintf(stdout, "Created the reader %s, who follows %d authors and favorites %d articles.\n", r.Username, r.Follows, r.Favorites)
	}
	fmt.Fprintf(stdout, "Sign in as %s:\n  email:    %s@example.com\n  password: %s\n", signIn, signIn, seedPassword)
	fmt.Fprintf(stdout, "  curl -s -X POST http://localhost%s/api/users/login -H 'Content-Type: application/json' \\\n    -d '{\"user\":{\"email\":\"%s@example.com\",\"password\":\"%s\"}}'\n",
		localPort(cfg.Server.Addr), signIn, seedPassword)
	return nil
}
