package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
)

// outbox is `inkwell outbox list|retry|discard`: what an operator needs of the outbox's dead
// events (and a look at the others).
func outbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	var status string
	var limit int
	cfg, log, rest, err := parseConfig("outbox "+sub, args, stdout, stderr, func(fs *flag.FlagSet) {
		if sub == "list" {
			fs.StringVar(&status, "status", "", "only this status: pending, published, applied or dead")
			fs.IntVar(&limit, "limit", 50, "at most this many events (1..1000)")
		}
	})
	if err != nil {
		return err
	}
	if status != "" && !domain.OutboxStatus(status).Valid() {
		return fmt.Errorf("--status %q: want pending, published, applied or dead", status)
	}
	if sub == "list" && (limit < 1 || limit > 1000) {
		return fmt.Errorf("--limit %d: want 1..1000", limit)
	}
	pool, cleanup, err := ioc.NewPgPool(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	o := repository.OpenOutbox(pool)
	idArg := func() (int64, error) {
		if len(rest) != 1 {
			return 0, fmt.Errorf("usage: inkwell outbox %s ID", sub)
		}
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil || id <= 0 {
			return 0, fmt.Errorf("outbox event id %q is not a positive number", rest[0])
		}
		return id, nil
	}
	switch sub {
	case "list":
		list, err := o.List(ctx, domain.OutboxStatus(status), limit)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOPIC\tAGGREGATE\tSTATUS\tATTEMPTS\tCREATED\tNEXT ATTEMPT\tLAST ERROR")
		for _, e := range list {
			next := "-"
			if e.Status == domain.OutboxPending {
				next = e.NextAttemptAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", e.ID, e.Topic, e.AggregateID, e.Status, e.Attempts,
				e.CreatedAt.Format(time.RFC3339), next, e.LastError)
		}
		return tw.Flush()
	case "retry":
		id, err := idArg()
		if err != nil {
			return err
		}
		if err := o.Retry(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "outbox event %d is pending again\n", id)
		return nil
	case "discard":
		id, err := idArg()
		if err != nil {
			return err
		}
		if err := o.Discard(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "outbox event %d discarded\n", id)
		return nil
	default:
		return fmt.Errorf("usage: inkwell outbox list|retry|discard (got %q)", sub)
	}
}
