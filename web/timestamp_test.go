package web

import (
	"testing"
	"time"
)

// The hand-written formatter agrees with time.Format for the layout, across the edges of each
// field, time zones and years the fast path does not take.
func TestAppendTimestamp_MatchesFormat(t *testing.T) {
	t.Parallel()
	east := time.FixedZone("east", 5*3600+30*60)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 30, 3, 42, 4, 902_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 3, 1, 1, 2, 3, 4_000_000, east), // the previous day in UTC
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		want := tm.UTC().Format(timestampLayout)
		if got := string(appendTimestamp(nil, tm)); got != want {
			t.Errorf("appendTimestamp(%v) = %q, want %q", tm, got, want)
		}
	}
}
