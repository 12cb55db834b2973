package domain

import (
	"iter"
	"strings"
	"unicode"
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
	return strings.Map(func(r rune) rune {
		if r == SnippetStart || r == SnippetStop {
			return -1
		}
		return r
	}, description+"\n"+body)
}

// SnippetWords are the words of text in order, lower-cased, as Snippet splits them: runs of
// letters and digits. A caller learns from them which words match before it calls Snippet.
func SnippetWords(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for s := range wordSpans(text) {
			if !yield(strings.ToLower(text[s.from:s.to])) {
				return
			}
		}
	}
}

// Snippet returns up to two fragments of text around the words match reports (given a word
// lower-cased), each match marked with SnippetStart and SnippetStop. The text between words is
// kept as it is (the web layer escapes it).
func Snippet(text string, match func(word string) bool) string {
	var spans []wordSpan
	var matched []int // indexes into spans
	type fragment struct{ from, to int }
	var frags []fragment
	for s := range wordSpans(text) {
		spans = append(spans, s)
		if !match(strings.ToLower(text[s.from:s.to])) {
			if len(frags) == snippetFragments && s.index+1 >= frags[len(frags)-1].to {
				break // every fragment is whole
			}
			continue
		}
		matched = append(matched, s.index)
		if len(frags) > 0 && s.index < frags[len(frags)-1].to {
			continue // inside the last fragment
		}
		if len(frags) == snippetFragments {
			break
		}
		from := s.index - snippetLead
		if len(frags) > 0 {
			from = max(from, frags[len(frags)-1].to)
		}
		frags = append(frags, fragment{max(from, 0), max(from, 0) + snippetWords})
	}
	if len(spans) == 0 {
		return ""
	}
	if len(frags) == 0 {
		return markWords(text, spans[:min(len(spans), snippetWords)], nil)
	}
	parts := make([]string, len(frags))
	for i, f := range frags {
		parts[i] = markWords(text, spans[f.from:min(f.to, len(spans))], matched)
	}
	return strings.Join(parts, snippetDelimiter)
}

// markWords is the text from the first of spans to the end of the last, the words at the
// matched indexes (of the whole text's spans) marked.
func markWords(text string, spans []wordSpan, matched []int) string {
	var b strings.Builder
	at := spans[0].from
	for _, s := range spans {
		if !isMatched(s.index, matched) {
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

func isMatched(i int, matched []int) bool {
	for _, m := range matched {
		if m == i {
			return true
		}
	}
	return false
}

// wordSpan is one word of a text: its byte range and its index among the text's words.
type wordSpan struct {
	from, to, index int
}

// wordSpans yields the runs of letters and digits of text.
func wordSpans(text string) iter.Seq[wordSpan] {
	return func(yield func(wordSpan) bool) {
		index, start := 0, -1
		for i, r := range text {
			word := unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case word && start < 0:
				start = i
			case !word && start >= 0:
				if !yield(wordSpan{start, i, index}) {
					return
				}
				index, start = index+1, -1
			}
		}
		if start >= 0 {
			yield(wordSpan{start, len(text), index})
		}
	}
}
