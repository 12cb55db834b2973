package domain

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Search limits (README "Search").
const (
	// MaxSearchQueryLen bounds q, in characters.
	MaxSearchQueryLen = 256
	// SearchDepth is how many of the newest matches a query ranks: deeper hits are never shown, so
	// a query for the commonest word costs what a query for a rare one does.
	SearchDepth = 200
)

// The boosts of a hit's score (SearchScore): likes add up to about 0.1·ln(likes), freshness up to
// a quarter for an article published just now, fading over two weeks.
const (
	searchLikesBoost     = 0.1
	searchFreshnessBoost = 0.25
	searchFreshnessScale = 14 * 24 * time.Hour
)

// SearchScore is a hit's score: its text rank (ts_rank over the weighted document: title above
// description above body) times a small boost for its likes, 1 + 0.1·ln(1 + likes), and one for
// freshness, 1 + 0.25·e^(−age / 14 days), age taken at the search's snapshot. The boosts order
// hits whose text matches alike; they cannot lift a body match far above a title match.
func SearchScore(rank float64, likes int64, age time.Duration) float64 {
	return rank * (1 + searchLikesBoost*math.Log1p(float64(max(likes, 0)))) *
		(1 + searchFreshnessBoost*math.Exp(-float64(max(age, 0))/float64(searchFreshnessScale)))
}

// SearchTerms is a search query split the way the index is built: Words (everything but CJK,
// for websearch_to_tsquery in the configured language, which accepts any text) and the runs of
// CJK characters, which have no spaces between words and are indexed as overlapping bigrams.
type SearchTerms struct {
	Words string
	CJK   []string
}

// CheckSearchText validates the q of any search (articles, people, tags): not blank, and at most
// MaxSearchQueryLen characters once trimmed, which it returns.
func CheckSearchText(q string) (string, error) {
	q = strings.TrimSpace(q)
	switch {
	case q == "":
		return "", NewValidationError("q", "can't be blank")
	case utf8.RuneCountInString(q) > MaxSearchQueryLen:
		return "", NewValidationError("q", fmt.Sprintf("is too long (maximum is %d characters)", MaxSearchQueryLen))
	}
	return q, nil
}

// ParseSearchQuery validates q (CheckSearchText) and splits it.
func ParseSearchQuery(q string) (SearchTerms, error) {
	q, err := CheckSearchText(q)
	if err != nil {
		return SearchTerms{}, err
	}
	var words, run strings.Builder
	var t SearchTerms
	flush := func() {
		if run.Len() > 0 {
			t.CJK = append(t.CJK, run.String())
			run.Reset()
		}
	}
	for _, r := range q {
		if IsCJK(r) {
			if run.Len() == 0 {
				words.WriteByte(' ') // the words on either side stay apart: "abc缓存def" is abc, def
			}
			run.WriteRune(r)
			continue
		}
		flush()
		words.WriteRune(r)
	}
	flush()
	t.Words = strings.Join(strings.Fields(oneNegation(words.String())), " ")
	return t, nil
}

// oneNegation keeps at most one '-' between two words, the last (the one that negates the next
// word): websearch_to_tsquery nests a NOT for each '-' in a row (with any spaces or punctuation
// between), and 33 of them overflow its parser's stack (XX000 "tsquery stack too small").
func oneNegation(s string) string {
	out := []rune(s)
	dash := -1 // index of a '-' since the last word character
	for i, r := range out {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			dash = -1
		case r == '-':
			if dash >= 0 {
				out[dash] = ' '
			}
			dash = i
		}
	}
	return string(out)
}

// IsCJK reports whether r is one of the characters indexed as bigrams: kana, CJK ideographs
// (with extension A and the compatibility block) and Hangul syllables. It must list the same
// ranges as inkwell_cjk_bigrams (migrations/00021_article_search.sql).
func IsCJK(r rune) bool {
	return (r >= 0x3040 && r <= 0x30ff) || (r >= 0x3400 && r <= 0x4dbf) || (r >= 0x4e00 && r <= 0x9fff) ||
		(r >= 0xac00 && r <= 0xd7af) || (r >= 0xf900 && r <= 0xfaff)
}

// CJKQuery is the tsquery text of the CJK runs, all required: a run of two characters or more is
// the phrase of its bigrams ('缓存' <-> '存击' for 缓存击), one character a prefix of the bigrams
// ('字':*), which finds it anywhere (the index keeps each run's last character too). Empty when
// there are none. CJK characters are never tsquery syntax, so quoting them is all it takes.
func (t SearchTerms) CJKQuery() string {
	parts := make([]string, 0, len(t.CJK))
	for _, run := range t.CJK {
		rs := []rune(run)
		if len(rs) == 1 {
			parts = append(parts, "'"+run+"':*")
			continue
		}
		grams := make([]string, 0, len(rs)-1)
		for i := 0; i+1 < len(rs); i++ {
			grams = append(grams, "'"+string(rs[i:i+2])+"'")
		}
		parts = append(parts, "("+strings.Join(grams, " <-> ")+")")
	}
	return strings.Join(parts, " & ")
}

// Key is the terms in one canonical string (for cache keys).
func (t SearchTerms) Key() string { return t.Words + "\x00" + strings.Join(t.CJK, "\x00") }

// SearchCursor is the position after a page of search results: the snapshot the first page was
// ranked at (its time, for freshness, and the last place in publication order then: later
// publishes are not candidates, so they never push an unseen hit past the depth) and the last
// hit's (score, id), plus the first page's hit count.
type SearchCursor struct {
	Snapshot    time.Time
	SnapshotSeq int64
	Score       float64
	ID          int64
	Total       int64
}

// SearchHit is one found article (a summary, no body) with its score and a snippet of where it
// matched: plain text with SnippetStart and SnippetStop around the matched words.
type SearchHit struct {
	Article Article
	Score   float64
	Snippet string
}

// Snippet marks: Snippet puts them around matched words, MarkCJK around matched CJK runs; they
// are stripped from the text first (SnippetText), so they are never the article's own characters.
const (
	SnippetStart = '\x01'
	SnippetStop  = '\x02'
)

// snippetRunes bounds a CJK snippet: this many characters before the first match, and up to
// snippetRunes*3 in all.
const snippetRunes = 40

// MarkCJK returns a short window of text around the first occurrence of any of runs, with every
// occurrence of a run in the window marked; "" when none occurs.
func MarkCJK(text string, runs []string) string {
	first := -1
	for _, r := range runs {
		if i := strings.Index(text, r); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return ""
	}
	rs := []rune(text)
	at := utf8.RuneCountInString(text[:first])
	from := max(0, at-snippetRunes)
	to := min(len(rs), from+3*snippetRunes)
	window := string(rs[from:to])
	var b strings.Builder
	for i := 0; i < len(window); {
		matched := ""
		for _, r := range runs {
			if len(r) > len(matched) && strings.HasPrefix(window[i:], r) {
				matched = r
			}
		}
		if matched == "" {
			_, n := utf8.DecodeRuneInString(window[i:])
			b.WriteString(window[i : i+n])
			i += n
			continue
		}
		b.WriteRune(SnippetStart)
		b.WriteString(matched)
		b.WriteRune(SnippetStop)
		i += len(matched)
	}
	out := b.String()
	if from > 0 {
		out = "…" + out
	}
	if to < len(rs) {
		out += "…"
	}
	return out
}
