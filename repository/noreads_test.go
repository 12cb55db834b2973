package repository_test

import "github.com/inkwell-dev/inkwell/domain"

// noReads is a ReadRecorder that discards read events (these tests count queries, not reads).
type noReads struct{}

func (noReads) Record(domain.ReadEvent) {}
