package domain_test

import (
	"cmp"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

var topNSeed = flag.Uint64("topn-seed", 0, "seed of TestTopN_MatchesFullSort (0: a new one, logged)")

func TestHotScore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		likes     int64
		published time.Time
		want      float64 // hand-computed: (likes-1) / (hours+2)^1.5
	}{
		{name: "80 likes 30 minutes ago", likes: 80, published: now.Add(-30 * time.Minute), want: 19.986},        // 79/2.5^1.5 = 79/3.9528
		{name: "100 likes an hour ago", likes: 100, published: now.Add(-time.Hour), want: 19.053},                // 99/3^1.5 = 99/5.1962
		{name: "1000 likes 7 days ago", likes: 1000, published: now.Add(-7 * 24 * time.Hour), want: 0.4507},      // 999/170^1.5 = 999/2216.6
		{name: "one like (the author's own) scores zero", likes: 1, published: now.Add(-3 * time.Hour), want: 0}, // 0/5^1.5
		{name: "no likes scores below zero", likes: 0, published: now, want: -0.3536},                            // -1/2^1.5 = -1/2.8284
		{name: "a publication time in the future counts as now", likes: 11, published: now.Add(time.Hour), want: 3.5355},
		{name: "a brand-new article does not divide by zero", likes: 3, published: now, want: 0.7071}, // 2/2.8284
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.HotScore(tc.likes, domain.HoursSince(tc.published, now))
			if math.Abs(got-tc.want) > 1e-2 {
				t.Fatalf("HotScore(%d, %v before now) = %.4f, want %.4f ± 0.01", tc.likes, now.Sub(tc.published), got, tc.want)
			}
		})
	}
	t.Run("zero likes is negative at any age", func(t *testing.T) {
		t.Parallel()
		for _, h := range []float64{0, 0.5, 1, 24, 168, 10_000} {
			if s := domain.HotScore(0, h); s >= 0 {
				t.Fatalf("HotScore(0, %vh) = %v, want < 0", h, s)
			}
		}
	})
	t.Run("more likes score higher, older articles lower", func(t *testing.T) {
		t.Parallel()
		for _, h := range []float64{0, 1, 10, 100} {
			if a, b := domain.HotScore(10, h), domain.HotScore(11, h); !(b > a) {
				t.Fatalf("at %vh: 11 likes score %v, 10 likes %v", h, b, a)
			}
			if a, b := domain.HotScore(10, h), domain.HotScore(10, h+1); !(b < a) {
				t.Fatalf("10 likes: at %vh %v, an hour later %v", h, a, b)
			}
		}
	})
	t.Run("HoursSince is fractional", func(t *testing.T) {
		t.Parallel()
		if h := domain.HoursSince(now.Add(-90*time.Minute), now); h != 1.5 {
			t.Fatalf("HoursSince(90 minutes) = %v, want 1.5", h)
		}
	})
}

// byScoreThenID is the order the hot list promises: score descending, ties by the higher (newer)
// id first.
func byScoreThenID(a, b domain.Scored) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// topNCase is one random input of the property test.
type topNCase struct {
	size, n int
	ties    bool // scores drawn from a handful of values, so many are equal
}

func randomCandidates(rng *rand.Rand, c topNCase) []domain.Scored {
	ids := rng.Perm(c.size * 3)[:c.size] // unique, shuffled, with gaps
	out := make([]domain.Scored, c.size)
	for i := range out {
		likes := rng.Int64N(1000)
		var score float64
		if c.ties {
			score = float64(rng.IntN(7)) / 4 // 0, 0.25, ..., 1.5: most candidates tie with others
		} else {
			score = domain.HotScore(likes, rng.Float64()*168)
		}
		out[i] = domain.Scored{ID: int64(ids[i]) + 1, Likes: likes, Score: score}
	}
	return out
}

func TestTopN_MatchesFullSort(t *testing.T) {
	t.Parallel()
	seed := *topNSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -topn-seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	// Edge cases first, then many random ones.
	cases := []topNCase{
		{size: 0, n: 1}, {size: 0, n: 150}, {size: 1, n: 1}, {size: 5, n: 150}, {size: 150, n: 150},
		{size: 151, n: 150}, {size: 2000, n: 1}, {size: 2000, n: 150}, {size: 2000, n: 150, ties: true},
		{size: 300, n: 100, ties: true},
	}
	for range 250 {
		cases = append(cases, topNCase{size: rng.IntN(2001), n: 1 + rng.IntN(150), ties: rng.IntN(3) == 0})
	}
	for i, c := range cases {
		in := randomCandidates(rng, c)
		top := domain.NewTopN(c.n)
		for _, s := range in {
			top.Offer(s)
		}
		if want := min(c.n, c.size); top.Len() != want {
			t.Fatalf("case %d %+v: Len = %d, want %d", i, c, top.Len(), want)
		}
		want := slices.Clone(in)
		slices.SortFunc(want, byScoreThenID)
		want = want[:min(c.n, len(want))]
		got := top.Sorted()
		if !slices.Equal(got, want) {
			t.Fatalf("case %d %+v (seed %d):\n got  %v\n want %v", i, c, seed, got, want)
		}
		if top.Len() != 0 {
			t.Fatalf("case %d: Sorted left %d candidates behind", i, top.Len())
		}
	}
}

func TestTopN(t *testing.T) {
	t.Parallel()
	s := func(id int64, score float64) domain.Scored { return domain.Scored{ID: id, Score: score} }
	tests := []struct {
		name  string
		n     int
		offer []domain.Scored
		want  []domain.Scored
	}{
		{name: "keeps nothing when n is zero", n: 0, offer: []domain.Scored{s(1, 1)}, want: []domain.Scored{}},
		{name: "keeps nothing when n is negative", n: -3, offer: []domain.Scored{s(1, 1)}, want: []domain.Scored{}},
		{name: "empty input gives an empty list", n: 3, want: []domain.Scored{}},
		{name: "a newcomer replaces the weakest", n: 2, offer: []domain.Scored{s(1, 1), s(2, 2), s(3, 3)}, want: []domain.Scored{s(3, 3), s(2, 2)}},
		{name: "a newcomer no better than the weakest is dropped", n: 2, offer: []domain.Scored{s(3, 3), s(2, 2), s(1, 1)}, want: []domain.Scored{s(3, 3), s(2, 2)}},
		{name: "equal scores: the higher id wins", n: 2, offer: []domain.Scored{s(5, 1), s(9, 1), s(7, 1)}, want: []domain.Scored{s(9, 1), s(7, 1)}},
		{name: "negative scores rank below zero", n: 3, offer: []domain.Scored{s(1, -0.3), s(2, 0), s(3, -0.1)}, want: []domain.Scored{s(2, 0), s(3, -0.1), s(1, -0.3)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			top := domain.NewTopN(tc.n)
			for _, c := range tc.offer {
				top.Offer(c)
			}
			if got := top.Sorted(); !slices.Equal(got, tc.want) {
				t.Fatalf("Sorted = %v, want %v", got, tc.want)
			}
		})
	}
}
