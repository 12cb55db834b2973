package events_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestMain silences go-redis's own logger (it reports every failed dial while a test's Redis is
// down on purpose) unless INKWELL_TEST_LOG=1.
func TestMain(m *testing.M) {
	if os.Getenv("INKWELL_TEST_LOG") != "1" {
		redis.SetLogger(quiet{})
	}
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
