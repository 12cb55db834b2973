package domain

import (
	"testing"
	"time"
)

func TestRetentionRuleString(t *testing.T) {
	for _, tc := range []struct {
		rule RetentionRule
		want string
	}{
		{RetentionRule{Name: RetentionJobsDone, MaxAge: 7 * 24 * time.Hour}, "finished over 7d ago"},
		{RetentionRule{Name: RetentionLoginCodes, MaxAge: time.Hour}, "expired over 1h ago"},
		{RetentionRule{Name: RetentionInbox, MaxAge: 90 * time.Minute}, "received over 1h30m ago"},
		{RetentionRule{Name: "outbox", MaxAge: 36 * time.Hour}, "made over 36h ago"},
		{RetentionRule{Name: RetentionReadingHistory, Newest: 1000, Since: time.Hour}, "all but the newest 1000 per user"},
		{RetentionRule{Name: RetentionNotifications}, "off"},
	} {
		if got := tc.rule.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.rule, got, tc.want)
		}
		if tc.rule.Off() != (tc.want == "off") {
			t.Errorf("%+v: Off() = %v", tc.rule, tc.rule.Off())
		}
	}
}
