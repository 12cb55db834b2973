package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
)

// prune runs one retention pass now (`inkwell prune`), under the lock the scheduled job takes, or
// with --dry-run counts what a pass would delete. It needs PostgreSQL only.
func prune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var dryRun bool
	var limit int
	cfg, log, _, err := parseConfig("prune", args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "delete nothing: count, per table, the rows a pass would delete now (up to --count-limit)")
		fs.IntVar(&limit, "count-limit", 100_000, "with --dry-run: stop counting a table's rows here (the count reads at most this many index entries)")
	})
	if err != nil {
		return err
	}
	if limit < 1 {
		return errors.New("prune: --count-limit must be at least 1")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, cleanup, err := ioc.NewPgPool(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	pruner := inkwell.NewPruner(cfg, pool, log)

	start := time.Now()
	var rep reportRows
	if dryRun {
		r, err := pruner.DryRun(ctx, limit)
		for _, res := range r.Results {
			count := fmt.Sprint(res.Rows)
			if res.Capped {
				count = fmt.Sprintf("≥%d (capped)", res.Rows)
			}
			rep.add(res.Rule, count, res.Statements, res.Err)
		}
		rep.print(stdout, "WOULD DELETE", false)
		fmt.Fprintf(stdout, "dry run: nothing deleted; a count stops at --count-limit=%d (%v)\n", limit, time.Since(start).Round(time.Millisecond))
		return err
	}
	r, err := pruner.RunOnce(ctx)
	if r.Outcome == inkwell.OutcomeNotLeader {
		return errors.New("prune: another instance holds the retention lock (its pass is running); nothing deleted")
	}
	for _, res := range r.Results {
		rep.add(res.Rule, fmt.Sprint(res.Rows), res.Statements, res.Err)
	}
	rep.print(stdout, "DELETED", true)
	fmt.Fprintf(stdout, "pruned %d rows in %v\n", r.Deleted(), time.Since(start).Round(time.Millisecond))
	return err
}

// reportRows is the table `inkwell prune` prints: one row per retention rule.
type reportRows []reportRow

type reportRow struct{ table, keeps, rows, statements, err string }

func (rows *reportRows) add(rule domain.RetentionRule, count string, statements int, err error) {
	row := reportRow{table: rule.Name, keeps: rule.String(), rows: "-", statements: "-"}
	if !rule.Off() {
		row.rows, row.statements = count, fmt.Sprint(statements)
	}
	if err != nil {
		row.err = err.Error()
	}
	*rows = append(*rows, row)
}

func (rows reportRows) print(w io.Writer, countHeader string, statements bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if statements {
		fmt.Fprintf(tw, "TABLE\tDELETES\t%s\tSTATEMENTS\tERROR\n", countHeader)
	} else {
		fmt.Fprintf(tw, "TABLE\tDELETES\t%s\tERROR\n", countHeader)
	}
	for _, r := range rows {
		if statements {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.table, r.keeps, r.rows, r.statements, r.err)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.table, r.keeps, r.rows, r.err)
		}
	}
	_ = tw.Flush()
}
