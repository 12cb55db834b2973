package service

import (
	"sync/atomic"

	"github.com/inkwell-dev/inkwell/domain"
)

// ModerationStats counts moderation actions by kind, for the metrics
// (inkwell_moderation_actions_total{action}). A use case calls Acted after its unit of work
// committed, so a rolled-back action is never counted.
type ModerationStats struct {
	acted map[domain.ModerationAction]*atomic.Int64
}

// NewModerationStats returns counters for every action of domain.ModerationActions.
func NewModerationStats() *ModerationStats {
	s := &ModerationStats{acted: make(map[domain.ModerationAction]*atomic.Int64, len(domain.ModerationActions))}
	for _, a := range domain.ModerationActions {
		s.acted[a] = new(atomic.Int64)
	}
	return s
}

// Acted counts one committed action. An action outside domain.ModerationActions is not counted
// (the metric's label set is closed); a nil ModerationStats counts nothing.
func (s *ModerationStats) Acted(a domain.ModerationAction) {
	if s == nil {
		return
	}
	if c, ok := s.acted[a]; ok {
		c.Add(1)
	}
}

// Counter is the counter of action a (nil outside domain.ModerationActions), for the metrics.
func (s *ModerationStats) Counter(a domain.ModerationAction) *atomic.Int64 { return s.acted[a] }
