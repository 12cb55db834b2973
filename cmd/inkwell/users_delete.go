package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/domain"
)

func init() {
	usersCommands = append(usersCommands, usersCommand{
		subcommand: subcommand{"delete", "USERNAME", "Delete an account and everything that is its own (docs/OPERATIONS.md, \"Deleting an account\"); " +
			"its sessions are refused on every instance and its cache entries dropped before the command returns."},
		run: usersDelete,
	})
}

// usersDeleteSettings are what `inkwell users delete` reads: it runs as one more instance of the
// fleet (PostgreSQL, and the Redis the servers share, whose entries of the account it drops and
// through which it tells every server to forget them); the access-token lifetime sets how long
// the sessions' revocation marks live.
var usersDeleteSettings = []string{"database-url", "redis-url", "redis-mode", "redis-prefix", "cache-*", "jwt-lifetime", "log-level", "log-format"}

// usersDelete is `inkwell users delete USERNAME`.
func usersDelete(ctx context.Context, sp spec, args []string, stdout, stderr io.Writer) error {
	sp.settings = usersDeleteSettings
	cfg, log, rest, err := parseConfig(sp, args, stdout, stderr)
	if err != nil {
		return err
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	gone, err := app.Accounts.Delete(ctx, rest[0])
	if errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("no user named %q", rest[0])
	}
	if err != nil {
		return fmt.Errorf("delete user %q: %w", rest[0], err)
	}
	fmt.Fprintf(stdout, "deleted user %s (id %d): %d articles, %d comments, %d likes, %d folders, %d followers, %d follows; "+
		"their sessions and API keys no longer work on any instance\n",
		gone.Username, gone.UserID, gone.Articles, gone.Comments, gone.Likes, gone.Folders, gone.Followers, gone.Following)
	return nil
}
