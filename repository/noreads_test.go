package repository_test

import "github.com/inkwell-dev/inkwell/domain"

// noReads is a ReadRecorder that discards read events (these tests count queries, not reads).
type noReads struct{}

func (noReads) Record(domain.ReadEvent) {}

// noPreloads is an ArticlePreloader that preloads nothing (these tests count queries on the
// request path).
type noPreloads struct{}

func (noPreloads) Preload(string) {}
