package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestParsePublishAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		raw  string
		want time.Time
		msg  string
	}{
		{name: "an hour ahead", raw: "2030-01-02T16:04:05Z", want: now.Add(time.Hour)},
		{name: "offset is converted to UTC", raw: "2030-01-02T17:04:05+01:00", want: now.Add(time.Hour)},
		{name: "nanoseconds are truncated to microseconds", raw: "2030-01-02T16:04:05.123456789Z",
			want: now.Add(time.Hour + 123456*time.Microsecond)},
		{name: "exactly a year ahead", raw: now.Add(domain.MaxScheduleAhead).Format(time.RFC3339), want: now.Add(domain.MaxScheduleAhead)},
		{name: "a year and a second", raw: now.Add(domain.MaxScheduleAhead + time.Second).Format(time.RFC3339), msg: "is too far ahead (at most one year)"},
		{name: "now", raw: "2030-01-02T15:04:05Z", msg: "must be in the future"},
		{name: "the past", raw: "2020-01-02T15:04:05Z", msg: "must be in the future"},
		{name: "malformed", raw: "tomorrow", msg: "must be an RFC 3339 time, like 2030-01-02T15:04:05Z"},
		{name: "no zone", raw: "2030-01-02T16:04:05", msg: "must be an RFC 3339 time, like 2030-01-02T15:04:05Z"},
		{name: "blank", raw: " ", msg: "can't be blank"},
		{name: "NUL", raw: "2030-01-02T16:04:05Z\x00", msg: "must not contain NUL characters"},
		{name: "invalid UTF-8", raw: "2030-01-02T16:04:05Z\xff", msg: "is not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParsePublishAt(tc.raw, now)
			if tc.msg == "" {
				if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
					t.Fatalf("ParsePublishAt(%q) = %v, %v; want %v", tc.raw, got, err, tc.want)
				}
				return
			}
			var v *domain.ValidationError
			if !errors.As(err, &v) || len(v.Fields["publishAt"]) != 1 || v.Fields["publishAt"][0] != tc.msg {
				t.Fatalf("ParsePublishAt(%q) error = %v; want publishAt %q", tc.raw, err, tc.msg)
			}
		})
	}
}
