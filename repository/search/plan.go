package search

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/inkwell-dev/inkwell/dao"
)

// A search's candidates are the newest domain.SearchDepth matches of its query. Reading every match
// to find the newest costs as much as the query is common (tens of thousands of rows for an
// everyday word at a million articles), so a search asks the GIN index for the matches of one
// window of publication places at a time, newest first (articles_search_window_idx holds each
// article's window number at three sizes), and stops when it has enough. The plan picks the window
// size from an estimate of how many articles match: windows that hold a sixteenth of the depth or
// more, so a handful of probes fill it; a query too rare for even the largest windows reads all its
// matches at once, which are few. The estimate only steers the cost: every plan finds the same
// candidates (the windows that run out hand over to reading the rest of the history).
const (
	// searchWindowShifts are the window sizes the index holds, as shifts of search_seq: windows of
	// 1,024, 8,192 and 65,536 places (migration 00024).
	searchMinShift = 10
	searchMidShift = 13
	searchMaxShift = 16
	// searchWindowFill is the least a window should be expected to hold, as a fraction of the depth.
	searchWindowFill = 1.0 / 16
	// searchProbeCost and searchRowCost weigh a window probe against reading one matching row (their
	// ratio, measured on a 2-core machine: a probe is an index scan's setup and a few pages of
	// posting lists, a row a heap page and a rank).
	searchProbeCost = 15.0
	searchRowCost   = 1.0
	// searchProbeSlack widens the walk past the estimate: it may be off by this factor before the
	// walk hands over to reading the rest of the history.
	searchProbeSlack = 4
	// searchUnknownShare is the share of articles a CJK run is assumed to match (the lexicon keeps
	// no CJK words).
	searchUnknownShare = 0.01
)

// searchPlan is how one search collects its candidates: windows of 1<<shift places from the
// window holding snapshotSeq down to bottom (shift 0: every match at once).
type searchPlan struct {
	shift         int
	top, bottom   int32
	snapshotSeq   int64
	expectMatches float64 // estimated matches in the whole history (for tests and tuning)
}

// wordEstimate is how common a word is (SearchWordsEstimate): a stop word (dropped by the query),
// or the articles the lexicon counted with its lexeme (-1: none). Its lexeme says which words of
// a hit's text it matches (snippets).
type wordEstimate struct {
	stop   bool
	ndoc   int64
	lexeme string
}

// planSearch chooses the plan for a query of words (domain.SearchTerms.Words) and cjk runs with the
// optional filters, given the counts ArticleSearchSnapshot read and the words' estimates, for depth
// candidates.
func planSearch(words string, cjk int, stats dao.ArticleSearchSnapshotRow, known map[string]wordEstimate, tag bool, author bool, depth int) searchPlan {
	p := searchPlan{snapshotSeq: stats.SnapshotSeq}
	published := float64(max(stats.Published, 1))
	share := wordsShare(words, known, published) * math.Pow(searchUnknownShare, float64(cjk))
	if tag {
		share *= float64(stats.TagPublished) / published
	}
	if author {
		share *= float64(stats.AuthorPublished) / published
	}
	share = min(share, 1)
	p.expectMatches = share * published
	places := float64(max(stats.SnapshotSeq, 1))
	readAll := p.expectMatches * searchRowCost
	for _, shift := range []int{searchMinShift, searchMidShift, searchMaxShift} {
		perWindow := share * float64(int64(1)<<shift)
		if perWindow < float64(depth)*searchWindowFill {
			continue
		}
		windows := math.Ceil(float64(depth) / perWindow)
		walk := windows*searchProbeCost + float64(depth)*searchRowCost
		if walk >= readAll {
			break // the matches are fewer than the windows would cost: read them all
		}
		p.shift = shift
		p.top = int32(stats.SnapshotSeq >> shift)
		p.bottom = max(p.top-int32(windows*searchProbeSlack), 0)
		return p
	}
	// Rare: at most a few windows' worth of matches in all. The largest windows still pay when the
	// history is long (many windows) but the matches are not few.
	if windows := places / float64(int64(1)<<searchMaxShift); p.expectMatches > float64(depth) &&
		windows*searchProbeCost+float64(depth)*searchRowCost < readAll {
		p.shift = searchMaxShift
		p.top = int32(stats.SnapshotSeq >> searchMaxShift)
		p.bottom = 0
	}
	return p
}

