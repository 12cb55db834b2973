// Command inkwell is the content-platform backend: one binary that serves the HTTP JSON API and
// runs the background jobs. Run `inkwell --help` for the commands and settings.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/migrations"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
)

const usage = `inkwell — content-platform backend (RealWorld API superset)

Usage:
  inkwell [serve] [flags]           serve the HTTP API and run background jobs (default)
  inkwell migrate up                apply pending database migrations
  inkwell migrate down              roll back the most recent migration
  inkwell migrate to VERSION        migrate up or down to VERSION (0: roll back everything)
  inkwell migrate status            list migrations and whether each is applied
  inkwell rank                      run one hot-list ranking pass now (takes the same lock as the job)
  inkwell seed [flags]              bulk-load demo users, published articles and like counts
  inkwell search reindex            rebuild every published article's search document (after changing INKWELL_SEARCH_LANGUAGE)
  inkwell jobs list [flags]         list background jobs, dead ones first (--queue, --status, --limit)
  inkwell jobs retry ID             make a dead job ready again with fresh attempts
  inkwell jobs discard ID           delete a dead or done job
  inkwell outbox list [flags]       list outbox events, newest first (--status, --limit)
  inkwell outbox retry ID           make a dead outbox event pending again with fresh attempts
  inkwell outbox discard ID         delete a dead outbox event
  inkwell prune [--dry-run]         run one retention pass now, or print what it would delete
  inkwell users collisions          list accounts whose emails were one address before the mailbox rule, or are one now
  inkwell users recheck             recompute canonical emails still waiting for the mailbox rule (the server does it too)
  inkwell users delete USERNAME     delete an account and all that is its own; its sessions end on every instance
  inkwell help settings             list every server setting (flag, environment variable, default)
  inkwell --version                 print the version, commit and build time

Run 'inkwell COMMAND --help' for a command's flags. Settings come from environment variables
(or flags of the same name); 'inkwell serve --help' lists them.
`

func main() {
	os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// run runs the command line args. A usageError means the command line was wrong (exit 2);
// flag.ErrHelp that help was printed (exit 0).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	} else if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprint(stdout, versionInfo())
		return nil
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, stdout, stderr)
	case "rank":
		return rank(ctx, args, stdout, stderr)
	case "seed":
		return seedCommand(ctx, args, stdout, stderr)
	case "jobs":
		return jobs(ctx, args, stdout, stderr)
	case "outbox":
		return outbox(ctx, args, stdout, stderr)
	case "prune":
		return prune(ctx, args, stdout, stderr)
	case "search":
		return searchCommand(ctx, args, stdout, stderr)
	case "users":
		return users(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprint(stdout, versionInfo())
		return nil
	case "help":
		return help(args, stdout)
	default:
		return usageError{fmt.Sprintf("unknown command %q; see 'inkwell --help'", cmd)}
	}
}

// help is `inkwell help [settings|COMMAND]`.
func help(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
		return nil
	case args[0] == "settings":
		fs := flag.NewFlagSet("inkwell", flag.ContinueOnError)
		cfg := ioc.Flags(fs)
		fmt.Fprint(stdout, "Server settings (flag, else the environment variable named, else the default):\n")
		printSettings(stdout, fs, cfg, func(string) bool { return true })
		return nil
	default:
		return usageError{fmt.Sprintf("unknown help topic %q: run 'inkwell COMMAND --help', or 'inkwell help settings'", args[0])}
	}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, _, err := parseConfig(spec{name: "serve", summary: "Serve the HTTP API and run the background jobs, until SIGINT or SIGTERM."}, args, stdout, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	skipDrain, stopWatching := secondSignal()
	defer stopWatching()

	if cfg.Server.MigrateOnStart {
		if err := migrateOnStart(ctx, cfg, log); err != nil {
			return err
		}
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	app.SkipDrain = skipDrain
	return app.Run(ctx)
}

// secondSignal returns a channel closed by the second SIGINT or SIGTERM: the first starts the
// graceful shutdown (its drain delay first), a second one tells the server not to wait out the
// delay (an impatient Ctrl-C in development). It is registered beside signal.NotifyContext's,
// so both see the first signal.
func secondSignal() (second <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	closed, done := make(chan struct{}), make(chan struct{})
	go func() {
		for range 2 {
			select {
			case <-sigs:
			case <-done:
				return
			}
		}
		close(closed)
	}()
	return closed, func() { signal.Stop(sigs); close(done) }
}

var migrateSubcommands = []subcommand{
	{"up", "", "Apply every pending migration."},
	{"down", "", "Roll back the most recently applied migration (one step)."},
	{"to", "VERSION", "Apply or roll back migrations until the database is at VERSION (0 rolls back everything)."},
	{"status", "", "List every migration and whether it is applied."},
}

// migrate is `inkwell migrate up|down|to|status`. It prints what it changed on stdout.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := pickSubcommand("migrate", migrateSubcommands, args, stdout)
	if err != nil {
		return err
	}
	sp := specOf("migrate", migrateSubcommands, sub, dbSettings)
	cfg, _, rest, err := parseConfig(sp, args, stdout, stderr)
	if err != nil {
		return err
	}
	var target int64
	if sub == "to" {
		if target, err = strconv.ParseInt(rest[0], 10, 64); err != nil || target < 0 {
			return usagef(sp.name, "VERSION %q is not a migration version (a number, 0 for none)", rest[0])
		}
	}
	r, err := migrations.Open(cfg.Database.SessionURL())
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var changes []migrations.Change
	switch sub {
	case "status":
		st, err := r.Status(ctx)
		if err != nil {
			return err
		}
		migrations.PrintStatus(stdout, st)
		return nil
	case "up":
		changes, err = r.UpAll(ctx)
	case "down":
		changes, err = r.Down(ctx)
	case "to":
		changes, err = migrateTo(ctx, r, target)
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, "migrate:", c)
	}
	if err != nil {
		return err
	}
	v, err := r.Version(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrate: %d changed; the database is at version %d (latest %d)\n", len(changes), v, migrations.LatestVersion())
	return nil
}

