package moderation

import "context"

// NoticePublisher learns, after COMMIT, which users a notice was written for, so their live
// notification streams read it at once (#33; cache.NotificationHub publishes it on Redis). A
// notice that was a duplicate (written before) is announced too: the stream finds nothing new.
type NoticePublisher interface {
	Notified(ctx context.Context, userIDs []int64)
}
