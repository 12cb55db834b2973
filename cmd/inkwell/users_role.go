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
		subcommand: subcommand{"role", "USERNAME user|moderator|admin", "Give an account a role; this is how the first admin is made " +
			"(README, \"Moderation\"). The change is logged in the moderation log and holds on every instance before the command returns."},
		run: usersRole,
	})
}

// usersRoleSettings are what `inkwell users role` reads: PostgreSQL, and the shared Redis through
// which every server forgets the account's cached entry.
var usersRoleSettings = []string{"database-url", "redis-url", "redis-mode", "redis-prefix", "cache-*", "log-level", "log-format"}

// usersRole is `inkwell users role USERNAME ROLE`.
func usersRole(ctx context.Context, sp spec, args []string, stdout, stderr io.Writer) error {
	sp.settings = usersRoleSettings
	cfg, log, rest, err := parseConfig(sp, args, stdout, stderr)
	if err != nil {
		return err
	}
	if _, ok := domain.ParseRole(rest[1]); !ok {
		return usagef("users role", "role %q does not exist: %s", rest[1], domain.ErrRoleUnknown)
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	u, err := app.Moderation.SetRoleByOperator(ctx, rest[0], rest[1])
	if errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("no user named %q", rest[0])
	}
	if err != nil {
		return fmt.Errorf("set the role of %q: %w", rest[0], err)
	}
	fmt.Fprintf(stdout, "%s is now %s\n", u.Username, u.Role)
	return nil
}
