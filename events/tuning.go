package events

import "time"

// Tuning constants of the read-event pipeline and the stream consumers (settings until 0.1.0;
// tests that need another value set it on the config they build).
const (
	// ReadBuffer holds about a second of reads at a busy instance's rate: Redis may stall that
	// long before reads are dropped (a read is a counter, not a must-have).
	ReadBuffer = 10000
	// ReadPublishBatch and ReadPublishFlush: one pipelined round trip carries up to 256 reads,
	// and a partial batch waits at most 20 ms, so counters move within a frame of a page view.
	ReadPublishBatch = 256
	ReadPublishFlush = 20 * time.Millisecond
	// ReadTallyFlush is what a crash can lose of anonymous reads (a tenth of a second), and
	// ReadTallyMax sends early under a burst so the tally's map stays small.
	ReadTallyFlush = 100 * time.Millisecond
	ReadTallyMax   = 10000

	// ConsumerBatch and ConsumerWait: a consumer applies up to 1000 entries in one transaction,
	// and waits at most 200 ms for them, which bounds how stale a counter is.
	ConsumerBatch = 1000
	ConsumerWait  = 200 * time.Millisecond
	// ConsumerClaimIdle: an entry unacknowledged this long belongs to a consumer that died (a
	// batch takes well under a second), so another reclaims it, looking every ConsumerClaimEvery.
	ConsumerClaimIdle  = 30 * time.Second
	ConsumerClaimEvery = 10 * time.Second
	// ConsumerMaxDeliveries: an entry that failed ten times fails on its own content; it is tried
	// once alone and then moved to <stream>:dead rather than retried for ever.
	ConsumerMaxDeliveries = 10

	// StreamMaxLen keeps about 100000 entries per stream (minutes of traffic, a few MB), trimmed
	// every StreamTrimEvery, never past what a group has not read or acknowledged.
	StreamMaxLen    = 100000
	StreamTrimEvery = 10 * time.Second
)
