package repository

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

// QueuedLikes is how many likes of the item wait behind its running batch (tests order their
// requests with it).
func (r *InteractiveRepository) QueuedLikes(biz domain.Biz, id int64) int {
	r.likes.mu.Lock()
	defer r.likes.mu.Unlock()
	if next := r.likes.next[likeItem{biz, id}]; next != nil {
		return len(next.items)
	}
	return 0
}

// ReapInBatches is Reap with a batch size of the test's choosing.
func (j *JobQueue) ReapInBatches(ctx context.Context, batch int) (int, error) {
	return j.reapInBatches(ctx, batch)
}
