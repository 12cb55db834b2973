package main

import (
	"context"
	"io"
)

// usersCommand is one `inkwell users` subcommand. Each lives in a file of its own
// (users_<name>.go) and adds itself to usersCommands from that file's init, so adding one never
// touches this file or another subcommand's.
type usersCommand struct {
	subcommand
	run func(ctx context.Context, sp spec, args []string, stdout, stderr io.Writer) error
}

var usersCommands []usersCommand

// users is `inkwell users SUBCOMMAND`: account administration.
func users(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	subs := make([]subcommand, len(usersCommands))
	for i, c := range usersCommands {
		subs[i] = c.subcommand
	}
	sub, args, err := pickSubcommand("users", subs, args, stdout)
	if err != nil {
		return err
	}
	for _, c := range usersCommands {
		if c.name == sub {
			return c.run(ctx, specOf("users", subs, sub, nil), args, stdout, stderr)
		}
	}
	panic("unknown users subcommand " + sub) // pickSubcommand returned it
}
