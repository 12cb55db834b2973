package seed

import (
	"math/rand/v2"
	"sync"
)

// The seeded text's shape: word counts per field, the Zipf exponent of the English words (close to
// natural language's 1), how often a word is a rare one, and the share of CJK articles.
const (
	seedTitleWords = 3 // to seedTitleWords+5
	seedDescWords  = 8 // to seedDescWords+7
	seedBodyWords  = 60
	seedBodyExtra  = 140 // bodies have seedBodyWords to seedBodyWords+seedBodyExtra words
	seedZipfS      = 1.07
	seedRankTable  = 1 << 20 // Zipf-sampled ranks a word is drawn from (one lookup per word)
	seedRareEvery  = 256     // about one word in this many is a rare one
	seedCJKPercent = 5
)

// seedRanks is a large sample of word ranks from math/rand/v2's Zipf distribution over
// seedWords, drawn once (a fixed seed, so every run's text has the same word frequencies). Drawing
// a word is then one cheap random index into it, instead of a Zipf draw (exp and log) per word.
var seedRanks = sync.OnceValue(func() []uint16 {
	z := rand.NewZipf(rand.New(rand.NewPCG(17, 17)), seedZipfS, 1, uint64(len(seedWords)-1))
	ranks := make([]uint16, seedRankTable)
	for i := range ranks {
		ranks[i] = uint16(z.Uint64())
	}
	return ranks
})

// seedSyllables make the rare words: three syllables, 27,000 words, each in about 20 articles of
// a million, so a search for one finds a handful (the long tail of real text).
var seedSyllables = []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ba", "de", "fo", "gu", "ha",
	"ji", "ko", "la", "mo", "nu", "pa", "qe", "ri", "su", "te", "wo", "xa", "yu", "zo", "bre", "cla", "dri"}

// seedText writes the seeded articles' text: English sentences of words drawn Zipf-distributed
// from seedWords, a rare made-up word now and then, and about 5% of articles in Chinese or
// Japanese. It reuses one buffer; one seedText per goroutine.
type seedText struct {
	rng   *rand.Rand
	ranks []uint16
	buf   []byte
}

func newSeedText(rng *rand.Rand) *seedText {
	return &seedText{rng: rng, ranks: seedRanks(), buf: make([]byte, 0, 4096)}
}

// article returns a title, a description and a body, and whether they are CJK.
func (g *seedText) article() (title, description, body string, cjk bool) {
	if g.rng.IntN(100) < seedCJKPercent {
		words := seedChineseWords
		if g.rng.IntN(10) < 3 {
			words = seedJapaneseWords
		}
		return g.cjk(words, seedTitleWords+g.rng.IntN(6), false), g.cjk(words, seedDescWords+g.rng.IntN(8), true),
			g.cjk(words, seedBodyWords+g.rng.IntN(seedBodyExtra+1), true), true
	}
	return g.english(seedTitleWords+g.rng.IntN(6), false), g.english(seedDescWords+g.rng.IntN(8), true),
		g.english(seedBodyWords+g.rng.IntN(seedBodyExtra+1), true), false
}

// word is one English word: a rare one about once in seedRareEvery, else a Zipf-ranked one.
func (g *seedText) word() string {
	if g.rng.IntN(seedRareEvery) == 0 {
		n := len(seedSyllables)
		i := g.rng.IntN(n * n * n)
		return seedSyllables[i%n] + seedSyllables[i/n%n] + seedSyllables[i/(n*n)]
	}
	return seedWords[g.ranks[g.rng.IntN(len(g.ranks))]]
}

// english is n words: sentences of 6–17 words, each capitalized and ended by a full stop, when
// sentences is set; a capitalized phrase (a title) otherwise.
func (g *seedText) english(n int, sentences bool) string {
	b := g.buf[:0]
	left := 0 // words left in the sentence
	for i := range n {
		start := left == 0
		if start {
			left = 6 + g.rng.IntN(12)
			if i > 0 {
				b = append(b, ". "...)
			}
		} else {
			b = append(b, ' ')
		}
		at := len(b)
		b = append(b, g.word()...)
		if start && b[at] >= 'a' && b[at] <= 'z' {
			b[at] -= 'a' - 'A'
		}
		left--
		if !sentences {
			left = n // one phrase
		}
	}
	if sentences {
		b = append(b, '.')
	}
	g.buf = b
	return string(b)
}

// cjk is n words of words, uniformly drawn, with no spaces: a comma every few words and a full
// stop at the end of each sentence when sentences is set.
func (g *seedText) cjk(words []string, n int, sentences bool) string {
	b := g.buf[:0]
	left := 4 + g.rng.IntN(8)
	for i := range n {
		b = append(b, words[g.rng.IntN(len(words))]...)
		if left--; sentences && left == 0 && i < n-1 {
			if g.rng.IntN(3) == 0 {
				b = append(b, "。"...)
			} else {
				b = append(b, "，"...)
			}
			left = 4 + g.rng.IntN(8)
		}
	}
	if sentences {
		b = append(b, "。"...)
	}
	g.buf = b
	return string(b)
}
