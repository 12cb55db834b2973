package cache

import (
	"testing"
	"time"
)

func TestFeedMemo(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Second
	newMemo := func() (*feedMemo, *time.Time, *bool) {
		now, up := time.Unix(1000, 0), true
		m := newFeedMemo(ttl, 0, func() bool { return up }, "p:feed:token:", "p:feed:follows:")
		m.now = func() time.Time { return now }
		return m, &now, &up
	}
	remembered := func(t *testing.T, m *feedMemo, reader int64) bool {
		t.Helper()
		_, _, ok, _ := m.get(reader)
		return ok
	}
	t.Run("remembers until its TTL", func(t *testing.T) {
		t.Parallel()
		m, now, _ := newMemo()
		_, _, _, gen := m.get(1)
		m.put(1, gen, 42, []int64{7, 8})
		if stamp, n, ok, _ := m.get(1); !ok || stamp != 42 || n != 2 {
			t.Fatalf("get = %d, %d, %v; want 42, 2, true", stamp, n, ok)
		}
		*now = now.Add(ttl)
		if remembered(t, m, 1) {
			t.Fatal("served after its TTL")
		}
	})
	t.Run("a stamp computed while something was dropped is not kept", func(t *testing.T) {
		t.Parallel()
		m, _, _ := newMemo()
		_, _, _, gen := m.get(1)
		m.authorChanged(99) // anyone's change: the computation may have read a token it dropped
		m.put(1, gen, 42, []int64{7})
		if remembered(t, m, 1) {
			t.Fatal("kept a stamp computed across a drop")
		}
	})
	t.Run("an author's change drops exactly the readers following them", func(t *testing.T) {
		t.Parallel()
		m, _, _ := newMemo()
		for reader, follows := range map[int64][]int64{1: {7, 8}, 2: {8}, 3: {9}} {
			_, _, _, gen := m.get(reader)
			m.put(reader, gen, reader*10, follows)
		}
		m.authorChanged(8)
		if remembered(t, m, 1) || remembered(t, m, 2) || !remembered(t, m, 3) {
			t.Fatalf("after author 8 changed: readers 1 %v, 2 %v, 3 %v; want false, false, true",
				remembered(t, m, 1), remembered(t, m, 2), remembered(t, m, 3))
		}
		if len(m.byAuthor[7]) != 0 || len(m.byAuthor[9]) != 1 {
			t.Fatalf("index left %v", m.byAuthor)
		}
	})
	t.Run("another instance's drops arrive as keys", func(t *testing.T) {
		t.Parallel()
		m, _, _ := newMemo()
		for reader, follows := range map[int64][]int64{1: {7}, 2: {8}, 3: {9}} {
			_, _, _, gen := m.get(reader)
			m.put(reader, gen, 1, follows)
		}
		m.delete("p:feed:token:7", "p:feed:follows:2", "p:other:9", "p:feed:token:x")
		if remembered(t, m, 1) || remembered(t, m, 2) || !remembered(t, m, 3) {
			t.Fatal("want readers 1 (author 7 changed) and 2 (follows changed) dropped, 3 kept")
		}
		m.flush()
		if remembered(t, m, 3) {
			t.Fatal("a flush kept an entry")
		}
	})
	t.Run("its index stays bounded", func(t *testing.T) {
		t.Parallel()
		m, _, _ := newMemo()
		many := make([]int64, maxMemoPairs/2+1)
		for i := range many {
			many[i] = int64(i)
		}
		for reader := int64(1); reader <= 3; reader++ {
			_, _, _, gen := m.get(reader)
			m.put(reader, gen, reader, many)
			if m.indexed > maxMemoPairs {
				t.Fatalf("after reader %d the index holds %d pairs, more than %d", reader, m.indexed, maxMemoPairs)
			}
		}
		if !remembered(t, m, 3) {
			t.Fatal("the newest reader was not remembered after the memo started over")
		}
		m.followsChanged(3)
		if m.indexed != 0 || len(m.byAuthor) != 0 {
			t.Fatalf("after the last reader went: %d pairs, %d authors indexed; want none", m.indexed, len(m.byAuthor))
		}
	})
	t.Run("not used while the subscription is down", func(t *testing.T) {
		t.Parallel()
		m, _, up := newMemo()
		_, _, _, gen := m.get(1)
		m.put(1, gen, 42, []int64{7})
		*up = false
		if remembered(t, m, 1) {
			t.Fatal("served while the broadcast subscription is down")
		}
	})
}
