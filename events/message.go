package events

import "github.com/redis/go-redis/v9"

// Message is one stream entry as a Handler sees it. It is this package's own type, not the Redis
// client's, so the handlers (in job/) depend on events alone and the client stays inside this
// adapter.
type Message struct {
	ID     string         // the stream entry's id ("<milliseconds>-<sequence>")
	Values map[string]any // the entry's fields, as the writer set them (strings once read back)
}

// messagesOf converts the entries the Redis client read.
func messagesOf(xs []redis.XMessage) []Message {
	if len(xs) == 0 {
		return nil
	}
	out := make([]Message, len(xs))
	for i, x := range xs {
		out[i] = Message{ID: x.ID, Values: x.Values}
	}
	return out
}
