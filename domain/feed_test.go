package domain_test

import (
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestFeedName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"jake": true, "go": true, "Ünïcödé": true, strings.Repeat("x", 40): true,
		"": false, strings.Repeat("x", 41): false, "a\x00b": false, "\xff\xfe": false, "tab\there": false, "del\x7f": false,
	} {
		if got := domain.FeedName(name, 40); got != want {
			t.Errorf("FeedName(%q) = %v, want %v", name, got, want)
		}
	}
}
