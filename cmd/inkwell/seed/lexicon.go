package seed

import (
	"context"
	"fmt"
	"slices"

	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// seedLexiconCounter counts, while the seed writes its English articles, in how many articles each
// word occurs, the way the lexicon pass would count them from the database: the 'simple'
// configuration's words (lower-cased letter runs; the seed writes no digits, hyphens or
// apostrophes), 3–32 letters (queries/search_words.sql, SearchWordsApplyChanges). CJK articles add no
// lexicon words, and the seed writes no Latin letters into them. It runs for every seeded word,
// so it allocates only for a word it has not seen before.
type seedLexiconCounter struct {
	counts map[string]*seedWordCount
	doc    int // the article being counted
	buf    []byte
}

type seedWordCount struct {
	ndoc    int64
	lastDoc int // the article it was last counted for
}

func newSeedLexicon() *seedLexiconCounter {
	return &seedLexiconCounter{counts: map[string]*seedWordCount{}}
}

// add counts one article's fields.
func (c *seedLexiconCounter) add(fields ...string) {
	c.doc++
	for _, f := range fields {
		for i := 0; i < len(f); {
			if !isASCIILetter(f[i]) {
				i++
				continue
			}
			j := i
			c.buf = c.buf[:0]
			for j < len(f) && isASCIILetter(f[j]) {
				c.buf = append(c.buf, f[j]|0x20) // lower case
				j++
			}
			if n := j - i; n >= search.LexiconMinRunes && n <= search.LexiconMaxRunes {
				w := c.counts[string(c.buf)]
				if w == nil {
					w = &seedWordCount{}
					c.counts[string(c.buf)] = w
				}
				if w.lastDoc != c.doc {
					w.lastDoc = c.doc
					w.ndoc++
				}
			}
			i = j
		}
	}
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// words returns the counted words in order and their article counts.
func (c *seedLexiconCounter) words() ([]string, []int64) {
	words := make([]string, 0, len(c.counts))
	for w := range c.counts {
		words = append(words, w)
	}
	slices.Sort(words)
	ndocs := make([]int64, len(words))
	for i, w := range words {
		ndocs[i] = c.counts[w].ndoc
	}
	return words, ndocs
}

// seedLexicon adds the words the seed counted to the "did you mean" lexicon
// (search.Lexicon.FoldCounted); moveStaged inserted the articles without change rows.
func (s *Seeder) seedLexicon(ctx context.Context, counted *seedLexiconCounter, progress func(string, int, int)) error {
	words, ndocs := counted.words()
	if _, err := search.NewLexicon(pg.SessionPool{Pool: s.pool}, s.q).FoldCounted(ctx, words, ndocs); err != nil {
		return fmt.Errorf("seed lexicon: %w", err)
	}
	progress("lexicon", counted.doc, counted.doc)
	return nil
}
