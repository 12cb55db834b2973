package domain

import (
	"iter"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A snippet is at most snippetFragments pieces of the text, each about snippetWords words long,
// starting a few words before a match (snippetLead), joined by snippetDelimiter. Text without a
// match (the hit matched in its title, or only by a CJK run MarkCJK did not find) gives its
// opening words.
const (
	snippetWords     = 30
	snippetLead      = 6
	snippetFragments = 2
	snippetDelimiter = " … "
)

// SnippetText is the text snippets are cut from: an article's description and the start of its
// body, with the snippet marks removed, so every mark in a snippet is one Snippet put there.
func SnippetText(description, body string) string {
	text := description + "\n" + body
	if !strings.ContainsAny(text, string([]rune{SnippetStart, SnippetStop})) {
		return text
	}
	return strings.Map(func(r rune) rune {
		if r == SnippetStart || r == SnippetStop {
			return -1
		}
		return r
	}, text)
}

// SnippetWords are the words of text in order, as Snippet splits them: runs of letters and
// digits, as written. A caller learns from them which words match before it calls Snippet.
func SnippetWords(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for s := range wordSpans(text) {
			if !yield(text[s.from:s.to]) {
				return
			}
		}
	}
}

// Snippet returns up to two fragments of text around the words match reports (given a word as
// written), each match marked with SnippetStart and SnippetStop. The text between words is kept
// as it is (the web layer escapes it).
func Snippet(text string, match func(word string) bool) string {
	// First the fragments (word indexes) and the matches, then the fragments' words: holding every
	// word of a long text would cost more than reading it twice.
	type fragment struct{ from, to int }
	var frags []fragment
	var matched []int
	words := 0
	for s := range wordSpans(text) {
		words++
		if !match(text[s.from:s.to]) {
			if len(frags) == snippetFragments && s.index+1 >= frags[len(frags)-1].to {
				break // every fragment is whole
			}
			continue
		}
		if len(frags) > 0 && s.index < frags[len(frags)-1].to {
			matched = append(matched, s.index) // inside the last fragment
			continue
		}
		if len(frags) == snippetFragments {
			break
		}
		matched = append(matched, s.index)
		from := max(s.index-snippetLead, 0)
		if len(frags) > 0 {
			from = max(from, frags[len(frags)-1].to)
		}
		frags = append(frags, fragment{from, from + snippetWords})
	}
	if words == 0 {
		return ""
	}
	if len(frags) == 0 {
		frags = append(frags, fragment{0, snippetWords})
	}
	spans := make([][]wordSpan, len(frags))
	for i := range spans {
		spans[i] = make([]wordSpan, 0, snippetWords)
	}
	for s := range wordSpans(text) {
		i := slices.IndexFunc(frags, func(f fragment) bool { return f.from <= s.index && s.index < f.to })
		if i >= 0 {
			spans[i] = append(spans[i], s)
		} else if s.index >= frags[len(frags)-1].to {
			break
		}
	}
	parts := make([]string, len(frags))
	for i := range frags {
		parts[i] = markWords(text, spans[i], matched)
	}
	return strings.Join(parts, snippetDelimiter)
}

// markWords is the text from the first of spans to the end of the last, the words at the
// matched indexes (of the whole text's spans) marked.
func markWords(text string, spans []wordSpan, matched []int) string {
	var b strings.Builder
	at := spans[0].from
	for _, s := range spans {
		if !slices.Contains(matched, s.index) {
			continue
		}
		b.WriteString(text[at:s.from])
		b.WriteRune(SnippetStart)
		b.WriteString(text[s.from:s.to])
		b.WriteRune(SnippetStop)
		at = s.to
	}
	b.WriteString(text[at:spans[len(spans)-1].to])
	return b.String()
}

// wordSpan is one word of a text: its byte range and its index among the text's words.
type wordSpan struct {
	from, to, index int
}

// wordSpans yields the runs of letters and digits of text.
func wordSpans(text string) iter.Seq[wordSpan] {
	return func(yield func(wordSpan) bool) {
		index, start := 0, -1
		for i := 0; i < len(text); {
			var word bool
			n := 1
			if c := text[i]; c < utf8.RuneSelf {
				word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
			} else {
				var r rune
				r, n = utf8.DecodeRuneInString(text[i:])
				word = unicode.IsLetter(r) || unicode.IsDigit(r)
			}
			switch {
			case word && start < 0:
				start = i
			case !word && start >= 0:
				if !yield(wordSpan{start, i, index}) {
					return
				}
				index, start = index+1, -1
			}
			i += n
		}
		if start >= 0 {
			yield(wordSpan{start, len(text), index})
		}
	}
}
