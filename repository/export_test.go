package repository

import (
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