// migrateTo moves the database to version target, up or down.
func migrateTo(ctx context.Context, r *migrations.Runner, target int64) ([]migrations.Change, error) {
	st, err := r.Status(ctx)
	if err != nil {
		return nil, err
	}
	known := target == 0
	for _, s := range st {
		known = known || s.Version == target
	}
	if !known {
		return nil, usageError{fmt.Sprintf("no migration has version %d; 'inkwell migrate status' lists them", target)}
	}
	current, err := r.Version(ctx)
	if err != nil {
		return nil, err
	}
	if target < current {
		return r.DownTo(ctx, target)
	}
	return r.UpTo(ctx, target)
}

// migrateOnStart applies pending migrations before serving (INKWELL_MIGRATE_ON_START), logging
// each.
func migrateOnStart(ctx context.Context, cfg *ioc.Config, log *slog.Logger) error {
	r, err := migrations.Open(cfg.Database.SessionURL())
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
	cfg, log, _, err := parseConfig(spec{name: "rank", summary: "Run one hot-list ranking pass now, under the lock the scheduled job takes.",
		settings: []string{"database-url", "redis-url", "redis-mode", "redis-prefix", "rank-*", "log-level", "log-format"}}, args, stdout, stderr)
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

var jobsSubcommands = []subcommand{
	{"list", "", "List background jobs, dead ones first."},
	{"retry", "ID", "Make a dead job ready again with fresh attempts."},
	{"discard", "ID", "Delete a dead or done job."},
}

// jobs is `inkwell jobs list|retry|discard`.
func jobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := pickSubcommand("jobs", jobsSubcommands, args, stdout)
	if err != nil {
		return err
	}
	sp := specOf("jobs", jobsSubcommands, sub, dbSettings)
	var queue, status string
	var limit int
	cfg, log, rest, err := parseConfig(sp, args, stdout, stderr, func(fs *flag.FlagSet) {
		if sub == "list" {
			fs.StringVar(&queue, "queue", "", "only this queue")
			fs.StringVar(&status, "status", "", "only this status: "+jobStatuses())
			fs.IntVar(&limit, "limit", 50, "at most this many jobs")
		}
	})
	if err != nil {
		return err
	}
	if status != "" && !domain.JobStatus(status).Valid() {
		return usagef(sp.name, "--status %q: want %s", status, jobStatuses())
	}
	if sub == "list" && limit < 1 {
		return usagef(sp.name, "--limit %d: want at least 1", limit)
	}
	var id int64
	if len(rest) == 1 {
		if id, err = strconv.ParseInt(rest[0], 10, 64); err != nil || id <= 0 {
			return usagef(sp.name, "job id %q is not a positive number", rest[0])
		}
	}
	pool, cleanup, err := ioc.NewPgPool(cfg, nil, log) // a one-off command: no spans
	if err != nil {
		return err
	}
	defer cleanup()
	q := durable.NewJobQueue(durable.QueuePool{Pool: pool}, repository.NewQuerier())
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
		if err := q.Retry(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d is ready again\n", id)
		return nil
	default: // discard
		if err := q.Discard(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d discarded\n", id)
		return nil
	}
}

// jobStatuses lists the job statuses for help and errors: "ready, running, done or dead".
func jobStatuses() string {
	names := make([]string, len(domain.JobStatuses))
	for i, s := range domain.JobStatuses {
		names[i] = string(s)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
