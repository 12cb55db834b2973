// Package events is the Redis Streams adapter: an asynchronous, bounded, batching publisher of
// events, and a consumer-group runner that reads batches, hands them to a handler, acknowledges
// them, and reclaims what crashed consumers left pending. It is a top-level adapter folder of its
// own because it is neither a cache nor a repository: it moves events between the request path and
// the background consumers in job/.
package events
