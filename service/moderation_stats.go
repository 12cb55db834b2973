package service

import (
	"sync/atomic"

	"github.com/inkwell-dev/inkwell/domain"
)

// ModerationStats counts moderation actions by kind since the process started (the metric
// inkwell_moderation_actions_total), each after its unit of work committed.
type ModerationStats struct {
	acted [16]atomic.Int64 // one per domain.ModerationActions entry (fewer than 16)
}

var moderationActionIndex = func() map[domain.ModerationAction]int {
	m := make(map[domain.ModerationAction]int, len(domain.ModerationActions))
	for i, a := range domain.ModerationActions {
		m[a] = i
	}
	return m
}()

// NewModerationStats returns zeroed counters.
func NewModerationStats() *ModerationStats { return &ModerationStats{} }

// Acted counts one action.
func (s *ModerationStats) Acted(a domain.ModerationAction) {
	if i, ok := moderationActionIndex[a]; ok {
		s.acted[i].Add(1)
	}
}

// Actions returns the count of every action.
func (s *ModerationStats) Actions() map[domain.ModerationAction]int64 {
	out := make(map[domain.ModerationAction]int64, len(domain.ModerationActions))
	for i, a := range domain.ModerationActions {
		out[a] = s.acted[i].Load()
	}
	return out
}
