package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
)

func init() {
	usersCommands = append(usersCommands,
		usersCommand{
			subcommand: subcommand{"collisions", "", "List the groups of accounts whose emails were one address under the email rule before migration 00025, or are one mailbox now. Changes nothing."},
			run:        usersCollisions,
		},
		usersCommand{
			subcommand: subcommand{"recheck", "", "Recompute now the canonical emails still waiting for it (the server does so at start and every 5 minutes)."},
			run:        usersRecheck,
		})
}

// openUserEmails opens what `inkwell users collisions|recheck` need after the email rule changed
// from NFKC and case folding to the mailbox (migration 00025): PostgreSQL only.
func openUserEmails(sp spec, args []string, stdout, stderr io.Writer) (*repository.UserEmails, func(), error) {
	sp.settings = dbSettings
	cfg, log, _, err := parseConfig(sp, args, stdout, stderr)
	if err != nil {
		return nil, nil, err
	}
	pool, cleanup, err := ioc.NewPgPool(cfg, nil, log) // a one-off command: no spans
	if err != nil {
		return nil, nil, err
	}
	return repository.OpenUserEmails(pool, log), cleanup, nil
}

// usersRecheck is `inkwell users recheck`.
func usersRecheck(ctx context.Context, sp spec, args []string, stdout, stderr io.Writer) error {
	emails, cleanup, err := openUserEmails(sp, args, stdout, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	changed, duplicates, err := emails.RecheckEmails(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "users recheck: %d canonical emails recomputed, %d of them marked duplicate (see 'inkwell users collisions'), in %v\n",
		changed, duplicates, time.Since(start).Round(time.Millisecond))
	return nil
}

// usersCollisions is `inkwell users collisions`.
func usersCollisions(ctx context.Context, sp spec, args []string, stdout, stderr io.Writer) error {
	emails, cleanup, err := openUserEmails(sp, args, stdout, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	groups, pending, err := emails.EmailCollisions(ctx)
	if err != nil {
		return err
	}
	printCollisions(stdout, groups)
	if pending > 0 {
		fmt.Fprintf(stdout, "%d accounts still wait for the email recheck (PENDING): run 'inkwell users recheck', or wait for a server to, then list again\n", pending)
	}
	return nil
}

// printCollisions writes one row per account, grouped, and a summary line.
func printCollisions(w io.Writer, groups []repository.EmailCollision) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tRULE\tONE ADDRESS AS\tID\tUSERNAME\tEMAIL\tVERIFIED\tCREATED\tSIGNS IN BY EMAIL")
	before := 0
	for i, g := range groups {
		if g.Rule == repository.CollidedBefore {
			before++
		}
		for _, a := range g.Accounts {
			signs := yesNo(a.SignsInByEmail)
			if !a.SignsInByEmail {
				signs = "no (duplicate)"
			}
			if a.Pending {
				signs += ", PENDING"
			}
			fmt.Fprintf(tw, "%d\t%s\t%q\t%d\t%s\t%q\t%s\t%s\t%s\n", i+1, g.Rule, g.Address, a.ID, a.Username, a.Email,
				yesNo(a.Verified), a.CreatedAt.UTC().Format(time.RFC3339), signs)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "users collisions: %d groups, %d of accounts the old rule made one address (different mailboxes now), %d of accounts one mailbox now; nothing was changed\n",
		len(groups), before, len(groups)-before)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
