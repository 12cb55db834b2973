// Command inkwell is the content-platform backend: one binary that serves the HTTP JSON API and
// runs the background jobs. Run `inkwell --help` for the commands and settings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/migrations"
	"github.com/inkwell-dev/inkwell/repository"
)

const usage = `inkwell — content-platform backend (RealWorld API superset)

Usage:
  inkwell [serve] [flags]         serve the HTTP API and run background jobs (default)
  inkwell migrate up [flags]      apply pending database migrations
  inkwell migrate status [flags]  list migrations and whether each is applied
  inkwell rank [flags]            run one hot-list ranking pass now (takes the same lock as the job)
  inkwell seed [flags]            bulk-load demo users, published articles and like counts
  inkwell search reindex [flags]  rebuild every published article's search document (after changing INKWELL_SEARCH_LANGUAGE)
  inkwell jobs list [flags]       list background jobs, dead ones first (--queue, --status, --limit)
  inkwell jobs retry ID           make a dead job ready again with fresh attempts
  inkwell jobs discard ID         delete a dead or done job
  inkwell outbox list [flags]     list outbox events, newest first (--status pending|published|applied|dead, --limit)
  inkwell outbox retry ID         make a dead outbox event pending again with fresh attempts
  inkwell outbox discard ID       delete a dead outbox event
  inkwell prune [--dry-run]       run one retention pass now, or print what it would delete

Every flag can also be set through the environment variable named in its description.
Run 'inkwell serve --help' for the list of settings.
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "inkwell:", err)
			os.Exit(1)
		}
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, stdout, stderr)
	case "rank":
		return rank(ctx, args, stdout, stderr)
	case "seed":
		return seed(ctx, args, stdout, stderr)
	case "jobs":
		return jobs(ctx, args, stdout, stderr)
	case "outbox":
		return outbox(ctx, args, stdout, stderr)
	case "prune":
		return prune(ctx, args, stdout, stderr)
	case "search":
		return search(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// parseConfig parses the flags of one command into a validated Config and a logger. extra, when
// given, registers the command's own flags.
func parseConfig(name string, args []string, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (*ioc.Config, *slog.Logger, []string, error) {
	fs := flag.NewFlagSet("inkwell "+name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfg := ioc.Flags(fs)
	for _, f := range extra {
		f(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: inkwell %s [flags]\n\nSettings (flag, then environment variable, then default):\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, nil, err
	}
	log, err := ioc.NewLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cfg.Validate(log); err != nil {
		return nil, nil, nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, log, fs.Args(), nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, _, err := parseConfig("serve", args, stdout, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.MigrateOnStart {
		if err := migrateUp(ctx, cfg, log); err != nil {
			return err
		}
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	return app.Run(ctx)
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	cfg, log, _, err := parseConfig("migrate "+sub, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "up":
		return migrateUp(ctx, cfg, log)
	case "status":
		r, err := migrations.Open(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer r.Close()
		st, err := r.Status(ctx)
		if err != nil {
			return err
		}
		migrations.PrintStatus(stdout, st)
		return nil
	default:
		return fmt.Errorf("usage: inkwell migrate up|status (got %q)", sub)
	}
}

func migrateUp(ctx context.Context, cfg *ioc.Config, log *slog.Logger) error {
	r, err := migrations.Open(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	n, err := r.Up(ctx, log)
	if err != nil {
		return err
	}
	log.Info("database is up to date", "applied", n)
	return nil
}

func rank(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, _, err := parseConfig("rank", args, stdout, stderr)
	if err != nil {
		return err
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	outcome, err := app.Rank.RunOnce(ctx)
	if err != nil {
		return fmt.Errorf("ranking pass: %w", err)
	}
	fmt.Fprintf(stdout, "ranking pass: %s in %v, %d articles in the hot list\n", outcome,
		time.Since(start).Round(time.Millisecond), app.Rank.Metrics.LastEntries.Load())
	return nil
}

func seed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts := repository.SeedOptions{}
	cfg, log, _, err := parseConfig("seed", args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&opts.Articles, "articles", 10_000, "published articles to load")
		fs.IntVar(&opts.Users, "users", 100, "users to load (authors of the articles); their password is \"password123\"")
		fs.IntVar(&opts.Days, "days", 14, "articles are published at random times over this many past days")
		fs.StringVar(&opts.Reader.Username, "reader", "", "also add a reader with this username (email USERNAME@example.com, password \"password123\") who follows and favorites seeded data")
		fs.IntVar(&opts.Reader.Follows, "reader-follows", 0, "seeded authors the --reader follows, at random (≤ --users)")
		fs.IntVar(&opts.Reader.Favorites, "reader-favorites", 0, "seeded articles the --reader favorites, at random (≤ --articles)")
	})
	if err != nil {
		return err
	}
	if opts.Articles < 0 || opts.Users < 1 || opts.Days < 1 {
		return errors.New("seed: --articles must be ≥ 0, --users and --days ≥ 1")
	}
	if r := opts.Reader; r.Follows < 0 || r.Follows > opts.Users || r.Favorites < 0 || r.Favorites > opts.Articles {
		return errors.New("seed: --reader-follows must be 0..--users and --reader-favorites 0..--articles")
	}
	if r := opts.Reader; r.Username == "" && (r.Follows > 0 || r.Favorites > 0) {
		return errors.New("seed: --reader-follows and --reader-favorites need --reader USERNAME")
	}
	hasher, err := auth.NewHasher(inkwell.NewHasherConfig(cfg))
	if err != nil {
		return err
	}
	if opts.PasswordHash, err = hasher.Hash("password123"); err != nil {
		return err
	}
	// Bulk inserts of a large seed run longer than a request's statement timeout.
	pool, cleanup, err := ioc.OpenPgPool(cfg, "postgres pool", 20, ioc.WithoutStatementTimeout, log)
	if err != nil {
		return err
	}
	defer cleanup()
	opts.Now, opts.SearchLanguage = time.Now(), cfg.SearchLanguage
	start := time.Now()
	err = repository.NewSeeder(pool).Seed(ctx, opts, func(what string, done, total int) {
		fmt.Fprintf(stdout, "seed: %-8s %9d / %d  (%v)\n", what, done, total, time.Since(start).Round(time.Millisecond))
	})
	if err != nil {
		return err
	}
	if r := opts.Reader; r.Username != "" {
		fmt.Fprintf(stdout, "seed: reader %s follows %d authors and favorites %d articles (email %s@example.com, password password123)\n",
			r.Username, r.Follows, r.Favorites, r.Username)
	}
	fmt.Fprintf(stdout, "seed: done in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func jobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	var queue, status string
	var limit int
	cfg, log, rest, err := parseConfig("jobs "+sub, args, stdout, stderr, func(fs *flag.FlagSet) {
		if sub == "list" {
			fs.StringVar(&queue, "queue", "", "only this queue")
			fs.StringVar(&status, "status", "", "only this status: ready, running, done or dead")
			fs.IntVar(&limit, "limit", 50, "at most this many jobs")
		}
	})
	if err != nil {
		return err
	}
	pool, cleanup, err := ioc.NewPgPool(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	q := repository.NewJobQueue(repository.QueuePool{Pool: pool})
	idArg := func() (int64, error) {
		if len(rest) != 1 {
			return 0, fmt.Errorf("usage: inkwell jobs %s ID", sub)
		}
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil || id <= 0 {
			return 0, fmt.Errorf("job id %q is not a positive number", rest[0])
		}
		return id, nil
	}
	switch sub {
	case "list":
		list, err := q.List(ctx, queue, domain.JobStatus(status), limit)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tQUEUE\tKIND\tSTATUS\tATTEMPTS\tUPDATED\tLAST ERROR")
		for _, j := range list {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Queue, j.Kind, j.Status, j.Attempts, j.MaxAttempts,
				j.UpdatedAt.Format(time.RFC3339), j.LastError)
		}
		return tw.Flush()
	case "retry":
		id, err := idArg()
		if err != nil {
			return err
		}
		if err := q.Retry(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d is ready again\n", id)
		return nil
	case "discard":
		id, err := idArg()
		if err != nil {
			return err
		}
		if err := q.Discard(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d discarded\n", id)
		return nil
	default:
		return fmt.Errorf("usage: inkwell jobs list|retry|discard (got %q)", sub)
	}
}
