package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/inkwell-dev/inkwell/ioc"
)

// usageError is a mistake on the command line (an unknown command or flag, a missing or bad
// argument): main prints it as one line and exits 2, as shell tools do, without the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// usagef is a usageError of command cmd ("migrate up") that points at its help.
func usagef(cmd, format string, a ...any) error {
	return usageError{fmt.Sprintf(format, a...) + fmt.Sprintf("; see 'inkwell %s --help'", cmd)}
}

// exitCode prints run's error on stderr and returns the process's exit status: 0 for success
// and for --help, 2 for a usage error, 1 for any other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "inkwell:", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// spec describes one command for parseConfig and its --help.
type spec struct {
	name    string // "migrate up"
	args    string // its positional arguments in the usage line ("ID"); none when ""
	summary string
	// settings are the server settings (flag names; a trailing * matches a prefix) its --help
	// lists; nil lists every one (serve). Every command accepts every setting.
	settings []string
}

// nargs is how many positional arguments the command takes.
func (s spec) nargs() int { return len(strings.Fields(s.args)) }

// dbSettings are the settings of a command that only talks to PostgreSQL.
var dbSettings = []string{"database-url", "log-level", "log-format"}

// parseConfig parses one command's flags into a validated Config, a logger and its positional
// arguments. extra, when given, registers the command's own flags. Every server setting is a
// flag of every command (an environment variable is read first, a flag overrides it), but only
// serve's --help lists them all. Commands other than serve log text at warn by default (their
// human output is on stdout, their logs on stderr); INKWELL_LOG_LEVEL, INKWELL_LOG_FORMAT and the
// flags still choose.
func parseConfig(sp spec, args []string, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (*ioc.Config, *slog.Logger, []string, error) {
	fs := flag.NewFlagSet("inkwell "+sp.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a parse error comes back as one line (usageError); help is printed below
	fs.Usage = func() {}
	cfg := ioc.Flags(fs)
	settings := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { settings[f.Name] = true })
	if sp.name != "serve" {
		quietByDefault(fs, "log-level", "INKWELL_LOG_LEVEL", "warn")
		quietByDefault(fs, "log-format", "INKWELL_LOG_FORMAT", "text")
	}
	for _, f := range extra {
		f(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, sp, fs, cfg, settings)
			return nil, nil, nil, flag.ErrHelp
		}
		return nil, nil, nil, usagef(sp.name, "%v", err)
	}
	rest := fs.Args()
	switch n := sp.nargs(); {
	case len(rest) < n:
		return nil, nil, nil, usagef(sp.name, "inkwell %s needs %s", sp.name, sp.args)
	case len(rest) > n:
		return nil, nil, nil, usagef(sp.name, "unexpected argument %q", rest[n])
	}
	log, err := ioc.NewLogger(stderr, cfg.Telemetry.LogLevel, cfg.Telemetry.LogFormat)
	if err != nil {
		return nil, nil, nil, usagef(sp.name, "%v", err)
	}
	cfg.WarnRemoved(log)
	// Only the server signs tokens: the other commands do not warn about the dev secret.
	validateLog := log
	if sp.name != "serve" {
		validateLog = nil
	}
	if err := cfg.Validate(validateLog); err != nil {
		return nil, nil, nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, log, rest, nil
}

// quietByDefault makes def the default of a log flag unless its environment variable is set.
func quietByDefault(fs *flag.FlagSet, name, envName, def string) {
	if _, ok := os.LookupEnv(envName); ok {
		return
	}
	f := fs.Lookup(name)
	_ = f.Value.Set(def)
	f.DefValue = def
}

// printHelp writes a command's --help: its usage line, its own flags and the settings it reads,
// by group.
func printHelp(w io.Writer, sp spec, fs *flag.FlagSet, cfg *ioc.Config, settings map[string]bool) {
	usage := "inkwell " + sp.name + " [flags]"
	if sp.args != "" {
		usage += " " + sp.args
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", usage, sp.summary)
	own := subset(fs, func(f *flag.Flag) bool { return !settings[f.Name] })
	// settings holds the removed settings' flags too (registered to explain themselves): never listed.
	if hasFlags(own) {
		fmt.Fprint(w, "\nFlags:\n")
		own.SetOutput(w)
		own.PrintDefaults()
	}
	fmt.Fprint(w, "\nSettings (flag, else the environment variable named, else the default):\n")
	printSettings(w, fs, cfg, func(name string) bool { return matches(sp.settings, name) })
	if sp.settings != nil {
		fmt.Fprint(w, "\nEvery other server setting is accepted too: 'inkwell help settings' lists them.\n")
	}
}

// printSettings lists the settings keep accepts, group by group, with their defaults as they
// stand now (after the environment).
func printSettings(w io.Writer, fs *flag.FlagSet, cfg *ioc.Config, keep func(name string) bool) {
	for _, group := range ioc.Groups {
		listed := subset(fs, func(f *flag.Flag) bool {
			for _, s := range cfg.Settings() {
				if s.Name == f.Name {
					return s.Group == group && keep(f.Name)
				}
			}
			return false
		})
		if hasFlags(listed) {
			fmt.Fprintf(w, "\n %s:\n", group)
			listed.SetOutput(w)
			listed.PrintDefaults()
		}
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// subset is a flag set of fs's flags that keep accepts, with their defaults as they stand now
// (after the environment).
func subset(fs *flag.FlagSet, keep func(*flag.Flag) bool) *flag.FlagSet {
	out := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if keep(f) {
			out.Var(f.Value, f.Name, f.Usage)
			out.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	return out
}

// matches reports whether name is one of patterns (nil: all; "rank-*": a prefix).
func matches(patterns []string, name string) bool {
	if patterns == nil {
		return true
	}
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// subcommand is one subcommand of a group (migrate, jobs, outbox, search).
type subcommand struct{ name, args, summary string }

// pickSubcommand takes the subcommand off args: an unknown or missing one is a usage error, and
// --help lists the group's subcommands.
func pickSubcommand(group string, subs []subcommand, args []string, stdout io.Writer) (string, []string, error) {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintf(stdout, "Usage: inkwell %s SUBCOMMAND [flags]\n\nSubcommands:\n", group)
			for _, s := range subs {
				fmt.Fprintf(stdout, "  %-24s %s\n", strings.TrimSpace(s.name+" "+s.args), s.summary)
			}
			fmt.Fprintf(stdout, "\nRun 'inkwell %s SUBCOMMAND --help' for its flags.\n", group)
			return "", nil, flag.ErrHelp
		}
		return "", nil, usagef(group, "inkwell %s needs a subcommand: %s", group, strings.Join(names, ", "))
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.name, args[1:], nil
		}
	}
	return "", nil, usagef(group, "unknown subcommand %q of inkwell %s (want %s)", args[0], group, strings.Join(names, ", "))
}

// specOf is the spec of subcommand sub of group, for parseConfig.
func specOf(group string, subs []subcommand, sub string, settings []string) spec {
	for _, s := range subs {
		if s.name == sub {
			return spec{name: group + " " + sub, args: s.args, summary: s.summary, settings: settings}
		}
	}
	panic("unknown subcommand " + sub) // pickSubcommand returned it
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" || arg == "--h" }
