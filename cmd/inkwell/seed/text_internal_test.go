package seed

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

func TestSeedWordLists(t *testing.T) {
	t.Parallel()
	for name, words := range map[string][]string{"english": seedWords, "chinese": seedChineseWords, "japanese": seedJapaneseWords} {
		seen := map[string]bool{}
		for _, w := range words {
			if seen[w] {
				t.Errorf("%s list: %q twice", name, w)
			}
			seen[w] = true
		}
	}
	if len(seedWords) < 2000 || len(seedWords) > 1<<16 {
		t.Errorf("%d English words, want a few thousand (ranks are uint16)", len(seedWords))
	}
	for _, w := range seedWords {
		if strings.ToLower(w) != w || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			t.Errorf("English word %q is not lower-case a–z", w)
		}
	}
}

// The English text is Zipf-shaped: the commonest word is about as frequent as the exponent says
// relative to the 10th and the 100th, every rank is drawn, and rare words show up about once in
// seedRareEvery words.
func TestSeedTextZipf(t *testing.T) {
	t.Parallel()
	g := newSeedText(rand.New(rand.NewPCG(1, 2)))
	counts := map[string]int{}
	total, rare := 0, 0
	known := map[string]bool{}
	for _, w := range seedWords {
		known[w] = true
	}
	for range 20_000 {
		for _, w := range strings.Fields(g.english(100, false)) {
			w = strings.ToLower(w)
			counts[w]++
			total++
			if !known[w] {
				rare++
			}
		}
	}
	ratio := func(a, b int) float64 { return float64(counts[seedWords[a]]) / float64(counts[seedWords[b]]) }
	// Zipf with v=1: p(rank k) ∝ (1+k)^-s.
	for _, c := range []struct{ a, b int }{{0, 9}, {0, 99}, {9, 99}} {
		want := math.Pow(float64(1+c.b)/float64(1+c.a), seedZipfS)
		if got := ratio(c.a, c.b); got < want*0.8 || got > want*1.25 {
			t.Errorf("count(rank %d)/count(rank %d) = %.2f, want about %.2f", c.a, c.b, got, want)
		}
	}
	if seedWords[0] != "the" || counts["the"] < total/20 {
		t.Errorf("the commonest word %q has %d of %d words", seedWords[0], counts[seedWords[0]], total)
	}
	missing := 0
	for _, w := range seedWords {
		if counts[w] == 0 {
			missing++
		}
	}
	if missing > len(seedWords)/50 {
		t.Errorf("%d of %d words never drawn in %d", missing, len(seedWords), total)
	}
	if want := total / seedRareEvery; rare < want*8/10 || rare > want*12/10 {
		t.Errorf("%d rare words of %d, want about %d", rare, total, want)
	}
}

func TestSeedTextShape(t *testing.T) {
	t.Parallel()
	g := newSeedText(rand.New(rand.NewPCG(3, 4)))
	const n = 20_000
	cjk := 0
	for range n {
		title, desc, body, isCJK := g.article()
		if isCJK {
			cjk++
			for _, s := range []string{title, desc, body} {
				if strings.ContainsRune(s, ' ') || !strings.ContainsFunc(s, func(r rune) bool { return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) }) {
					t.Fatalf("CJK article text %q has spaces or no CJK", s)
				}
			}
			continue
		}
		for _, c := range []struct {
			s      string
			lo, hi int
		}{{title, 3, 8}, {desc, 8, 15}, {body, 60, 200}} {
			if k := len(strings.Fields(c.s)); k < c.lo || k > c.hi {
				t.Fatalf("%d words in %q, want %d–%d", k, c.s, c.lo, c.hi)
			}
		}
		if title[0] < 'A' || title[0] > 'Z' || !strings.HasSuffix(body, ".") || strings.HasSuffix(title, ".") {
			t.Fatalf("title %q or body …%q not shaped as a title and sentences", title, body[len(body)-10:])
		}
	}
	if pct := float64(cjk) * 100 / n; pct < seedCJKPercent-1 || pct > seedCJKPercent+1 {
		t.Errorf("%.1f%% CJK articles, want about %d%%", pct, seedCJKPercent)
	}
	// The reused buffer never leaks into an earlier string.
	a, _, _, _ := g.article()
	before := strings.Clone(a)
	g.article()
	if a != before {
		t.Error("an article's title changed when the next article was written")
	}
}
