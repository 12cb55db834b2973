package inkwell

import (
	"context"
	"fmt"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/uploads"
	"github.com/inkwell-dev/inkwell/service"
)

// RetentionStore is the retention job's store: the core's statements, and the rule
// domain.RetentionUploadObjects, which deletes from the media store the objects whose last upload
// went more than the rule's age ago and that no upload uses now (uploads.Store.SweepOrphans).
type RetentionStore struct {
	*repository.RetentionStore
	uploads *uploads.Store
	media   service.MediaStore
}

var _ job.RetentionStore = (*RetentionStore)(nil)

// NewRetentionStore returns the retention job's store.
func NewRetentionStore(core *repository.RetentionStore, up *uploads.Store, media service.MediaStore) *RetentionStore {
	return &RetentionStore{RetentionStore: core, uploads: up, media: media}
}

// Prune runs one batch of rule.
func (s *RetentionStore) Prune(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error) {
	if rule.Name != domain.RetentionUploadObjects {
		return s.RetentionStore.Prune(ctx, rule, limit)
	}
	n, err := s.uploads.SweepOrphans(ctx, ruleAge(rule), limit, s.media.Delete)
	return int64(n), err
}

// CountPrunable counts, up to limit, what rule would delete now.
func (s *RetentionStore) CountPrunable(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error) {
	if rule.Name != domain.RetentionUploadObjects {
		return s.RetentionStore.CountPrunable(ctx, rule, limit)
	}
	return s.uploads.CountOrphans(ctx, ruleAge(rule), limit)
}

func ruleAge(r domain.RetentionRule) time.Duration { return max(r.MaxAge, time.Second) }

// Knows reports whether name is a rule this store can run.
func (s *RetentionStore) Knows(name string) bool {
	return name == domain.RetentionUploadObjects || s.RetentionStore.Knows(name)
}

// unavailableMedia stands in for a media store that could not be opened: deleting fails, so the
// orphans stay for a later run.
type unavailableMedia struct{}

func (unavailableMedia) Put(context.Context, string, string, []byte) error {
	return fmt.Errorf("%w: the media store is not open", domain.ErrUnavailable)
}

func (unavailableMedia) Delete(context.Context, string) error {
	return fmt.Errorf("%w: the media store is not open", domain.ErrUnavailable)
}
