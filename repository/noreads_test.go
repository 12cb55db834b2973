package repository_test

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

// noReads is a ReadRecorder that discards read events (these tests count queries, not reads).
type noReads struct{}

func (noReads) Record(domain.ReadEvent) {}

// noPreloads is an ArticlePreloader that preloads nothing (these tests count queries on the
// request path).
type noPreloads struct{}

func (noPreloads) Preload(string) {}

// noBlocks is a BlockedSets in which nobody blocks anyone (these tests count queries of users
// without blocks, whose lists read no block).
type noBlocks struct{}

func (noBlocks) BlockedBy(context.Context, int64) ([]int64, error) { return nil, nil }
