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
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

var outboxSubcommands = []subcommand{
	{"list", "", "List outbox events, newest first."},
	{"retry", "ID", "Make a dead outbox event pending again with fresh attempts."},
	{"discard", "ID", "Delete a dead outbox event."},
}

// outbox is `inkwell outbox list|retry|discard`: what an operator needs of the outbox's dead
// events (and a look at the others).
func outbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := pickSubcommand("outbox", outboxSubcommands, args, stdout)
	if err != nil {
		return err
	}
	sp := specOf("outbox", outboxSubcommands, sub, dbSettings)
	var status string
	var limit int
	cfg, log, rest, err := parseConfig(sp, args, stdout, stderr, func(fs *flag.FlagSet) {
		if sub == "list" {
			fs.StringVar(&status, "status", "", "only this status: pending, published, applied or dead")
			fs.IntVar(&limit, "limit", 50, "at most this many events (1..1000)")
		}
	})
	if err != nil {
		return err
	}
	if status != "" && !domain.OutboxStatus(status).Valid() {
		return usagef(sp.name, "--status %q: want pending, published, applied or dead", status)
	}
	if sub == "list" && (limit < 1 || limit > 1000) {
		return usagef(sp.name, "--limit %d: want 1..1000", limit)
	}
	var id int64
	if len(rest) == 1 {
		if id, err = strconv.ParseInt(rest[0], 10, 64); err != nil || id <= 0 {
			return usagef(sp.name, "outbox event id %q is not a positive number", rest[0])
		}
	}
	pool, cleanup, err := ioc.NewPgPool(cfg, nil, log) // a one-off command: no spans
	if err != nil {
		return err
	}
	defer cleanup()
	o := durable.NewOutbox(pg.SessionPool{Pool: pool}, repository.NewQuerier())
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
		if err := o.Retry(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "outbox event %d is pending again\n", id)
		return nil
	default: // discard
		if err := o.Discard(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "outbox event %d discarded\n", id)
		return nil
	}
}