// wordsShare estimates the share of published articles the words part of a query matches, from
// the lexicon's article counts: the product of its words' shares (words are assumed independent;
// an underestimate only makes the walk hand over to reading all matches later), or for a query
// with "or" the sum. Excluded words (-word) and stop words do not narrow it; a word too short for
// the lexicon (under 3 letters) is taken to be common, any other word it does not know (new, or
// misspelt) to be rare. No words (a CJK-only query): 1.
func wordsShare(words string, known map[string]wordEstimate, published float64) float64 {
	and, or, any := 1.0, 0.0, false
	hasOr := false
	for _, t := range searchWordTokens(words) {
		if t.word == "or" && !t.negated {
			hasOr = true
			continue
		}
		e := known[t.word]
		if t.negated || e.stop || (e.ndoc < 0 && len([]rune(t.word)) < LexiconMinRunes) {
			continue
		}
		s := min(float64(max(e.ndoc, 1))/published, 1)
		and *= s
		or += s
		any = true
	}
	switch {
	case !any:
		return 1
	case hasOr:
		return min(or, 1)
	default:
		return and
	}
}

// searchWordCache remembers what PostgreSQL said about words: how common they are
// (SearchWordsEstimate, for planning searches) or their lexemes (SearchWordsLexemes, for snippets).
// Neither changes quickly (the lexicon grows slowly, a word's lexeme never changes), and the words
// of queries and texts repeat, so most searches ask PostgreSQL nothing about words. Each instance
// keeps its own; what it holds only steers a search's cost and its snippets' marks, never what a
// search finds.
type searchWordCache[V any] struct {
	mu      sync.Mutex
	entries map[string]cachedWord[V]
	ttl     time.Duration
	max     int
	now     func() time.Time
}

type cachedWord[V any] struct {
	value V
	until time.Time
}

func newSearchWordCache[V any]() *searchWordCache[V] {
	return &searchWordCache[V]{entries: map[string]cachedWord[V]{}, ttl: 10 * time.Minute, max: 50_000, now: time.Now}
}

// get returns the values of words, asking load for the ones it does not hold.
func (c *searchWordCache[V]) get(ctx context.Context, words []string, load func(context.Context, []string) (map[string]V, error)) (map[string]V, error) {
	out := make(map[string]V, len(words))
	var missing []string
	now := c.now()
	c.mu.Lock()
	for _, w := range words {
		if e, ok := c.entries[w]; ok && now.Before(e.until) {
			out[w] = e.value
		} else {
			missing = append(missing, w)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	loaded, err := load(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries)+len(loaded) > c.max {
		clear(c.entries) // a bound, not an LRU: refilling is a query per new word
	}
	for w, e := range loaded {
		out[w] = e
		c.entries[w] = cachedWord[V]{value: e, until: now.Add(c.ttl)}
	}
	return out, nil
}

// searchWordToken is one word of a query's words part, lower-cased, and whether a '-' excludes it.
type searchWordToken struct {
	word    string
	negated bool
}

// searchWordTokens splits the words part of a query the way the lexicon counts words: runs of
// letters and digits, lower-cased. A '-' right before a word (websearch_to_tsquery's exclusion)
// marks it negated.
func searchWordTokens(words string) []searchWordToken {
	var out []searchWordToken
	rs := []rune(words)
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
			j++
		}
		out = append(out, searchWordToken{word: strings.ToLower(string(rs[i:j])), negated: i > 0 && rs[i-1] == '-'})
		i = j
	}
	return out
}

// searchPlanWords are the distinct words ArticleSearchPlan is asked about.
func searchPlanWords(words string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range searchWordTokens(words) {
		if !seen[t.word] {
			seen[t.word] = true
			out = append(out, t.word)
		}
	}
	return out
}
