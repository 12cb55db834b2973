package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Trimmer keeps a stream near MaxLen entries without ever removing an entry that some consumer
// group has not acknowledged (or not even read yet). XADD MAXLEN cannot promise that, so the
// trimmer computes the cut itself: the entry at about position len-MaxLen, or the oldest entry any
// group still needs, whichever is older, and trims with XTRIM MINID ~ (without Redis's default
// cap of 100 macro nodes per call, so one pass removes the whole excess).
type Trimmer struct {
	rdb    redis.UniversalClient
	stream string
	groups []string
	maxLen int64
	every  time.Duration
	log    *slog.Logger
}

// NewTrimmer returns a trimmer of stream for the given consumer groups.
func NewTrimmer(rdb redis.UniversalClient, stream string, groups []string, maxLen int64, every time.Duration, log *slog.Logger) *Trimmer {
	return &Trimmer{rdb: rdb, stream: stream, groups: groups, maxLen: maxLen, every: every, log: log}
}

// Stream is the key of the stream this trimmer trims.
func (t *Trimmer) Stream() string { return t.stream }

// Run trims every interval until ctx ends.
func (t *Trimmer) Run(ctx context.Context) error {
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if n, err := t.TrimOnce(ctx); err != nil && ctx.Err() == nil {
				t.log.WarnContext(ctx, "stream trim failed", "stream", t.stream, "err", err)
			} else if n > 0 {
				t.log.DebugContext(ctx, "stream trimmed", "stream", t.stream, "removed", n)
			}
		}
	}
}

// TrimOnce trims once and returns how many entries Redis removed.
func (t *Trimmer) TrimOnce(ctx context.Context) (int64, error) {
	info, err := t.rdb.XInfoStream(ctx, t.stream).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return 0, nil
		}
		return 0, fmt.Errorf("xinfo stream: %w", err)
	}
	if info.Length <= t.maxLen {
		return 0, nil
	}
	cut, err := t.positionalCut(ctx, info)
	if err != nil {
		return 0, err
	}
	safe, err := t.oldestNeeded(ctx)
	if err != nil {
		return 0, err
	}
	if safe == "" {
		return 0, nil // a group is missing: nobody can tell what it still needs
	}
	if lessID(safe, cut) {
		cut = safe
	}
	// Without LIMIT, XTRIM ~ removes at most 100 macro nodes (10,000 entries by default) per call,
	// fewer than a busy stream gains between two trims.
	return t.rdb.XTrimMinIDApprox(ctx, t.stream, cut, redis.XTrimLimitDisabled).Result()
}

// exactCutLimit is the largest excess whose cut is found exactly, by reading the ids of the
// excess entries (XRANGE COUNT excess+1); a larger one is interpolated from the ids' timestamps.
const exactCutLimit = 10_000

// positionalCut returns the id of about the entry at position length-maxLen: the first to keep.
func (t *Trimmer) positionalCut(ctx context.Context, info *redis.XInfoStream) (string, error) {
	excess := info.Length - t.maxLen
	if excess > exactCutLimit {
		cut := interpolatedCut(info.FirstEntry.ID, info.LastGeneratedID, info.Length, t.maxLen)
		if lessID(info.FirstEntry.ID, cut) {
			return cut, nil
		}
		// The ids span too few milliseconds to interpolate (a burst): cut exactly as far as the
		// limit allows now; the next pass goes on.
		excess = exactCutLimit
	}
	msgs, err := t.rdb.XRangeN(ctx, t.stream, "-", "+", excess+1).Result()
	if err != nil {
		return "", fmt.Errorf("xrange: %w", err)
	}
	if len(msgs) == 0 {
		return info.FirstEntry.ID, nil
	}
	return msgs[len(msgs)-1].ID, nil
}

// oldestNeeded returns the smallest entry id any group still needs: its oldest pending entry, or
// the entry after the last one delivered to it.
func (t *Trimmer) oldestNeeded(ctx context.Context) (string, error) {
	groups, err := t.rdb.XInfoGroups(ctx, t.stream).Result()
	if err != nil {
		return "", fmt.Errorf("xinfo groups: %w", err)
	}
	byName := make(map[string]redis.XInfoGroup, len(groups))
	for _, g := range groups {
		byName[g.Name] = g
	}
	oldest := ""
	for _, name := range t.groups {
		g, ok := byName[name]
		if !ok {
			return "", nil
		}
		need := nextID(g.LastDeliveredID)
		if g.Pending > 0 {
			p, err := t.rdb.XPending(ctx, t.stream, name).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return "", fmt.Errorf("xpending %s: %w", name, err)
			}
			if p != nil && p.Count > 0 && lessID(p.Lower, need) {
				need = p.Lower
			}
		}
		if oldest == "" || lessID(need, oldest) {
			oldest = need
		}
	}
	return oldest, nil
}

type streamID struct{ ms, seq uint64 }

func parseID(id string) streamID {
	ms, seq, _ := strings.Cut(id, "-")
	a, _ := strconv.ParseUint(ms, 10, 64)
	b, _ := strconv.ParseUint(seq, 10, 64)
	return streamID{a, b}
}

func (s streamID) String() string { return fmt.Sprintf("%d-%d", s.ms, s.seq) }

func lessID(a, b string) bool {
	x, y := parseID(a), parseID(b)
	return x.ms < y.ms || (x.ms == y.ms && x.seq < y.seq)
}

func nextID(id string) string {
	s := parseID(id)
	s.seq++
	return s.String()
}

// interpolatedCut estimates the id of the entry at position length-maxLen by interpolating the
// millisecond timestamps of the first and last ids. It is approximate by design, like MAXLEN ~, and
// useless when the ids share (nearly) one millisecond: then it returns first.
func interpolatedCut(first, last string, length, maxLen int64) string {
	f, l := parseID(first), parseID(last)
	if l.ms <= f.ms || length <= 0 {
		return first
	}
	excess := uint64(length - maxLen)
	return streamID{ms: f.ms + (l.ms-f.ms)*excess/uint64(length)}.String()
}
