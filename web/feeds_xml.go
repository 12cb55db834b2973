package web

import (
	"encoding/xml"
	"net/http"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// The Atom 1.0 (RFC 4287) and RSS 2.0 documents, written with encoding/xml: every element the
// formats require (Atom: id, title, updated, author, links alternate and self; RSS: title, link,
// description, guid), nothing a library would add.

type atomFeedXML struct {
	XMLName xml.Name       `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string         `xml:"id"`
	Title   string         `xml:"title"`
	Updated string         `xml:"updated"`
	Links   []atomLinkXML  `xml:"link"`
	Entries []atomEntryXML `xml:"entry"`
}

type atomLinkXML struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPersonXML struct {
	Name string `xml:"name"`
}

type atomTextXML struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

type atomEntryXML struct {
	ID         string         `xml:"id"`
	Title      string         `xml:"title"`
	Updated    string         `xml:"updated"`
	Published  string         `xml:"published,omitempty"`
	Author     atomPersonXML  `xml:"author"`
	Link       atomLinkXML    `xml:"link"`
	Summary    *atomTextXML   `xml:"summary,omitempty"`
	Content    atomTextXML    `xml:"content"`
	Categories []atomCategory `xml:"category"`
}

type atomCategory struct {
	Term string `xml:"term,attr"`
}

func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// atomOf is feed as an Atom document whose own URL is self. The feed's id is its URL; an entry's
// id is the article's public link (stable: slugs never change).
func atomOf(feed domain.Feed, self string) any {
	out := atomFeedXML{
		ID: self, Title: feed.Title, Updated: atomTime(feedUpdated(feed)),
		Links: []atomLinkXML{{Rel: "self", Type: "application/atom+xml", Href: self}, {Rel: "alternate", Type: "text/html", Href: feed.Link}},
		// No feed-level author: RFC 4287 needs one only when an entry lacks its own, and every
		// entry names its article's author.
		Entries: make([]atomEntryXML, len(feed.Entries)),
	}
	for i, e := range feed.Entries {
		a := e.Article
		entry := atomEntryXML{
			ID: e.Link, Title: a.Title, Updated: atomTime(a.UpdatedAt), Author: atomPersonXML{Name: e.Author},
			Link:    atomLinkXML{Rel: "alternate", Type: "text/html", Href: e.Link},
			Content: atomTextXML{Type: "html", Body: a.BodyHTML},
		}
		if a.PublishedAt != nil {
			entry.Published = atomTime(*a.PublishedAt)
		}
		if a.Description != "" {
			entry.Summary = &atomTextXML{Type: "text", Body: a.Description}
		}
		for _, t := range a.Tags {
			entry.Categories = append(entry.Categories, atomCategory{Term: t})
		}
		out.Entries[i] = entry
	}
	return out
}

type rssXML struct {
	XMLName xml.Name      `xml:"rss"`
	Version string        `xml:"version,attr"`
	AtomNS  string        `xml:"xmlns:atom,attr"`
	DCNS    string        `xml:"xmlns:dc,attr"`
	Channel rssChannelXML `xml:"channel"`
}

type rssChannelXML struct {
	Title         string       `xml:"title"`
	Link          string       `xml:"link"`
	Description   string       `xml:"description"`
	LastBuildDate string       `xml:"lastBuildDate"`
	Self          rssSelfXML   `xml:"atom:link"`
	Items         []rssItemXML `xml:"item"`
}

type rssSelfXML struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr"`
	Href string `xml:"href,attr"`
}

type rssGUIDXML struct {
	IsPermaLink string `xml:"isPermaLink,attr"`
	Value       string `xml:",chardata"`
}

type rssItemXML struct {
	Title       string     `xml:"title"`
	Link        string     `xml:"link"`
	Description string     `xml:"description"`
	Creator     string     `xml:"dc:creator"`
	GUID        rssGUIDXML `xml:"guid"`
	PubDate     string     `xml:"pubDate,omitempty"`
	Categories  []string   `xml:"category"`
}

// rssOf is feed as an RSS 2.0 document whose own URL is self. An item's description is its body's
// HTML (escaped, as RSS carries it); its author is dc:creator (RSS's author wants an email).
func rssOf(feed domain.Feed, self string) any {
	out := rssXML{
		Version: "2.0", AtomNS: "http://www.w3.org/2005/Atom", DCNS: "http://purl.org/dc/elements/1.1/",
		Channel: rssChannelXML{
			Title: feed.Title, Link: feed.Link, Description: feed.Title, LastBuildDate: feedUpdated(feed).UTC().Format(http.TimeFormat),
			Self:  rssSelfXML{Rel: "self", Type: "application/rss+xml", Href: self},
			Items: make([]rssItemXML, len(feed.Entries)),
		},
	}
	for i, e := range feed.Entries {
		a := e.Article
		item := rssItemXML{
			Title: a.Title, Link: e.Link, Description: a.BodyHTML, Creator: e.Author,
			GUID: rssGUIDXML{IsPermaLink: "true", Value: e.Link}, Categories: a.Tags,
		}
		if a.PublishedAt != nil {
			item.PubDate = a.PublishedAt.UTC().Format(time.RFC1123Z)
		}
		out.Channel.Items[i] = item
	}
	return out
}

// feedUpdated is the feed's last change as its entries show it; an empty feed has none, and says
// the epoch.
func feedUpdated(feed domain.Feed) time.Time {
	if feed.Updated.IsZero() {
		return time.Unix(0, 0)
	}
	return feed.Updated
}
