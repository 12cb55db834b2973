package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// FeedSize is how many articles a feed holds: the newest, as the first page of the list it
// follows (DefaultPageLimit, so the feed reads the page the list endpoints cache).
const FeedSize = DefaultPageLimit

// Feed is a syndication feed of published, visible articles, newest first: the global list, one
// author's or one tag's. Stamp changes whenever anything the feed shows changes (an article, its
// version, its author's name), so a feed's encoding can be kept under it.
type Feed struct {
	Title   string
	Link    string // the public page the feed follows
	Updated time.Time
	Entries []FeedEntry
	Stamp   uint64
}

// FeedEntry is one article of a feed, with its body rendered (Article.BodyHTML) and its public link.
type FeedEntry struct {
	Article Article
	Author  string
	Link    string
}

// FeedName reports whether s can name a feed's author or tag: non-empty, valid UTF-8, no NUL or
// other control character, at most max characters. Anything else names no feed (404), before
// any storage is asked.
func FeedName(s string, max int) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
