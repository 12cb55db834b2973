package events_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

func TestDecodeReadEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	good := domain.ReadEvent{ID: "0123456789abcdef0123456789abcdef", ArticleID: 42, UserID: 7, At: at}

	t.Run("accepts what the publisher writes", func(t *testing.T) {
		t.Parallel()
		for _, ev := range []domain.ReadEvent{good, {ID: "x", ArticleID: 1, UserID: 0, At: at}} {
			got, ok := events.DecodeReadEvent(values(ev))
			if !ok || got != ev {
				t.Errorf("DecodeReadEvent(%v) = %+v, %v; want %+v, true", values(ev), got, ok, ev)
			}
		}
	})

	// with returns the good entry with field k set to v (or removed when v is nil).
	with := func(k string, v any) map[string]any {
		m := maps.Clone(values(good))
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	malformed := map[string]map[string]any{
		"no fields":            {},
		"nil map":              nil,
		"no id":                with("id", nil),
		"empty id":             with("id", ""),
		"no article":           with("article", nil),
		"article not a number": with("article", "forty-two"),
		"article zero":         with("article", "0"),
		"article negative":     with("article", "-3"),
		"article overflows":    with("article", "99999999999999999999"),
		"article not a string": with("article", 42),
		"no user":              with("user", nil),
		"user empty":           with("user", ""),
		"user negative":        with("user", "-1"),
		"user not a number":    with("user", "bob"),
		"no at":                with("at", nil),
		"at not a number":      with("at", "yesterday"),
		"at a float":           with("at", "1.5"),
	}
	for name, vals := range malformed {
		t.Run("rejects "+name, func(t *testing.T) {
			t.Parallel()
			if got, ok := events.DecodeReadEvent(vals); ok {
				t.Errorf("DecodeReadEvent(%v) = %+v, true; want rejected", vals, got)
			}
		})
	}
}

// TestDecodeReadEntry_ThisAndThePreviousVersion: during a rolling upgrade the read stream holds
// entries written by both releases; this release's consumers read both (and a later release's,
// which keeps these fields), and refuse a version they cannot vouch for.
func TestDecodeReadEntry_ThisAndThePreviousVersion(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	single := domain.ReadEvent{ID: "0123456789abcdef0123456789abcdef", ArticleID: 42, UserID: 7, At: at}
	batch := []domain.ReadEvent{{ID: "b1", ArticleID: 12, Count: 5}}
	// What v0.1.0 (2cc64c0) writes: the Publisher's single reads and the aggregator's batches, no "v".
	v0Single := values(single)
	v0Batch := map[string]any{"id": "b1", "counts": "12:5"}
	with := func(m map[string]any, kv ...string) map[string]any {
		m = maps.Clone(m)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	readable := map[string]struct {
		values map[string]any
		want   []domain.ReadEvent
	}{
		"a single read of version 0 (v0.1.0)": {v0Single, []domain.ReadEvent{single}},
		"a batch of version 0 (v0.1.0)":       {v0Batch, batch},
		"a single read of version 1":          {with(v0Single, "v", "1"), []domain.ReadEvent{single}},
		"a batch of version 1":                {with(v0Batch, "v", "1"), batch},
		"a later version with a new field":    {with(v0Single, "v", "2", "device", "phone"), []domain.ReadEvent{single}},
	}
	for name, c := range readable {
		t.Run("reads "+name, func(t *testing.T) {
			t.Parallel()
			got, ok := events.DecodeReadEntry(c.values, nil)
			if !ok || !slices.Equal(got, c.want) {
				t.Fatalf("DecodeReadEntry(%v) = %+v, %v; want %+v", c.values, got, ok, c.want)
			}
		})
	}
	unreadable := map[string]map[string]any{
		"a single read whose version is no number": with(v0Single, "v", "one"),
		"a batch whose version is no number":       with(v0Batch, "v", "1.0"),
		"a negative version":                       with(v0Single, "v", "-1"),
	}
	for name, vals := range unreadable {
		t.Run("refuses "+name, func(t *testing.T) {
			t.Parallel()
			if got, ok := events.DecodeReadEntry(vals, nil); ok {
				t.Fatalf("DecodeReadEntry(%v) = %+v, true; want refused", vals, got)
			}
		})
	}
}
