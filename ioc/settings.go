package ioc

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Setting is one declared setting: the only place its flag name, environment variable, default,
// help text and checks are written. Flags, Validate, --help, the README test and the .env.example
// test all read these declarations.
type Setting struct {
	Group   string // one of Groups
	Name    string // the flag, without dashes
	Env     string // the environment variable
	Help    string
	Default string // the default as --help and the README show it
	Value   flag.Value
	check   func() error // the value's own rule; nil: any parsable value
	// register puts it on a flag set as the flag package's own type, so that --help shows the
	// type and default as for any flag; nil: as Value.
	register func(fs *flag.FlagSet, usage string)
	redact   bool // a URL that may hold a password: --help shows it redacted
}

// Groups are the groups of settings in the order --help, the README and .env.example list them.
var Groups = []string{"server", "database", "redis", "auth", "mail", "search", "jobs", "uploads", "retention", "media", "signin", "webhooks", "telemetry"}

// decls collects the declarations of one Config (see declare); group is the group declared now.
type decls struct {
	list  []*Setting
	group string
}

// envName is a setting's environment variable unless it names its own: INKWELL_ and the flag in
// upper case ("redis-prefix": INKWELL_REDIS_PREFIX).
func envName(flagName string) string {
	return "INKWELL_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// add declares a setting holding v: p is set to def now, and check (when any) judges the value
// after the environment and the flags.
func add[T any](d *decls, p *T, v flag.Value, name string, def T, help string, checks []func(T) error) *Setting {
	*p = def
	s := &Setting{Group: d.group, Name: name, Env: envName(name), Help: help, Default: v.String(), Value: v}
	if len(checks) > 0 {
		s.check = func() error {
			for _, c := range checks {
				if err := c(*p); err != nil {
					return err
				}
			}
			return nil
		}
	}
	d.list = append(d.list, s)
	return s
}

// env names the environment variable of a setting that does not follow envName (DATABASE_URL).
func (s *Setting) env(name string) *Setting { s.Env = name; return s }

// redacted marks a URL setting that may carry a password, which --help must not show.
func (s *Setting) redacted() *Setting { s.redact = true; return s }

func (d *decls) str(p *string, name, def, help string, checks ...func(string) error) *Setting {
	s := add(d, p, value[string]{p, func(s string) (string, error) { return s, nil }, func(s string) string { return s }}, name, def, help, checks)
	s.register = func(fs *flag.FlagSet, usage string) { fs.StringVar(p, name, *p, usage) }
	return s
}

func (d *decls) dur(p *time.Duration, name string, def time.Duration, help string, checks ...func(time.Duration) error) *Setting {
	s := add(d, p, value[time.Duration]{p, time.ParseDuration, time.Duration.String}, name, def, help, checks)
	s.register = func(fs *flag.FlagSet, usage string) { fs.DurationVar(p, name, *p, usage) }
	return s
}

func (d *decls) int(p *int, name string, def int, help string, checks ...func(int) error) *Setting {
	parse := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("%q: not a whole number", s)
		}
		return n, nil
	}
	s := add(d, p, value[int]{p, parse, strconv.Itoa}, name, def, help, checks)
	s.register = func(fs *flag.FlagSet, usage string) { fs.IntVar(p, name, *p, usage) }
	return s
}

func (d *decls) uint(p *uint, name string, def uint, help string, checks ...func(uint) error) *Setting {
	parse := func(s string) (uint, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%q: not a whole number", s)
		}
		return uint(n), nil
	}
	s := add(d, p, value[uint]{p, parse, func(n uint) string { return strconv.FormatUint(uint64(n), 10) }}, name, def, help, checks)
	s.register = func(fs *flag.FlagSet, usage string) { fs.UintVar(p, name, *p, usage) }
	return s
}

func (d *decls) bool(p *bool, name string, help string) *Setting {
	parse := func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, fmt.Errorf("%q: want true or false", s)
		}
		return b, nil
	}
	s := add(d, p, boolValue{value[bool]{p, parse, strconv.FormatBool}}, name, false, help, nil)
	s.register = func(fs *flag.FlagSet, usage string) { fs.BoolVar(p, name, *p, usage) }
	return s
}

// age declares a retention age: a duration, whole days ("7d"), or off (0: for ever).
func (d *decls) age(p *time.Duration, name string, def time.Duration, help string, checks ...func(time.Duration) error) *Setting {
	return add(d, p, retentionAge{p}, name, def, help, checks)
}

// count declares a row count that off (or 0) turns off.
func (d *decls) count(p *int, name string, def int, help string) *Setting {
	return add(d, p, retentionCount{p}, name, def, help, nil)
}

// value is a flag.Value of a T read by parse and written by format.
type value[T any] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
}

func (v value[T]) String() string {
	if v.p == nil {
		return ""
	}
	return v.format(*v.p)
}

func (v value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

// boolValue lets a bool setting be given as a bare flag (-migrate-on-start).
type boolValue struct{ value[bool] }

func (boolValue) IsBoolFlag() bool { return true }

// Checks of one value, used in the declarations. Their errors follow the variable's name.

func atLeast[T cmp.Ordered](least T) func(T) error {
	return func(v T) error {
		if v < least {
			return fmt.Errorf("must be at least %v, not %v", least, v)
		}
		return nil
	}
}

func atMost[T cmp.Ordered](most T) func(T) error {
	return func(v T) error {
		if v > most {
			return fmt.Errorf("must be at most %v, not %v", most, v)
		}
		return nil
	}
}

func positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("must be positive, not %s", d)
	}
	return nil
}

func oneOf(allowed ...string) func(string) error {
	return func(s string) error {
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("must be %s, not %q", strings.Join(allowed, ", "), s)
	}
}

func rate(s string) error { _, _, err := ParseRate(s); return err }

func byteSize(s string) error {
	n, err := ParseByteSize(s)
	if err == nil && n < 1024 {
		return errors.New("must be at least 1KiB")
	}
	return err
}

func uploadQuota(s string) error { _, err := ParseUploadQuota(s); return err }

func notBlank(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// apply sets every declared setting from its environment variable, when set. Values that do not
// parse are returned (Validate reports them with the rest).
func (d *decls) apply() []error {
	var errs []error
	for _, s := range d.list {
		if v, ok := os.LookupEnv(s.Env); ok {
			if err := s.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", s.Env, v, err))
			}
		}
	}
	return errs
}

// checkAll runs every setting's own check.
func (d *decls) checkAll() []error {
	var errs []error
	for _, s := range d.list {
		if s.check != nil {
			if err := s.check(); err != nil {
				errs = append(errs, fmt.Errorf("%s %w", s.Env, err))
			}
		}
	}
	return errs
}

// Settings are the declarations of every setting, in their groups' order, with today's defaults
// (the environment not applied).
func Settings() []*Setting { return declare(&Config{}).list }

// Settings of c: the declarations bound to c's fields, so their Value reads c.
func (c *Config) Settings() []*Setting { return c.decls().list }

// decls declares c's settings without resetting c: the declarations set defaults, so they are
// made on a scratch Config and rebound to c's fields.
func (c *Config) decls() *decls {
	saved := *c
	d := declare(c)
	*c = saved
	return d
}
