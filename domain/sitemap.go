package domain

import "time"

// SitemapPageSize is how many places in publication order one sitemap page covers, so a page
// holds at most this many article URLs (sitemaps.org allows 50,000). Small enough that a page
// costs the same at a thousand articles and at a million (the scale bench measures both), large
// enough that a million articles need a thousand pages, far below the index's 50,000 entries.
const SitemapPageSize = 1000

// SitemapEntry is one article of a sitemap page: its public link and when it last changed.
type SitemapEntry struct {
	Loc     string
	LastMod time.Time
}

// SitemapPage is one page of article links, oldest publication first.
type SitemapPage struct {
	Entries []SitemapEntry
	LastMod time.Time // the newest of the entries' (zero when the page is empty)
}

// SitemapPageRange is the range of places in publication order page n (1-based) covers:
// [from, until). Places start at 1 (a sequence), so page 1 holds places 1 to 999 and every later
// page SitemapPageSize of them.
func SitemapPageRange(n int) (from, until int64) {
	return int64(n-1) * SitemapPageSize, int64(n) * SitemapPageSize
}

// SitemapPages is how many pages cover the places up to last (0 when nothing is published).
func SitemapPages(last int64) int {
	if last <= 0 {
		return 0
	}
	return int(last/SitemapPageSize) + 1
}
