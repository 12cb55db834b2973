package cache_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance (issue #13, "fills that cannot resurrect old data"): a load that read the old row
// before another instance's write committed, and whose fill reaches Redis after that write's
// invalidation, loses to the invalidation — the entry is never the old row. The interleaving is
// forced with a gate: the load has read the old row and waits; the writer commits and
// invalidates; then the load goes on and tries to fill.
func TestReadThrough_FillLosesToALaterInvalidation(t *testing.T) {
	t.Parallel()
	oldRow, newRow := article{ID: 7, Title: "old"}, article{ID: 7, Title: "new"}

	cases := []struct {
		name string
		// race runs the load on reader and, once it has read oldRow, the write through writer.
		race func(t *testing.T, reader, writer *cache.ReadThrough[article], key string, loadOld *loader)
	}{
		{"a read's fill", func(t *testing.T, reader, writer *cache.ReadThrough[article], key string, loadOld *loader) {
			done := make(chan article, 1)
			go func() {
				v, _ := reader.Get(context.Background(), key, loadOld.load)
				done <- v
			}()
			testenv.Recv(t, loadOld.gate.Entered(), "the load to have read the old row")
			if err := writer.Delete(t.Context(), key); err != nil { // the write committed; its invalidation
				t.Fatal(err)
			}
			loadOld.gate.Open()
			if v := testenv.Recv(t, done, "the racing read"); v != oldRow {
				t.Fatalf("the racing read served %+v, want the %+v it loaded", v, oldRow)
			}
		}},
		{"a publish warm-up (Refresh) whose load read before a later write", func(t *testing.T, reader, writer *cache.ReadThrough[article], key string, loadOld *loader) {
			done := make(chan error, 1)
			go func() { done <- reader.Refresh(context.Background(), key, loadOld.load) }()
			testenv.Recv(t, loadOld.gate.Entered(), "the warm-up to have read the old row")
			if err := writer.Delete(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			loadOld.gate.Open()
			if err := testenv.Recv(t, done, "the warm-up"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rds := testenv.NewRedis(t)
			ks := cache.Keyspace(rds.Prefix)
			// Two instances: each its own client and cache, one Redis, one keyspace.
			reader := cache.NewReadThrough[article](testenv.NewRedisClient(t, nil), "article", testPolicy, testenv.Logger(t))
			writer := cache.NewReadThrough[article](testenv.NewRedisClient(t, nil), "article", testPolicy, testenv.Logger(t))
			key := ks.Key("article", "7")
			loadOld := &loader{val: oldRow, gate: testenv.NewGate(t)}

			tc.race(t, reader, writer, key, loadOld)

			loadNew := &loader{val: newRow}
			for name, c := range map[string]*cache.ReadThrough[article]{"the reader": reader, "the writer": writer} {
				if v, err := c.Get(t.Context(), key, loadNew.load); err != nil || v != newRow {
					t.Fatalf("%s then reads %+v (%v), want %+v: the old row came back", name, v, err, newRow)
				}
			}
			if n := loadNew.calls.Load(); n != 1 {
				t.Errorf("the next reads loaded %d times, want 1 (a miss, then the fresh fill)", n)
			}
			if n := reader.Stats.FillsSkipped.Load(); n != 1 {
				t.Errorf("FillsSkipped = %d, want 1", n)
			}
		})
	}
}
