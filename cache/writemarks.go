package cache

import (
	"context"
	_ "embed"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/write_mark.lua
var writeMarkSrc string

var writeMark = redis.NewScript(writeMarkSrc)

// WriteMarks keeps, per user, the primary's WAL position after their last write (read your
// writes with read replicas: repository/pg.ReadRouter). A mark is needed only while some replica
// in the rotation may not have replayed it, which is at most the rotation's lag bound, so it
// lives that long plus a margin (ttl), in Redis for the other instances and in process for this
// one (its own writes are then honoured even when Redis fails). A position read from Redis is
// never older than the one in process: both keep the larger.
type WriteMarks struct {
	rdb redis.UniversalClient
	ks  Keyspace
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	local map[int64]localMark
}

type localMark struct {
	position int64
	until    time.Time
}

// NewWriteMarks keeps marks for ttl (the replicas' lag bound plus a margin).
func NewWriteMarks(rdb redis.UniversalClient, ks Keyspace, ttl time.Duration, now func() time.Time) *WriteMarks {
	return &WriteMarks{rdb: rdb, ks: ks, ttl: ttl, now: now, local: make(map[int64]localMark)}
}

func (m *WriteMarks) key(userID int64) string {
	return m.ks.Key("wrote", strconv.FormatInt(userID, 10))
}

// Mark records that userID's reads need position from now on.
func (m *WriteMarks) Mark(ctx context.Context, userID, position int64) error {
	now := m.now()
	m.mu.Lock()
	m.local[userID] = localMark{position: max(position, m.liveLocked(m.local[userID], now)), until: now.Add(m.ttl)}
	if len(m.local) > 4096 { // sweep what expired, amortized over the marks
		for id, lm := range m.local {
			if now.After(lm.until) {
				delete(m.local, id)
			}
		}
	}
	m.mu.Unlock()
	return writeMark.Run(ctx, m.rdb, []string{m.key(userID)}, strconv.FormatInt(position, 10), m.ttl.Milliseconds()).Err()
}

func (m *WriteMarks) liveLocked(cur localMark, now time.Time) int64 {
	if now.After(cur.until) {
		return 0
	}
	return cur.position
}

// Position is userID's mark, 0 when none is kept; an error when Redis cannot say (the caller
// must then assume the worst).
func (m *WriteMarks) Position(ctx context.Context, userID int64) (int64, error) {
	m.mu.Lock()
	local := m.liveLocked(m.local[userID], m.now())
	m.mu.Unlock()
	v, err := m.rdb.Get(ctx, m.key(userID)).Result()
	if errors.Is(err, redis.Nil) {
		return local, nil
	}
	if err != nil {
		return 0, err
	}
	pos, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	return max(pos, local), nil
}
