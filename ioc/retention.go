package ioc

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RetentionOff is the INKWELL_RETENTION_SCHEDULE that turns the retention job off.
const RetentionOff = "off"

// ParseRetention reads a retention age: a Go duration ("36h"), whole days ("7d"), or "0" / "off",
// which keep rows for ever (0).
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || strings.EqualFold(s, RetentionOff) {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("%q: want a duration (36h), days (7d) or off", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration (36h), days (7d) or off", s)
	}
	return d, nil
}

// formatRetention writes what ParseRetention reads: whole days as "7d", 0 as "off".
func formatRetention(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return RetentionOff
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	default:
		return d.String()
	}
}

// retentionAge is a flag.Value of a retention age.
type retentionAge struct{ p *time.Duration }

func (v retentionAge) String() string {
	if v.p == nil {
		return ""
	}
	return formatRetention(*v.p)
}

func (v retentionAge) Set(s string) error {
	d, err := ParseRetention(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// retentionCount is a flag.Value of a row count that "off" (or 0) turns off.
type retentionCount struct{ p *int }

func (v retentionCount) String() string {
	if v.p == nil {
		return ""
	}
	if *v.p <= 0 {
		return RetentionOff
	}
	return strconv.Itoa(*v.p)
}

func (v retentionCount) Set(s string) error {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, RetentionOff) {
		*v.p = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: want a number of rows or off", s)
	}
	*v.p = n
	return nil
}
