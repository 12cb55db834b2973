package durable

import "context"

// ReapInBatches is Reap with a batch size of the test's choosing.
func (j *JobQueue) ReapInBatches(ctx context.Context, batch int) (int, error) {
	return j.reapInBatches(ctx, batch)
}
