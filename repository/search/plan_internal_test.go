package search

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
)

// The plan picks the window size from how common the query is, reads every match when they are
// few, and is steered by the lexicon's counts the way the comments say.
func TestPlanSearch(t *testing.T) {
	t.Parallel()
	const depth = 200
	stats := dao.ArticleSearchSnapshotRow{SnapshotSeq: 1_000_000, Published: 1_000_000, TagPublished: 50_000, AuthorPublished: 1_000}
	known := map[string]wordEstimate{
		"common": {ndoc: 400_000}, // 40%: windows of 1,024 hold 400
		"often":  {ndoc: 30_000},  // 3%: 30 per 1,024, 245 per 8,192
		"mid":    {ndoc: 9_000},   // 0.9%: 9 per 1,024, 74 per 8,192
		"rarish": {ndoc: 1_000},   // 0.1%: 8 per 8,192, 66 per 65,536
		"rare":   {ndoc: 20},
		"the":    {stop: true},
		"go":     {ndoc: -1}, // too short for the lexicon: assumed common
	}
	for _, tc := range []struct {
		name, words string
		cjk         int
		tag, author bool
		shift       int
		matches     float64 // expected matches, ±1
	}{
		{"an everyday word walks the smallest windows", "common", 0, false, false, searchMinShift, 400_000},
		{"a frequent word: small windows, 7 of them", "often", 0, false, false, searchMinShift, 30_000},
		{"a middling word: windows of 8,192", "mid", 0, false, false, searchMidShift, 9_000},
		{"a rarer word: windows of 65,536", "rarish", 0, false, false, searchMaxShift, 1_000},
		{"a rare word reads its matches", "rare", 0, false, false, 0, 20},
		{"two middling words are rare together", "mid often", 0, false, false, 0, 270},
		{"or adds the words up", "mid or often", 0, false, false, searchMinShift, 39_000},
		{"an excluded word does not narrow", "mid -often", 0, false, false, searchMidShift, 9_000},
		{"stop words do not narrow", "the common", 0, false, false, searchMinShift, 400_000},
		{"a short word is taken as common", "go mid", 0, false, false, searchMidShift, 9_000},
		{"an unknown word is rare", "zzyzx common", 0, false, false, 0, 0.4},
		{"a tag narrows by its share", "common", 0, true, false, searchMinShift, 20_000},
		{"an author narrows by theirs", "common", 0, false, true, searchMaxShift, 400},
		{"a CJK run counts as a hundredth", "common", 1, false, false, searchMidShift, 4_000},
		{"a CJK run alone", "", 1, false, false, searchMidShift, 10_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := planSearch(tc.words, tc.cjk, stats, known, tc.tag, tc.author, depth)
			if p.shift != tc.shift {
				t.Errorf("shift %d, want %d (expected matches %.1f)", p.shift, tc.shift, p.expectMatches)
			}
			if math.Abs(p.expectMatches-tc.matches) > 1 {
				t.Errorf("expected matches %.1f, want %.1f", p.expectMatches, tc.matches)
			}
			if p.shift != 0 {
				if want := int32(stats.SnapshotSeq >> p.shift); p.top != want || p.bottom < 0 || p.bottom > p.top {
					t.Errorf("windows %d..%d, want from %d down", p.top, p.bottom, want)
				}
			}
		})
	}

	t.Run("a walk allows for an estimate off by a few times before handing over", func(t *testing.T) {
		t.Parallel()
		p := planSearch("often", 0, stats, known, false, false, depth)
		// 30 matches a window of 1,024: 7 windows expected, searchProbeSlack times that walked.
		if got, want := p.top-p.bottom, int32(7*searchProbeSlack); got != want {
			t.Errorf("walks %d windows, want %d", got, want)
		}
	})

	t.Run("an empty table reads every match", func(t *testing.T) {
		t.Parallel()
		if p := planSearch("common", 0, dao.ArticleSearchSnapshotRow{}, known, false, false, depth); p.shift != 0 {
			t.Errorf("plan %+v, want every match read", p)
		}
	})
}

func TestSearchWordTokens(t *testing.T) {
	t.Parallel()
	got := searchWordTokens(`"Dragons' eggs" -Fire or ÉCLAIR x-ray`)
	want := []searchWordToken{{"dragons", false}, {"eggs", false}, {"fire", true}, {"or", false}, {"éclair", false}, {"x", false}, {"ray", true}}
	if len(got) != len(want) {
		t.Fatalf("tokens %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d = %v, want %v", i, got[i], want[i])
		}
	}
	if words := searchPlanWords("a A b a"); len(words) != 2 || words[0] != "a" || words[1] != "b" {
		t.Errorf("plan words %v, want [a b]", words)
	}
}

// The word cache answers from memory until an entry's time is up, asks only for what it lacks,
// stays bounded, and passes a failure on without remembering anything.
func TestSearchWordCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newSearchWordCache[wordEstimate]()
	c.now = func() time.Time { return now }
	c.max = 3
	var asked [][]string
	load := func(_ context.Context, words []string) (map[string]wordEstimate, error) {
		asked = append(asked, words)
		out := map[string]wordEstimate{}
		for _, w := range words {
			out[w] = wordEstimate{ndoc: int64(len(w))}
		}
		return out, nil
	}
	ctx := context.Background()
	if got, _ := c.get(ctx, []string{"ab", "abc"}, load); got["abc"].ndoc != 3 || len(asked) != 1 {
		t.Fatalf("first call: %v, asked %v", got, asked)
	}
	if _, _ = c.get(ctx, []string{"abc", "abcd"}, load); len(asked) != 2 || len(asked[1]) != 1 || asked[1][0] != "abcd" {
		t.Fatalf("second call asked %v, want only abcd", asked)
	}
	now = now.Add(c.ttl)
	if _, _ = c.get(ctx, []string{"ab"}, load); len(asked) != 3 {
		t.Fatalf("an expired entry was not asked again: %v", asked)
	}
	if len(c.entries) > c.max {
		t.Fatalf("%d entries, bound %d", len(c.entries), c.max)
	}
	boom := errors.New("down")
	if _, err := c.get(ctx, []string{"new"}, func(context.Context, []string) (map[string]wordEstimate, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want the loader's", err)
	}
	if _, ok := c.entries["new"]; ok {
		t.Fatal("a failed load was remembered")
	}
}
