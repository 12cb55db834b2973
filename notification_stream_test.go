package inkwell

import "testing"

func TestStreamsPerInstanceIsHalfTheFileLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit uint64
		want  int
	}{
		{0, 100}, {150, 100}, {1024, 512}, {20000, 10000}, {1 << 20, 100_000}, {^uint64(0), 100_000},
	} {
		if got := streamsPerInstance(c.limit); got != c.want {
			t.Errorf("streamsPerInstance(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}
